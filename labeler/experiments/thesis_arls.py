"""Thesis experiments on Active RLS: ARLS against random selection (seed 002 §4.3).

* :func:`exp_spheres`: 60 spheres x 20 points, width 1.7, lambda 0.5 (§4.3.1, Figs. 4-6, 4-7).
* :func:`exp_magic`: MAGIC, width 3, lambda 0.2, standardised (§4.3.1, Fig. 4-8).
* :func:`exp_circles`: unweighted ARLS, weighted random and weighted bias-corrected ARLS on the
  imbalanced circles (§4.3.2, Figs. 4-9, 4-10).
* :func:`exp_magic_imbalanced`: weighted bias-corrected ARLS vs weighted random on MAGIC with
  10 hadrons per gamma, width 1.5, lambda 0.1 (§4.3.2, Fig. 4-11).
"""

from __future__ import annotations

import numpy as np

from core.learner import ActiveRLS
from core.kernels import Kernel
from labeler.data import load_dataset
from labeler.experiments.findings import (
    Finding,
    Settings,
    checkpoints,
    first_at_least,
    first_at_most,
    fmt_pct,
    md_table,
    mean_sd,
    pool_ratio_weights,
    run_first_at_least,
    save_curves,
    save_figure,
    simulate_runs,
    value_at,
)
from labeler.experiments.report import curve_figure, summarize_runs
from labeler.experiments.simulate import prepare_features

__all__ = ["exp_spheres", "exp_magic", "exp_circles", "exp_magic_imbalanced", "disc_probability"]


# --------------------------------------------------------------------------- 3. spheres
def exp_spheres(settings: Settings) -> Finding:
    """Seed 002 §4.3.1, Figs. 4-6 / 4-7: ARLS finds the 60 spheres with 60 queries."""
    seeds = list(range(settings.seeds))
    budget_arls = settings.pick(150, 70)
    budget_random = settings.pick(600, 70)
    common = {"kernel": Kernel("rbf", width=1.7), "lam": 0.5, "weighting": "none"}
    cache: dict[int, object] = {}

    def loader(seed):
        if seed not in cache:
            cache[seed] = load_dataset("spheres", seed=seed)
        return cache[seed]

    arls = simulate_runs(settings, "spheres ARLS", loader, seeds, strategy="arls", budget=budget_arls, **common)
    rnd = simulate_runs(settings, "spheres random", loader, seeds, strategy="random", budget=budget_random, **common)
    rows = []
    hits_arls, hits_rnd, spheres_hit, centre_r, early = [], [], [], [], []
    for seed, a, r in zip(seeds, arls, rnd):
        ds = loader(seed)
        sphere = ds.frame["sphere"].to_numpy()
        first60 = a["index"].to_numpy()[:60]
        centres = np.round(ds.X / 6.0) * 6.0
        radius = np.linalg.norm(ds.X - centres, axis=1)
        n_spheres = len(np.unique(sphere[first60]))
        spheres_hit.append(n_spheres)
        centre_r.append(float(radius[first60].mean()))
        ha = run_first_at_least(a, "accuracy", 1.0)
        hr = run_first_at_least(r, "accuracy", 1.0)
        hits_arls.append(ha)
        hits_rnd.append(hr)
        if ha is not None and ha < 60:
            unseen = sorted(set(range(60)) - set(sphere[a["index"].to_numpy()[:ha]].tolist()))
            early.append(len(unseen))
        acc_r60 = float(r.loc[r["n_labeled"] == 60, "accuracy"].iloc[0]) if budget_random >= 60 else float("nan")
        rows.append([seed, ha if ha else f"> {budget_arls}", n_spheres, f"{radius[first60].mean():.2f}",
                     fmt_pct(acc_r60), hr if hr else f"> {budget_random}"])
    groups = {"ARLS": arls, "random": rnd}
    save_curves(settings, groups, "spheres", ("accuracy", "estimated_risk"))
    fig = curve_figure(groups, metrics=("error", "estimated_risk"),
                       title="Spheres: validation error and estimated risk (width 1.7, lambda 0.5)",
                       markers={"60 queries": 60})
    plot_md = save_figure(settings, fig, "spheres", "Spheres: ARLS vs random")
    s_r = summarize_runs(rnd, "accuracy")
    found = [h for h in hits_arls if h is not None]
    exact60 = sum(1 for h in hits_arls if h == 60)
    rnd_found = [h for h in hits_rnd if h is not None]
    details = [
        f"Data: `spheres`, 60 unit discs on a 10 x 6 grid (spacing 6) x 20 points = 1200, half "
        "of the discs positive; validation 1200 points drawn from the same discs. RBF width 1.7, "
        f"lambda 0.5, no weights. {len(seeds)} seeds (each seed draws new discs' labels and points "
        f"and breaks ties). ARLS budget {budget_arls}, random {budget_random}. Mean distance of a "
        "pool point from its disc centre is 2/3 (uniform in a unit disc).",
        md_table(["seed", "ARLS: first n with 100% validation accuracy", "distinct spheres in ARLS' first 60 queries",
                   "mean distance of those 60 from their centre", "random: accuracy at 60",
                   "random: first n with 100%"], rows),
        plot_md,
    ]
    ours = (
        f"ARLS 100% after {_describe_hits(hits_arls, budget_arls)} queries ({exact60}/{len(seeds)} seeds exactly 60); "
        f"first 60 queries hit {min(spheres_hit)}-{max(spheres_hit)} distinct spheres, mean distance "
        f"{np.mean(centre_r):.2f} from the centre (2/3 for a random point); random: "
        f"{fmt_pct(value_at(s_r, 60))} at 60, 100% after {_describe_hits(hits_rnd, budget_random)}"
    )
    all_spheres = min(spheres_hit) == 60
    if all(h is not None and h <= 60 for h in hits_arls) and all_spheres:
        note = "Reproduced: one query per sphere, near its centre, then 100%."
        if early:
            note += (
                f" In {len(early)} seed(s) 100% came before the 60th query: the sphere(s) not yet queried "
                "got the right sign by chance from its neighbours' tiny kernel values "
                "(exp(-6^2 / (2 * 1.7^2)) = 0.002 between adjacent centres)."
            )
    else:
        note = (
            f"Close: {len(found)}/{len(seeds)} seeds reach 100% within {budget_arls} queries; the first "
            f"60 queries hit {min(spheres_hit)}-{max(spheres_hit)} distinct spheres."
        )
    if len(rnd_found) < len(seeds):
        note += f" Random selection did not reach 100% within {budget_random} queries in {len(seeds) - len(rnd_found)} seed(s)."
    return Finding("spheres", "Spheres, balanced (§4.3.1, Figs. 4-6, 4-7)",
                   "ARLS 100% validation accuracy after exactly 60 queries (one per sphere centre); random far slower",
                   ours, note, details)


