"""Text from the data made safe for the page: class names, point ids, file names, messages.

Everything the page shows that came from a data file, a store or the user (class names, point
ids, data set and file names, error messages that quote them) goes through one of these
before it reaches Streamlit:

* :func:`html_text` for text inside the HTML of ``st.markdown(..., unsafe_allow_html=True)``:
  ``<``, ``>``, ``&`` and both quotes become entities, and since Streamlit still reads that
  text as Markdown, Markdown's marks are escaped too (an image ``![x](url)`` between two of
  our tags would otherwise become an ``<img>``);
* :func:`md_text` for Markdown (``st.markdown``, ``st.caption``, alerts, button labels and
  help texts): Streamlit does not render raw HTML there, but it does render Markdown, so an
  image ``![x](http://...)``, a link, a heading or emphasis in a class name would become page
  elements. Markdown's punctuation is escaped with a backslash and line breaks become spaces,
  so the text shows exactly as written, on one line;
* :func:`plot_text` for plotly strings (legend names, hover texts), which understand a small
  HTML subset (``<b>``, ``<a href>``, ``<span style>``) and decode entities back for display.
"""

from __future__ import annotations

import html
import re

__all__ = ["html_text", "md_text", "plot_text"]

# Markdown punctuation that starts inline syntax anywhere: code, emphasis, links and images,
# raw HTML and autolinks, tables, strikethrough, LaTeX, entities
_MD_ANYWHERE = re.compile(r"([\\`*_\[\]<>!|~$&])")
# the same without what html.escape already turned into entities (and the "&" of those)
_MD_IN_HTML = re.compile(r"([\\`*_\[\]!|~$])")
# ... and what starts a block at the beginning of a line: headings, quotes, lists, rules
_MD_LINE_START = re.compile(r"^(\s*)([#>+\-=]|\d+(?=[.)]))")


def _escape(text: str, marks: re.Pattern) -> str:
    text = marks.sub(r"\\\1", " ".join(str(text).splitlines()))
    m = _MD_LINE_START.match(text)
    if m:
        lead, mark = m.group(1), m.group(2)
        if mark.isdigit():  # "1." or "1)" starts an ordered list: escape the dot
            text = lead + mark + "\\" + text[m.end():]
        else:
            text = lead + "\\" + text[len(lead):]
    return text


def html_text(value) -> str:
    """``str(value)`` as text between the tags of Markdown with ``unsafe_allow_html=True``:
    ``&``, ``<``, ``>``, ``"`` and ``'`` as entities, Markdown's marks as numeric character
    references (``_`` as ``&#95;``), one line.

    References, not backslashes: text inside an HTML block (a line that starts with ``<div``)
    is not read as Markdown, so a backslash there would show (``feature\\_request``), while a
    reference reads as its character both there and in a paragraph, where Markdown takes it
    as literal text and never as a mark. Also safe in an attribute value (no quote survives).
    """
    text = " ".join(html.escape(str(value), quote=True).splitlines())
    text = _MD_IN_HTML.sub(lambda m: f"&#{ord(m.group(1))};", text)
    m = _MD_LINE_START.match(text)  # a heading, quote or list mark at the start
    if m:
        mark = m.group(2)
        at = m.end() if mark.isdigit() else m.start(2)  # "1." : the dot; "#": the mark
        text = text[:at] + f"&#{ord(text[at])};" + text[at + 1:]
    return text


def md_text(value) -> str:
    """``str(value)`` as literal Markdown text: one line, every Markdown mark escaped.

    Examples
    --------
    >>> md_text("![x](http://e/x.png)")
    '\\\\!\\\\[x\\\\](http://e/x.png)'
    >>> md_text("<img src=x>")
    '\\\\<img src=x\\\\>'
    """
    return _escape(str(value), _MD_ANYWHERE)


def plot_text(value) -> str:
    """``str(value)`` for a plotly text (legend name, hover text): tags shown, not applied."""
    return html.escape(str(value), quote=False)
