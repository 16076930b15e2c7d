"""Changing a session's settings: strategy, class weighting, lam, RBF width, classes.

:class:`SessionSettings` is a mixin of :class:`~labeler.session.session.LabelingSession`. Each
setter checks the value (:func:`.config.check_setting`), then commits it through the session's
``_commit``, which gives it to the learner through the model factory (:mod:`.model`) BEFORE it
is written: a value the learner rejects raises with nothing stored, so the event log always
reopens. "auto" lam and width are chosen by the one LOO tuner (:mod:`core.rls.tuning`, through
:func:`.model.tune`). The mixin uses ``_commit``, ``_cached``, ``_config``, ``_spec``,
``_log``, ``learner`` and ``X`` of the session.
"""

from __future__ import annotations

from . import model
from .config import check_setting

__all__ = ["SessionSettings"]


class SessionSettings:
    """Setters of a session (see the module docstring)."""

    def add_class(self, name: str):
        """Add a class while labelling (binary -> multiclass). Persisted; not undoable.

        Raises
        ------
        TypeError, ValueError
            Not a string, empty, already a class, or the learner rejects it (nothing stored).
        """
        def build():
            return [{"kind": "add_class", "label": self.check_new_class_name(name)}]

        self._commit(build)

    def _set(self, name: str, value, **extra):
        """Store the setting ``name = value`` if the learner takes it (checked before)."""
        def build():
            if getattr(self._config, name) == value:
                return None
            return [{"kind": "setting", "value": {"name": name, "value": value, **extra}}]

        self._commit(build)

    def _tuning(self):
        """The LOO fit of lam at the session's width on the labelled points (cached per state:
        the fit :meth:`loo_curve` shows is the one ``set_lam("auto")`` applies)."""
        return self._cached("loo_fit", lambda: model.tune(self._spec, self.learner, self.X))

    def set_strategy(self, name: str):
        """Change the query strategy (persisted)."""
        self._set("strategy", check_setting("strategy", name, self._config.kernel, self._log.classes))

    def set_weighting(self, weighting):
        """Change the class weighting: "none", "balanced" or {class: weight} (persisted).

        Raises
        ------
        ValueError
            An unknown weighting, or weights the learner rejects (nothing stored).
        """
        self._set("weighting", check_setting("weighting", weighting, self._config.kernel, self._log.classes))

    def set_lam(self, value):
        """Set the regularisation: a number > 0, or "auto" (exact LOO on the labelled points,
        :mod:`core.rls.tuning`).

        Raises
        ------
        ValueError
            Not a number > 0; too few labels for "auto"; a value the learner rejects (e.g.
            ``K_LL + Lambda_L`` not positive definite): nothing is stored.
        """
        if isinstance(value, str) and value == "auto":
            fit = self._tuning()
            self._set("lam", float(fit.lam), requested="auto", loo_error=float(fit.error))
        else:
            self._set("lam", check_setting("lam", value, self._config.kernel, self._log.classes))

    def set_width(self, value):
        """Set the RBF width: a number in ``[MIN_WIDTH, MAX_WIDTH]`` of :mod:`.config`, or
        "auto" (exact LOO over :func:`.model.width_grid` at the current lam, on the labelled
        points).

        Raises
        ------
        ValueError
            Not an RBF session; a width out of range; too few labels for "auto"; a width the
            learner rejects: nothing is stored.
        """
        kernel = self._config.kernel
        if isinstance(value, str) and value == "auto":
            check_setting("width", 1.0, kernel, self._log.classes)  # an rbf session?
            fit = model.tune(self._spec, self.learner, self.X, widths=model.width_grid(self.X),
                             lams=[float(self._config.lam)])
            self._set("width", float(fit.width), requested="auto", loo_error=float(fit.error))
        else:
            self._set("width", check_setting("width", value, kernel, self._log.classes))