def _describe_hits(hits, budget) -> str:
    found = sorted(h for h in hits if h is not None)
    missing = sum(1 for h in hits if h is None)
    if not found:
        return f"more than {budget} (no seed)"
    text = f"{found[0]}" if found[0] == found[-1] else f"{found[0]}-{found[-1]} (median {int(np.median(found))})"
    if missing:
        text += f"; {missing} seed(s) > {budget}"
    return text


# --------------------------------------------------------------------------- 4. MAGIC balanced
def exp_magic(settings: Settings) -> Finding:
    """Seed 002 §4.3.1, Fig. 4-8: ARLS needs ~350 labels for random's accuracy at 1000."""
    seeds = list(range(settings.seeds))
    n_pool = settings.pick(1900, 500)
    n_val = settings.pick(2000, 500)
    budget = settings.pick(1000, 120)
    ref = budget  # random's accuracy at the end of the budget is the target
    common = {"kernel": Kernel("rbf", width=3.0), "lam": 0.2, "weighting": "none", "budget": budget}
    cache: dict[int, object] = {}

    def loader(seed):
        if seed not in cache:
            cache[seed] = load_dataset("magic", seed=seed, n=n_pool, n_val=n_val)
        return cache[seed]

    arls = simulate_runs(settings, "MAGIC ARLS", loader, seeds, strategy="arls", **common)
    rnd = simulate_runs(settings, "MAGIC random", loader, seeds, strategy="random", **common)
    groups = {"ARLS": arls, "random": rnd}
    save_curves(settings, groups, "magic", ("accuracy", "estimated_risk"))
    fig = curve_figure(groups, metrics=("error", "estimated_risk"),
                       title=f"MAGIC: validation error and estimated risk (pool {n_pool}, width 3, lambda 0.2)")
    plot_md = save_figure(settings, fig, "magic", "MAGIC: ARLS vs random")
    sa, sr = summarize_runs(arls, "accuracy"), summarize_runs(rnd, "accuracy")
    target = value_at(sr, ref)
    reach = first_at_least(sa, target)
    marks = checkpoints(budget, (50, 100, 200, 350, 500, 1000))
    rows = [[m, mean_sd([r.loc[r.n_labeled == m, "accuracy"].iloc[0] for r in arls]),
             mean_sd([r.loc[r.n_labeled == m, "accuracy"].iloc[0] for r in rnd])] for m in marks]
    risk = summarize_runs(arls, "estimated_risk")
    mid = min(350, budget)
    per_seed = [run_first_at_least(a, "accuracy", float(r["accuracy"].iloc[-1])) for a, r in zip(arls, rnd)]
    details = [
        f"Data: `magic` (UCI MAGIC gamma telescope, 10 features standardised on the pool), pool of "
        f"{n_pool} and disjoint validation set of {n_val}, both random with the original class "
        f"proportions; RBF width 3, lambda 0.2, no weights; {len(seeds)} seeds (new pool, validation "
        f"and ties per seed); budget {budget}.",
        md_table(["labels", "ARLS accuracy (mean ± sd)", "random accuracy (mean ± sd)"], rows),
        f"Per seed, labels ARLS needed to match that seed's random accuracy at {ref}: "
        + ", ".join(str(v) if v else f"> {budget}" for v in per_seed) + ".",
        f"ARLS' estimated risk (mean): {risk['mean'].iloc[0]:.1f} after 1 label, "
        f"{value_at(risk, mid):.1f} at {mid}, {risk['mean'].iloc[-1]:.1f} at {budget}.",
        plot_md,
    ]
    ours = (f"random reaches {fmt_pct(target)} at {ref} labels; ARLS (mean curve) reaches it at "
            f"{reach if reach else f'> {budget}'} labels")
    if settings.quick:
        note = "Quick run: small pool and budget, not comparable to the thesis' numbers."
    else:
        both = sa.merge(sr, on="n_labeled", suffixes=("_a", "_r"))
        later = both[both["n_labeled"] >= 100]
        diff = 100 * (later["mean_a"] - later["mean_r"])
        found = sorted(v for v in per_seed if v)
        note = (
            "The thesis says each trial used '1% of the 19,000' training vectors, which cannot hold "
            "1000 queries; we use a pool of 1900 (10%). "
            + ("Reproduced within the noise of the seeds." if reach and reach <= 450 else
               f"Not reproduced: ARLS' advantage is much smaller here. From 100 labels on, its mean "
               f"accuracy is {diff.min():+.1f} to {diff.max():+.1f} points from random's (mean "
               f"{diff.mean():+.1f}); per seed it matches random's accuracy at {ref} after "
               f"{found[0] if found else '-'}-{found[-1] if found else '-'} labels. ")
            + f"ARLS' mean estimated risk is {value_at(risk, mid):.0f} at {mid} labels and "
            f"{risk['mean'].iloc[-1]:.0f} at {budget}: like the thesis, no stopping signal."
        )
    return Finding("magic", "MAGIC, balanced (§4.3.1, Fig. 4-8)",
                   "ARLS reaches with ~350 labels the accuracy random selection reaches with 1000",
                   ours, note, details)


