"""The kernel-RLS candidate of the model choice, re-tuned as labels arrive while another model
answers.

:class:`RlsRetune` is the re-tune hook of ``labeler simulate --model auto``
(:mod:`labeler.experiments.model_select_simulate` imports it): ``hook(learner, n_before)``
re-fits the width and lam by exact LOO (:func:`.model.auto_tune`) when
:func:`core.rls.tuning.retune_due` says so and :func:`core.rls.tuning.loo_readiness` allows,
and applies the moved values to the learner (one :func:`.model.apply`, one ``set_params``).
The simulation calls it whenever its :class:`core.selection.ModelSelector` gives the candidate
new labels, i.e. at each evaluation of :func:`core.selection.evaluation_due`.

:class:`CandidateTuning` runs the same hook for a session's RLS candidate (``model="auto"``,
:mod:`.model_selection`, :mod:`.choice_job`) on a schedule that depends on the labels only, never
on when an evaluation ran: the candidate is given the labels up to each count ``m`` at which an
evaluation is due (:func:`core.selection.evaluation_due`) since RLS last answered, and the hook
runs there with ``n_before`` the previous such count, as in ``labeler simulate``. So the app's
background evaluations (which may skip counts while one runs) and a reopened session (which
replays the counts from the stored labels) reach the width and lam the simulation reaches on
the same labels. These re-tunes are the candidate's own state, never written to the event log;
when the candidate takes over, its width and lam are written with the switch
(:meth:`.model_selection.ModelChoice.switch_rows`). The candidate depends on the session's RLS
settings, ``rls_since`` and the labels only: a label taken back or changed drops the re-tunes
made on labels no longer there (the spec of each re-tune is kept with its count), and a learner
followed afresh (a job's, one handed back after a switch whose write failed) is brought back to
the session's settings and the labels up to ``rls_since`` and re-tuned above it again. An undo
that gives a graph model back from RLS (the labels that chose RLS are gone) undoes the model,
not the settings: the width and lam written with the switch (and any re-tune written while RLS
answered) stay the session's, RLS stopped answering at the undo's count, and the re-tunes start
above that count (a reopen reads it from the restoring ``model`` event, whose ``from`` is RLS).

A dense RLS candidate is a :class:`core.selection.block_rls.LabelledBlockRLS` (:func:`build_candidate`):
its exact LOO from the labelled block alone (docs/algorithms.md §14), the same 0/1 losses as the
dense learner's, without an n x n matrix beside the model that answers nor a rebuild at each
width re-tune. The full learner is built only when the choice switches to RLS (by the background
job before it reports done, or by the session in step); the session's dense RLS learner, when a
graph model takes over, is held as a block candidate (:func:`as_candidate`) and freed.
"""

from __future__ import annotations

from core.learner import ActiveRLS
from core.rls.tuning import loo_readiness, retune_due
from core.selection import evaluation_due
from core.selection.block_rls import LabelledBlockRLS

from . import model

__all__ = ["RlsRetune", "CandidateTuning", "learner_spec", "tune_flags", "build_candidate", "as_candidate",
           "answers"]


def build_candidate(spec, X, classes, parts=None):
    """The learner of a model-choice candidate (no labels): a
    :class:`core.selection.block_rls.LabelledBlockRLS` for dense kernel RLS (its LOO needs the
    labelled block only), else :func:`.model.build_learner`'s (a low-rank RLS, a graph model)."""
    if isinstance(spec, model.RlsSpec) and spec.posterior == "dense":
        return LabelledBlockRLS(X, list(classes), spec.kernel_function(), lam=float(spec.lam),
                                weighting=spec.learner_weighting(list(classes)))
    return model.build_learner(spec, X, list(classes), parts=parts)


def as_candidate(base, learner, X):
    """``learner`` as a candidate: a dense :class:`core.learner.ActiveRLS` (the session's RLS
    when another model takes over) becomes a labelled-block candidate with its labels, width and
    lam (the n x n matrix is freed with it); any other learner is returned as it is."""
    if not (isinstance(learner, ActiveRLS) and isinstance(base, model.RlsSpec) and base.posterior == "dense"):
        return learner
    block = build_candidate(learner_spec(base, learner), X, learner.classes)
    labels = learner.labels
    if labels:
        block.add_many(list(labels), list(labels.values()))
    return block


