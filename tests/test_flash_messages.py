"""Messages of the last actions: refused presses queued before the page reran show one
warning (the latest), not a stack; other messages keep their order, each shown once."""

from __future__ import annotations

from labeler.ui import state


def test_one_warning_the_latest_and_no_repeated_messages(monkeypatch):
    monkeypatch.setattr(state.st, "session_state", {})
    state.flash("success", "Point #3 is now labelled 'a'.")
    for i in (4, 5, 6):
        state.flash("warning", f"This press on point #{i} was not applied: the page was out of date.")
    state.flash("info", "Nothing to undo.")
    state.flash("info", "Nothing to undo.")
    state.flash("error", "Type a name for the new class first.")
    assert state.pop_flash() == [
        ("success", "Point #3 is now labelled 'a'."),
        ("warning", "This press on point #6 was not applied: the page was out of date."),
        ("info", "Nothing to undo."),
        ("error", "Type a name for the new class first."),
    ]
    assert state.pop_flash() == []  # shown once