# --------------------------------------------------------------------------- 5. circles
def exp_circles(settings: Settings) -> Finding:
    """Seed 002 §4.3.2, Figs. 4-9 / 4-10: imbalanced circles, weighted vs unweighted ARLS."""
    seeds = list(range(settings.seeds))
    budget = settings.pick(400, 100)
    cache: dict[int, object] = {}

    def loader(seed):
        if seed not in cache:
            cache[seed] = load_dataset("circles", seed=seed)
        return cache[seed]

    pool_weights = lambda ds: pool_ratio_weights(ds.y)  # noqa: E731
    wide = {"kernel": Kernel("rbf", width=1.7), "lam": 0.2, "budget": budget}
    tight = {"kernel": Kernel("rbf", width=1.0), "lam": 0.1, "budget": budget}
    groups = {
        "unweighted ARLS (width 1.7, lambda 0.2)": simulate_runs(
            settings, "circles unweighted ARLS", loader, seeds, strategy="arls", weighting="none", **wide),
        "weighted random (width 1.7, lambda 0.2)": simulate_runs(
            settings, "circles weighted random", loader, seeds, strategy="random", weighting=pool_weights, **wide),
        "unweighted ARLS (width 1, lambda 0.1)": simulate_runs(
            settings, "circles unweighted ARLS, tight kernel", loader, seeds, strategy="arls", weighting="none",
            **tight),
        "weighted ARLS, bias-corrected risk (width 1, lambda 0.1)": simulate_runs(
            settings, "circles weighted ARLS", loader, seeds, strategy="arls", weighting=pool_weights, **tight),
    }
    if not settings.quick:
        few = seeds[: min(3, len(seeds))]
        groups["ARLS, 'balanced' weights from the labels (width 1, lambda 0.1)"] = simulate_runs(
            settings, "circles ARLS balanced-by-labels", loader, few, strategy="arls", weighting="balanced",
            **{**tight, "budget": min(budget, 200)})
    save_curves(settings, groups, "circles", ("accuracy", "estimated_risk"))
    fig = curve_figure(groups, metrics=("error", "estimated_risk"), log_y=("estimated_risk",),
                       title="Imbalanced circles (100:1), balanced validation set")
    plot_md = save_figure(settings, fig, "circles", "Imbalanced circles")
    marks = checkpoints(budget, (20, 50, 100, 200, 270, 300, 400))
    rows = []
    summary = {}
    for label, runs in groups.items():
        s = summarize_runs(runs, "error")
        summary[label] = s
        last = int(s["n_labeled"].max())
        reach = first_at_most(s, 0.01)
        positives = [int((r["label"] == 1).sum()) for r in runs]
        rows.append([label, len(runs)] + [fmt_pct(value_at(s, m)) if m <= last else "" for m in marks]
                    + [reach if reach else f"> {last}", f"{np.mean(positives):.1f}"])
    keys = list(groups)
    s_unw, s_rnd, s_unw_tight, s_w = (summary[k] for k in keys[:4])
    details = [
        "Data: `circles`: 20 positives uniform in the unit disc, 2000 negatives uniform in the ring "
        "1.8 < r < 3.5 (100:1), balanced validation set of 1000 (so accuracy = balanced accuracy). "
        "Weighted runs use fixed equilibrating weights from the pool's class counts, w_y = n / (2 n_y) "
        f"(docs/algorithms.md §4); ARLS' risk is then bias-corrected (eq. 3.49-3.50). {len(seeds)} seeds, "
        f"budget {budget}. The last row uses the app's 'balanced' weights, recomputed from the "
        "labelled counts after every label (an O(n^2 |L|) block reweight per label, hence fewer "
        "seeds and a smaller budget).",
        "Validation error (mean over seeds) after n labels:",
        md_table(["method", "seeds"] + [f"n={m}" for m in marks] + ["first n with error <= 1%", "positives queried"],
                  rows),
        plot_md,
    ]
    def curve_facts(summ):
        best = float(summ["mean"].min())
        best_at = int(summ.loc[summ["mean"].idxmin(), "n_labeled"])
        return best, best_at, float(summ["mean"].iloc[-1]), int(summ["n_labeled"].iloc[-1])

    w_reach = first_at_most(s_w, 0.01)
    unw_best, unw_best_at, unw_end, _ = curve_facts(s_unw)
    t_best, t_best_at, t_end, _ = curve_facts(s_unw_tight)
    t_reach = first_at_most(s_unw_tight, 0.01)
    pos_per_seed = [int((r["label"] == 1).sum()) for r in groups[keys[0]]]
    pos_unw = float(np.mean(pos_per_seed))
    never = sum(1 for v in pos_per_seed if v == 0)
    ours = (
        f"weighted ARLS (1, 0.1) error <= 1% after {w_reach if w_reach else f'> {budget}'} labels, "
        f"{fmt_pct(float(s_w['mean'].iloc[-1]))} at {budget}; unweighted ARLS (1.7, 0.2) "
        f"{fmt_pct(unw_end)} at {budget} ({pos_unw:.1f} positives queried); unweighted ARLS (1, 0.1) "
        f"<= 1% after {t_reach if t_reach else f'> {budget}'}, best {fmt_pct(t_best)} at {t_best_at}, "
        f"{fmt_pct(t_end)} at {budget}; weighted random {fmt_pct(value_at(s_rnd, min(50, budget)))} "
        f"at {min(50, budget)}, {fmt_pct(float(s_rnd['mean'].iloc[-1]))} at {budget}"
    )
    parts = []
    if w_reach is not None and w_reach <= 60:
        parts.append("Weighted bias-corrected ARLS reproduces Fig. 4-10.")
    if never:
        k = pos_per_seed.index(0)  # the first seed whose run never queried the disc
        marks_p = checkpoints(budget, (10, 20, 50, 100))
        p_disc = disc_probability(loader(seeds[k]), groups[keys[0]][k], wide["kernel"], wide["lam"], marks_p)
        parts.append(
            f"Unweighted ARLS with the thesis' width 1.7 and lambda 0.2 never asks about the "
            f"central disc in {never} of {len(pos_per_seed)} seeds: the wide kernel carries the "
            f"ring's negative labels into it, the estimated p(+1) there stays between "
            f"{min(p_disc):.2f} and {max(p_disc):.2f} (mean over the disc's points, seed {seeds[k]}, "
            f"after {marks_p[0]} to {marks_p[-1]} queries), so labelling it promises little risk "
            "reduction and its points rank among the last candidates (the estimated risk trusts "
            "its own probabilities); the thesis' circles must differ in geometry, which it does "
            "not give. With width 1 and lambda 0.1, unweighted ARLS finds the disc early."
        )
    if t_end > t_best + 0.002:
        parts.append(
            f"Unweighted ARLS (width 1) then slowly loses accuracy ({fmt_pct(t_best)} -> "
            f"{fmt_pct(t_end)}) as negatives saturate its training set: the thesis' effect after "
            "270 queries, weaker."
        )
    parts.append("The circles' construction is ours (docs/algorithms.md §4); the thesis gives only the 100:1 ratio.")
    note = " ".join(parts)
    return Finding("circles", "Imbalanced circles (§4.3.2, Figs. 4-9, 4-10)",
                   "weighted bias-corrected ARLS near perfect after ~50 queries and stays at 0; unweighted "
                   "ARLS perfect at ~50 but worse after 270; weighted random slower",
                   ours, note, details)