def answers(learner) -> bool:
    """Whether ``learner`` can answer as the session's model (a labelled-block candidate cannot)."""
    return not isinstance(learner, LabelledBlockRLS)


def tune_flags(auto_tune: dict, spec) -> dict:
    """``{"width": bool, "lam": bool}``: what the candidate re-tunes. ``auto_tune``: the
    session's (or the simulation's) flags; the width only for an RBF kernel that has a width
    in the feature space (not the spectral graph kernel)."""
    flags = dict(auto_tune or {})
    width = bool(flags.get("width", False)) and spec.kernel == "rbf" and spec.posterior != "spectral"
    return {"width": width, "lam": bool(flags.get("lam", False))}


class RlsRetune:
    """The re-tune hook of a kernel-RLS candidate: ``hook(learner, n_before)`` (module docstring).

    Parameters
    ----------
    spec : RlsSpec
        The settings the learner has now.
    X : ndarray of shape (n_samples, n_features)
        The learner's pool (read only).
    tune : dict
        ``{"width": bool, "lam": bool}`` (:func:`tune_flags`).

    Attributes
    ----------
    spec : RlsSpec
        The settings in use after the re-tunes (set it when the learner is given other ones).
    """

    def __init__(self, spec, X, tune: dict):
        self.spec = spec
        self.X = X
        self.tune = {"width": bool(tune.get("width", False)), "lam": bool(tune.get("lam", False))}
        self._scale = None  # the pool's width grid and clusters, computed at the first width re-tune

    @property
    def active(self) -> bool:
        """Whether anything is re-tuned (False: width and lam both fixed)."""
        return self.tune["width"] or self.tune["lam"]

    def __call__(self, learner, n_before: int) -> None:
        """Re-tune ``learner`` (holding ``learner.n_labeled`` labels, ``n_before`` at the
        previous call) when due; the moved values are applied to it and kept in :attr:`spec`."""
        tune = self.tune
        if not (self.active and retune_due(n_before, learner.n_labeled)
                and not loo_readiness(list(learner.labels.values()))):
            return
        scale = None
        if tune["width"]:
            scale = self._scale = self._scale if self._scale is not None else model.width_scale(self.X)
        fit = model.auto_tune(self.spec, learner, self.X, tune_width=tune["width"], tune_lam=tune["lam"],
                              widths=None if scale is None else scale.widths, scale=scale)
        new = self.spec
        if fit.width_changed:
            new = new.with_setting("width", fit.width)
        if fit.lam_changed:
            new = new.with_setting("lam", fit.lam)
        model.apply(self.spec, new, learner)
        self.spec = new


def learner_spec(base, learner):
    """``base`` with the width and lam ``learner`` has (a kernel-RLS learner's own settings)."""
    params = learner.get_params()
    spec = base
    if float(params["lam"]) != spec.lam:
        spec = spec.with_setting("lam", float(params["lam"]))
    width = getattr(params.get("kernel"), "width", None)
    if spec.width is not None and width is not None and float(width) != spec.width:
        spec = spec.with_setting("width", float(width))
    return spec


