"""Keyboard shortcuts of the labelling screen (``st.button(..., shortcut=KEY)``).

Streamlit 1.67 accepts one alphanumeric key, a function key or a named key (Enter, Esc, ...),
optionally with modifiers; ``C`` and ``R`` are reserved by Streamlit and punctuation is not
supported (``streamlit.elements.lib.shortcut_utils.normalize_shortcut``).

Class keys are stable while classes are added: classes are taken in their order (new ones at
the end); a class whose name is a single letter or digit gets that key when it is still free
(digits "0".."9" are labelled with their own key), any other class gets the next free key of
``1 2 ... 9 0 a b ...``. Adding a class never changes the key of an earlier one; renaming or
deleting one may change the keys of the classes after it. The same keys press "Change to
<class>" on a labelled point (those buttons replace the class buttons there).

Presses before the page can take them (:data:`KEY_BUFFER_SCRIPT`, installed first on every page
by :func:`install_key_buffer`): a button's shortcut is heard only once the button is on the page,
and on a page that has just appeared the point panel's title comes before its buttons (the
panel is drawn as soon as its content is ready), so a press in between reached no button and
was lost: no label, no message. The script hears every key press first (capture phase); a press
of a single letter or digit, outside a text field, for which the page has NO button yet is kept
(the latest one, for :data:`KEY_BUFFER_SECONDS`) and said on the page ("Key 1 noted: it applies
when the buttons appear"), and applied by clicking the button with that key as soon as one
appears that is not greyed out (a rerun's old panel). A press for which a button exists
clicks the newest button with that key that is not greyed out, and Streamlit's own shortcut does
not hear it: the shortcut could reach a button of the previous panel, whose callback names the
previous point. When every button with that key is greyed out (a rerun is under way: a repeated
or early press), the press waits for the new buttons and applies only if they are for the point
the page showed at the press; otherwise it is dropped and the page says so. A press is never
carried over to a point the user has not seen. It runs in the
browser only and carries no user input.

Presses before the script itself is on the page: ``st.html`` is drawn by a code chunk the
browser fetches when a page first uses it, so on a loaded machine the point panel (plain
Markdown) could appear before the script, and a press then reached no button and no script: it
was lost. The script marks the page (:data:`KEYS_READY_CLASS`) once it hears presses, and
the page's first style block (:data:`KEYS_READY_CSS`) keeps the point panel's column hidden
until then (at most :data:`KEYS_READY_WAIT_SECONDS`): a point is shown only once a press on it
is taken (applied, or kept and said on the page).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SKIP_KEY", "UNDO_KEY", "BACK_KEY", "RESERVED", "class_shortcuts", "KEY_BUFFER_SCRIPT",
           "KEY_BUFFER_SECONDS", "KEYS_READY_CLASS", "KEYS_READY_CSS", "install_key_buffer"]

SKIP_KEY = "s"
UNDO_KEY = "u"
BACK_KEY = "Escape"
#: Keys never given to a class: Streamlit's own (c, r) and the app's (s, u).
RESERVED = frozenset({"c", "r", SKIP_KEY, UNDO_KEY})
_SEQUENCE = "1234567890" + "".join(ch for ch in "abdefghijklmnopqtvwxyz" if ch not in RESERVED)


def class_shortcuts(classes: Sequence) -> list[str | None]:
    """Shortcut key of each class, or None once the keys run out.

    Parameters
    ----------
    classes : sequence
        Class names in their order of creation.

    Returns
    -------
    list of (str or None), same length as ``classes``
        Lower-case keys, all distinct, none in :data:`RESERVED`.
    """
    used: set[str] = set()
    keys: list[str | None] = []
    for name in classes:
        own = str(name).strip().lower()
        if len(own) == 1 and own.isascii() and own.isalnum() and own not in RESERVED and own not in used:
            key = own
        else:
            key = next((k for k in _SEQUENCE if k not in used), None)
        if key is not None:
            used.add(key)
        keys.append(key)
    return keys


#: How long a press made before its button was on the page is kept, seconds.
KEY_BUFFER_SECONDS = 60

#: A class put on the page's ``<html>`` element by :data:`KEY_BUFFER_SCRIPT` once it hears key
#: presses.
KEYS_READY_CLASS = "labeler-keys"

#: At most this long, seconds, the point panel waits hidden for :data:`KEY_BUFFER_SCRIPT` (a
#: page whose script failed still shows its point).
KEYS_READY_WAIT_SECONDS = 30

#: CSS for the page's first style block (Markdown, in Streamlit's main bundle: drawn before
#: anything else): the column holding the point panel (its ``.point-tag`` title) stays hidden
#: until the key script is installed (module docstring).
_WAITING_COLUMN = f"html:not(.{KEYS_READY_CLASS}) .stColumn:has(.point-tag)"
#: (an animation, not a plain rule: it ends by itself, and it overrides the ``visibility:
#: visible`` Streamlit sets on some of the column's elements, hence also on every descendant)
KEYS_READY_CSS = (
    "@keyframes labeler-keys-wait { from, to { visibility: hidden; } }\n"
    f"{_WAITING_COLUMN}, {_WAITING_COLUMN} * "
    f"{{ animation: labeler-keys-wait {KEYS_READY_WAIT_SECONDS}s step-end; }}"
)

KEY_BUFFER_SCRIPT = """
<script>
(function () {
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  const win = doc.defaultView || window;
  if (win.__labelerKeys) { return; }
  const K = win.__labelerKeys = {pending: null, applied: 0};
  const KEEP_MS = %d;
  const NOTE_MS = 4000;
  const typing = (el) => !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  const hint = (b) => { const k = b.querySelector("kbd"); return k ? k.innerText.trim().toLowerCase() : null; };
  function buttons(key) {
    return [...doc.querySelectorAll("button")].filter((b) => hint(b) === key);
  }
  function live(key) {  // the newest button with that key that is not greyed out
    const fresh = buttons(key).filter((b) => !b.disabled && !b.closest('[data-stale="true"]'));
    return fresh.length ? fresh[fresh.length - 1] : null;
  }
  function note(text) {
    let el = doc.getElementById("labeler-key-note");
    if (!text) { if (el) { el.remove(); } return; }
    if (!el) {
      el = doc.createElement("div");
      el.id = "labeler-key-note";
      el.className = "key-queued";
      el.setAttribute("role", "status");
      el.style.cssText = "position:fixed;bottom:1rem;right:1rem;z-index:1000;padding:.4rem .8rem;" +
        "border-radius:.4rem;background:#fff3cd;color:#664d03;font:14px sans-serif;" +
        "box-shadow:0 1px 4px rgba(0,0,0,.2)";
      doc.body.appendChild(el);
    }
    el.textContent = text;
  }
  function shownPoint(live) {  // the point of the panel's title: the newest one not greyed out, or any
    const tags = [...doc.querySelectorAll(".point-tag")];
    const fresh = tags.filter((t) => !t.closest('[data-stale="true"]'));
    const tag = live ? fresh[fresh.length - 1] : (fresh[fresh.length - 1] || tags[tags.length - 1]);
    return tag ? tag.dataset.point : null;
  }
  function flush() {
    const p = K.pending;
    if (!p) { return; }
    if (performance.now() - p.t > KEEP_MS) { K.pending = null; note(null); return; }
    const b = live(p.key);
    if (!b) { return; }
    K.pending = null;
    const now = shownPoint(true);
    if (p.point != null && now != null && now !== p.point) {  // pressed on a point no longer shown
      note("Key " + p.key.toUpperCase() + " not applied: it was pressed while the page still showed " +
           "the previous point. Press again on the point shown now.");
      setTimeout(() => { if (!K.pending) { note(null); } }, NOTE_MS);
      return;
    }
    K.applied += 1;
    note(null);
    b.click();
  }
  win.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.repeat || typing(doc.activeElement)) { return; }
    const key = (ev.key || "").toLowerCase();
    if (!/^[a-z0-9]$/.test(key)) { return; }
    const all = buttons(key);
    if (all.length) {
      // Clicked here, not left to Streamlit's shortcut, which can reach a button of the previous
      // panel: the newest button with that key that is not greyed out. With only greyed buttons
      // (a rerun under way) the press waits for the new ones, and applies only if they are for
      // the point the page showed at the press.
      ev.preventDefault();
      ev.stopImmediatePropagation();
      const b = live(key);
      if (b) { b.click(); return; }
      K.pending = {key: key, t: performance.now(), point: shownPoint(false)};
      return;
    }
    K.pending = {key: key, t: performance.now(), point: shownPoint(false)};
    note("Key " + key.toUpperCase() + " noted: it applies when the buttons appear.");
  }, true);
  new MutationObserver(() => { if (K.pending) { requestAnimationFrame(flush); } })
    .observe(doc.body, {childList: true, subtree: true, attributes: true, attributeFilter: ["data-stale", "disabled"]});
  setInterval(flush, 200);
  // presses are heard from now on: the point panel may be shown (KEYS_READY_CSS)
  doc.documentElement.classList.add("%s");
})();
</script>
""" % (1000 * KEY_BUFFER_SECONDS, KEYS_READY_CLASS)


def install_key_buffer() -> None:
    """Install :data:`KEY_BUFFER_SCRIPT` in the page (call it first on every page, before the
    point panel: it must be there before the first buttons are; once per page load, later
    calls are no-ops in the browser)."""
    import streamlit as st

    st.html(KEY_BUFFER_SCRIPT, unsafe_allow_javascript=True, width="content")