def disc_probability(ds, run, kernel: Kernel, lam: float, marks) -> list[float]:
    """Mean estimated p(+1) of the pool's positives after each of ``marks`` queries of ``run``.

    Replays the run (its initial labels, then its ``index`` / ``label`` columns in order) on an
    unweighted :class:`~core.learner.ActiveRLS` with the run's kernel and lambda and averages
    ``p = clip((f + 1) / 2, 0, 1)`` (docs/algorithms.md §2) over the points of class 1 (the circles' disc).

    Returns
    -------
    list of float
        One mean probability per mark.
    """
    X, _ = prepare_features(ds)
    learner = ActiveRLS.from_features(X, classes=ds.classes, kernel=kernel, lam=lam, weighting="none")
    initial = [int(i) for i in run.attrs.get("initial_indices", [])]
    if initial:
        learner.add_many(initial, ds.y[initial].tolist())
    queried, answers = run["index"].to_numpy(), run["label"].tolist()
    disc = np.flatnonzero(ds.y == 1)
    means, done = [], 0
    for m in marks:
        learner.add_many(queried[done:m].tolist(), answers[done:m])
        done = m
        means.append(float(learner.proba()[disc, 1].mean()))
    return means


# --------------------------------------------------------------------------- 6. MAGIC imbalanced
def exp_magic_imbalanced(settings: Settings) -> Finding:
    """Seed 002 §4.3.2, Fig. 4-11: weighted ARLS on MAGIC with 10 background per gamma."""
    seeds = list(range(settings.seeds))
    n_pool = settings.pick(1300, 440)
    n_val = settings.pick(2000, 500)
    budget = settings.pick(1000, 120)
    cache: dict[int, object] = {}

    def loader(seed):
        if seed not in cache:
            cache[seed] = load_dataset("magic-imbalanced", seed=seed, n=n_pool, n_val=n_val)
        return cache[seed]

    pool_weights = lambda ds: pool_ratio_weights(ds.y)  # noqa: E731
    common = {"kernel": Kernel("rbf", width=1.5), "lam": 0.1, "budget": budget, "weighting": pool_weights}
    arls = simulate_runs(settings, "MAGIC-imbalanced weighted ARLS", loader, seeds, strategy="arls", **common)
    rnd = simulate_runs(settings, "MAGIC-imbalanced weighted random", loader, seeds, strategy="random", **common)
    groups = {"weighted ARLS": arls, "weighted random": rnd}
    save_curves(settings, groups, "magic_imbalanced", ("accuracy", "balanced_accuracy", "estimated_risk"))
    fig = curve_figure(groups, metrics=("balanced_error", "estimated_risk"),
                       title=f"MAGIC, 10 hadrons per gamma (pool {n_pool}), balanced validation: width 1.5, lambda 0.1")
    plot_md = save_figure(settings, fig, "magic_imbalanced", "Imbalanced MAGIC")
    sa, sr = summarize_runs(arls, "balanced_accuracy"), summarize_runs(rnd, "balanced_accuracy")
    best_a, best_r = float(sa["mean"].max()), float(sr["mean"].max())
    best = max(best_a, best_r)
    near_a = first_at_least(sa, best - 0.01)
    near_r = first_at_least(sr, best - 0.01)
    risk = summarize_runs(arls, "estimated_risk")
    risk_min_at = int(risk.loc[risk["mean"].idxmin(), "n_labeled"])
    rare = loader(seeds[0]).params.get("rare_class", "gamma")
    first = min(50, budget)
    share_a = float(np.mean([np.mean(r["label"].iloc[:first] == rare) for r in arls]))
    share_r = float(np.mean([np.mean(r["label"].iloc[:first] == rare) for r in rnd]))
    pool_share = float(np.mean([np.mean(loader(s_).y == rare) for s_ in seeds]))
    marks = checkpoints(budget, (50, 100, 200, 400, 600, 800, 1000))
    rows = [[m, mean_sd([r.loc[r.n_labeled == m, "balanced_accuracy"].iloc[0] for r in arls]),
             mean_sd([r.loc[r.n_labeled == m, "balanced_accuracy"].iloc[0] for r in rnd])] for m in marks]
    details = [
        f"Data: `magic-imbalanced`: pool of {n_pool} with 10 hadrons (background) per gamma, "
        f"standardised; balanced validation set of {n_val} (the thesis' caption says balanced, its "
        "text 'original proportions'). RBF width 1.5, lambda 0.1, fixed equilibrating weights from "
        f"the pool's counts, bias-corrected risk. {len(seeds)} seeds, budget {budget} of {n_pool}.",
        md_table(["labels", "weighted ARLS balanced accuracy", "weighted random balanced accuracy"], rows),
        f"Within 1 point of the best mean balanced accuracy ({fmt_pct(best)}): ARLS after "
        f"{near_a if near_a else f'> {budget}'} labels, random after {near_r if near_r else f'> {budget}'}. "
        f"ARLS' mean estimated risk is smallest at {risk_min_at} labels. Share of the rare class "
        f"({rare}) among the first {first} queries: ARLS {share_a:.0%}, random {share_r:.0%}, pool {pool_share:.0%}.",
        plot_md,
    ]
    ours = (f"ARLS within 1 point of the best balanced accuracy ({fmt_pct(best)}) after "
            f"{near_a if near_a else f'> {budget}'} labels, random after {near_r if near_r else f'> {budget}'}; "
            f"ARLS' estimated risk minimal at {risk_min_at}")
    if settings.quick:
        note = "Quick run: small pool and budget, not comparable to the thesis' numbers."
    else:
        both = sa.merge(sr, on="n_labeled", suffixes=("_a", "_r"))
        behind = both.loc[both["mean_a"] < both["mean_r"], "n_labeled"]
        ahead_from = int(behind.iloc[-1]) + 1 if len(behind) else 1
        if near_a is not None and near_a <= 300:
            verdict = "Reproduced: weighted ARLS is near its best early."
        else:
            verdict = (
                f"Not reproduced: weighted ARLS needs {near_a if near_a else f'> {budget}'} labels "
                f"to come within 1 point of the best, not ~200; its mean curve is at or above "
                f"random's only from {ahead_from} labels on"
                + f", and random gets there after {near_r if near_r else f'> {budget}'}, not after "
                "nearly all points."
            )
        note = (
            f"{verdict} Gammas among the first 50 queries: ARLS {share_a:.0%}, random {share_r:.0%} "
            f"(pool {pool_share:.0%}). ARLS' estimated risk is minimal at {risk_min_at} labels (thesis ~600). "
            f"Budget {budget} of the {n_pool} points, to bound the run time."
        )
    return Finding("magic_imbalanced", "MAGIC, 10 background per gamma (§4.3.2, Fig. 4-11)",
                   "weighted ARLS near its best after ~200 queries, random only after nearly all 1300; "
                   "ARLS' estimated risk minimal near 600", ours, note, details)