class CandidateTuning:
    """The re-tunes of a session's kernel-RLS candidate while another model answers (module
    docstring). Used by one thread at a time (the request, or the background job that holds it).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The pool (read only).

    Attributes
    ----------
    learner : core.selection.block_rls.LabelledBlockRLS or kernel-RLS learner or None
        The candidate whose re-tunes this follows: a labelled-block candidate for dense RLS
        (:func:`build_candidate`), the full learner a background job built for a switch to RLS
        (:meth:`replace`), a low-rank RLS learner otherwise. Another learner given to
        :meth:`bring` is followed afresh (:meth:`_follow`).
    """

    def __init__(self, X):
        self.X = X
        self.learner = None
        self._key = None  # (base spec, rls_since, classes, flags)
        self._hook: RlsRetune | None = None
        self._labels: tuple = ()  # the labels the learner holds, in order
        self._checkpoints: list = []  # [(count, spec)]: the spec after the re-tune at that count

    @property
    def spec(self):
        """The candidate's settings after its re-tunes (None before :meth:`bring`)."""
        return None if self._hook is None else self._hook.spec

    def release(self, learner) -> None:
        """Stop following ``learner`` (it becomes the session's model)."""
        if learner is self.learner:
            self.learner, self._key, self._hook, self._labels, self._checkpoints = None, None, None, (), []

    def replace(self, old, new) -> None:
        """Follow ``new`` instead of ``old``: the same labels, in the same order, and settings."""
        if old is self.learner:
            self.learner = new

    def bring(self, learner, base, rls_since: int, flags: dict, classes, labels) -> object:
        """Give ``learner`` the ``labels``, re-tuned on the schedule of the module docstring.

        Parameters
        ----------
        learner : core.selection.block_rls.LabelledBlockRLS or kernel-RLS learner
            The candidate (built for ``base`` and ``classes`` by :func:`build_candidate`, or
            followed by this already). A learner not followed yet may hold labels and other
            settings: it is brought back to ``base`` and the labels up to ``rls_since`` first.
        base : RlsSpec
            The session's RLS settings (those of RLS when it last answered).
        rls_since : int
            The label count at which RLS last stopped answering (0: it never answered;
            :meth:`.model_selection.ModelChoice.rls_since`); the re-tunes happen at the due
            counts above it.
        flags : dict
            ``{"width": bool, "lam": bool}`` (:func:`tune_flags`).
        classes : sequence of str
        labels : sequence of (int, str)
            The net labels in labelling order.

        Returns
        -------
        RlsSpec
            The candidate's settings now.

        Raises
        ------
        ValueError
            The learner rejects a re-tuned value (``numpy.linalg.LinAlgError``).
        """
        labels = tuple(labels)
        since = int(rls_since)
        key = (base, since, tuple(classes), (bool(flags["width"]), bool(flags["lam"])))
        if learner is not self.learner or key != self._key:  # followed afresh: from base, at rls_since
            self._follow(learner, key, base, since, flags, labels)
        hook = self._hook
        c = _common_prefix(self._labels, labels)
        if c < len(self._labels):  # labels taken back or changed: the re-tunes made on them go
            learner.remove_many([i for i, _ in self._labels[c:]])
            self._checkpoints = [cp for cp in self._checkpoints if cp[0] <= c]
            target = self._checkpoints[-1][1] if self._checkpoints else base
            if target != hook.spec:
                model.apply(hook.spec, target, learner)
                hook.spec = target
            self._labels = labels[:c]
        if hook.active:
            previous = max(since, _last_due(c))
            for m in range(max(c, since) + 1, len(labels) + 1):
                if not evaluation_due(m):
                    continue
                self._give(learner, labels[:m])
                before = hook.spec
                hook(learner, previous)
                if hook.spec != before:
                    self._checkpoints.append((m, hook.spec))
                previous = m
        self._give(learner, labels)
        return hook.spec

    def _follow(self, learner, key, base, rls_since: int, flags: dict, labels: tuple) -> None:
        """Start following ``learner``: its settings become ``base`` and it keeps of its labels
        only what a fresh learner would hold at ``base`` before any re-tune (a prefix of
        ``labels`` up to ``rls_since``, held at ``base``); the others are removed, so the
        re-tunes above ``rls_since`` all run again and the candidate depends on (``base``,
        ``rls_since``, ``labels``) only, never on what was done to the learner before."""
        held = learner_spec(base, learner)
        kept = tuple(learner.labels.items())
        c = _common_prefix(kept, labels)
        if held != base or c < len(kept) or c > rls_since:
            if kept:
                learner.remove_many([i for i, _ in kept])
            kept = ()
            if held != base:
                model.apply(held, base, learner)
        self.learner, self._key, self._hook = learner, key, RlsRetune(base, self.X, flags)
        self._labels, self._checkpoints = kept, []

    def _give(self, learner, labels: tuple) -> None:
        new = labels[len(self._labels):]
        if new:
            learner.add_many([i for i, _ in new], [lab for _, lab in new])
        self._labels = labels


def _common_prefix(a: tuple, b: tuple) -> int:
    n = min(len(a), len(b))
    for k in range(n):
        if a[k] != b[k]:
            return k
    return n


def _last_due(n: int) -> int:
    """The largest count ``<= n`` at which an evaluation is due (0 if none)."""
    while n > 0 and not evaluation_due(n):
        n -= 1
    return n
