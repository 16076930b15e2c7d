"""Throwaway stand-in for labeler.session (used only until the real module lands).

Implements the LabelingSession contract with obvious slow code on small pools.
"""

from __future__ import annotations

import itertools
import json
import time
import types
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits, make_moons

_STORES: dict[str, dict] = {}
_ids = itertools.count(1)


@dataclass
class SessionConfig:
    dataset: str = "moons"
    dataset_options: dict = field(default_factory=dict)
    kernel: str = "rbf"
    width: object = "auto"
    lam: object = "auto"
    strategy: str = "arls"
    weighting: str = "balanced"
    standardize: bool = True
    layout: str = "pca"
    seed: int = 0
    name: str | None = None


@dataclass
class SessionInfo:
    id: str
    name: str
    dataset: str
    created: str
    n_labeled: int


def _load(name, options):
    n = int(options.get("n", 200))
    if name in ("moons", "moons-imbalanced"):
        X, y = make_moons(n, noise=0.1, random_state=0)
        return types.SimpleNamespace(name=name, X=X, y=y, classes=["0", "1"],
                                     feature_names=["x0", "x1"], ids=np.arange(n), layout=X,
                                     images=None, image_paths=None, frame=None)
    if name == "digits":
        d = load_digits()
        X = d.data[:n]
        imgs = (d.images[:n] * 16).clip(0, 255).astype(np.uint8)
        return types.SimpleNamespace(name=name, X=X, y=d.target[:n], classes=[str(c) for c in range(10)],
                                     feature_names=[f"p{i}" for i in range(64)], ids=np.arange(len(X)),
                                     layout=X[:, :2], images=imgs, image_paths=None, frame=None)
    p = Path(name)
    if p.suffix == ".csv":
        frame = pd.read_csv(p)
        num = frame.select_dtypes("number")
        if num.shape[1] == 0:
            raise ValueError(f"{p.name} has no numeric columns; add numeric feature columns.")
        if num.isna().any().any():
            raise ValueError(f"{p.name} contains NaN values; impute or drop those rows.")
        X = num.to_numpy(float)
        return types.SimpleNamespace(name=p.name, X=X, y=None, classes=[],
                                     feature_names=list(num.columns), ids=np.arange(len(X)),
                                     layout=X[:, :2] if X.shape[1] >= 2 else np.c_[X[:, 0], X[:, 0]],
                                     images=None, image_paths=None, frame=frame)
    raise ValueError(f"unknown data set {name!r}")


class LabelingSession:
    def __init__(self, store_path, sid, cfg, classes):
        self.store_path = str(store_path)
        self.id = sid
        self.config = cfg
        self.dataset = _load(cfg.dataset, cfg.dataset_options)
        self.classes = list(classes)
        self.learner = None
        self.layout = np.asarray(self.dataset.layout, float)
        self._events = []
        self._labels = {}
        self._sources = {}
        self._skipped = set()
        self._rng = np.random.default_rng(cfg.seed)

    # --- store -----------------------------------------------------------------------------
    @classmethod
    def create(cls, store_path, cfg):
        store = _STORES.setdefault(str(store_path), {})
        ds = _load(cfg.dataset, cfg.dataset_options)
        sid = f"s{next(_ids)}"
        s = cls(store_path, sid, cfg, ds.classes or ["positive", "negative"])
        store[sid] = dict(cfg=cfg, classes=list(s.classes), log=[], created=time.strftime("%Y-%m-%d %H:%M"))
        return s

    @classmethod
    def open(cls, store_path, session_id):
        store = _STORES.get(str(store_path), {})
        if session_id not in store:
            raise KeyError(f"no session {session_id!r} in {store_path}")
        rec = store[session_id]
        s = cls(store_path, session_id, replace(rec["cfg"]), rec["classes"])
        for ev in list(rec["log"]):
            getattr(s, "_apply_" + ev[0])(*ev[1:])
        return s

    @staticmethod
    def list_sessions(store_path):
        store = _STORES.get(str(store_path), {})
        out = []
        for sid, rec in store.items():
            s = LabelingSession.open(store_path, sid)
            out.append(SessionInfo(sid, rec["cfg"].name or sid, rec["cfg"].dataset, rec["created"],
                                   len(s._labels)))
        return out[::-1]

    @staticmethod
    def delete_session(store_path, session_id):
        _STORES.get(str(store_path), {}).pop(session_id, None)

    def refresh(self):
        return False

    def _log(self, *ev):
        _STORES[self.store_path][self.id]["log"].append(ev)

    # --- model -----------------------------------------------------------------------------
    def _fit(self):
        X = self.dataset.X
        n = len(X)
        T = max(len(self.classes), 1)
        if not self._labels:
            return np.zeros(n, int), np.full(n, 0.5), np.ones(n)
        idx = np.array(list(self._labels))
        lab = np.array([self.classes.index(self._labels[i]) for i in idx])
        d = ((X[:, None, :] - X[idx][None]) ** 2).sum(-1)
        nn = d.argmin(1)
        pred = lab[nn]
        conf = 1.0 / (1.0 + d.min(1))
        risk = d.min(1) * (1 - conf) + 1e-3 * np.arange(n) / n
        return pred, conf, risk

    def next_query(self):
        pred, conf, risk = self._fit()
        cand = [i for i in range(len(self.dataset.X)) if i not in self._labels and i not in self._skipped]
        if not cand:
            return None
        if self.config.strategy == "random":
            return int(np.random.default_rng(len(self._labels)).choice(cand))
        if self.config.strategy == "margin":
            return int(min(cand, key=lambda i: conf[i]))
        return int(min(cand, key=lambda i: -risk[i]))

    def predictions(self):
        pred, conf, risk = self._fit()
        n = len(self.dataset.X)
        lab = [self._labels.get(i) for i in range(n)]
        er = risk.copy()
        for i in self._labels:
            er[i] = np.inf
        return pd.DataFrame(dict(predicted=[self.classes[p] for p in pred], confidence=conf,
                                 expected_risk=er, label=lab,
                                 source=[self._sources.get(i) for i in range(n)]))

    # --- actions ---------------------------------------------------------------------------
    def label(self, index, label, source="queried", expected_query=None):
        if label not in self.classes:
            raise ValueError(f"label {label!r} is not a class; add it first")
        if expected_query is not None and expected_query != self.next_query():
            return False
        if index in self._labels:
            return False
        self._log("label", int(index), label, source)
        self._apply_label(int(index), label, source)
        return True

    def _apply_label(self, index, label, source):
        self._labels[index] = label
        self._sources[index] = source
        self._events.append(("label", [index], label, source, time.time(), self._risk()))

    def _risk(self):
        return float(1.0 / (1 + len(self._labels)))

    def skip(self, index):
        if index in self._labels or index in self._skipped:
            return False
        self._log("skip", int(index))
        self._apply_skip(int(index))
        return True

    def _apply_skip(self, index):
        self._skipped.add(index)
        self._events.append(("skip", [index], None, None, time.time(), None))

    def undo(self):
        if not self._events:
            return None
        self._log("undo")
        return self._apply_undo()

    def _apply_undo(self):
        kind, idx, *_ = self._events.pop()
        for i in idx:
            self._labels.pop(i, None)
            self._sources.pop(i, None)
            self._skipped.discard(i)
        return idx[-1]

    def add_class(self, name):
        name = str(name).strip()
        if not name or name in self.classes:
            raise ValueError(f"class name {name!r} is empty or exists already")
        self._log("add_class", name)
        self._apply_add_class(name)

    def _apply_add_class(self, name):
        self.classes.append(name)

    def accept_predictions(self, indices):
        pred = self.predictions()["predicted"]
        idx = [int(i) for i in indices if int(i) not in self._labels]
        self._log("accept", idx)
        return self._apply_accept(idx, pred)

    def _apply_accept(self, idx, pred=None):
        if pred is None:
            pred = self.predictions()["predicted"]
        for i in idx:
            self._labels[i] = pred[i]
            self._sources[i] = "accepted"
        self._events.append(("accept", list(idx), None, "accepted", time.time(), self._risk()))
        return len(idx)

    def _setting(self, key, value):
        self._log("setting", key, value)
        self._apply_setting(key, value)

    def _apply_setting(self, key, value):
        setattr(self.config, key, value)

    def set_strategy(self, name):
        if name not in ("arls", "margin", "random"):
            raise ValueError(f"unknown strategy {name!r}")
        self._setting("strategy", name)

    def set_weighting(self, name):
        self._setting("weighting", name)

    def set_lam(self, value):
        if value != "auto" and not float(value) > 0:
            raise ValueError("lam must be > 0 or 'auto'")
        self._setting("lam", value)

    def set_width(self, value):
        if value != "auto" and not float(value) > 0:
            raise ValueError("width must be > 0 or 'auto'")
        self._setting("width", value)

    # --- views -----------------------------------------------------------------------------
    @property
    def history(self):
        rows = []
        n_lab = 0
        for order, (kind, idx, label, source, ts, risk) in enumerate(self._events):
            if kind == "skip":
                continue
            for i in idx:
                n_lab += 1
                rows.append(dict(order=len(rows), index=i, id=i, label=self._labels.get(i, label),
                                 source=source, timestamp=ts, n_labeled=n_lab, estimated_risk=risk))
        return pd.DataFrame(rows, columns=["order", "index", "id", "label", "source", "timestamp",
                                           "n_labeled", "estimated_risk"])

    def class_counts(self):
        out = {c: 0 for c in self.classes}
        for v in self._labels.values():
            out[v] += 1
        return out

    def confidence_bins(self, n_bins=10):
        pred, conf, _ = self._fit()
        edges = np.linspace(0, 1, n_bins + 1)
        idx = list(self._labels)
        acc, cnt = [], []
        for lo, hi in zip(edges[:-1], edges[1:]):
            m = [i for i in idx if lo <= conf[i] < hi]
            cnt.append(len(m))
            acc.append(np.mean([self.classes[pred[i]] == self._labels[i] for i in m]) if m else np.nan)
        from core.confidence import ConfidenceBins
        return ConfidenceBins(edges=edges, counts=np.array(cnt), accuracy=np.array(acc),
                              mean_confidence=np.full(n_bins, np.nan))

    def points_in_bin(self, lo, hi):
        _, conf, _ = self._fit()
        return np.array([i for i in range(len(conf)) if i not in self._labels and lo <= conf[i] < hi], int)

    def loo_curve(self):
        lams = np.geomspace(1e-3, 10, 15)
        if len(self._labels) < 3:
            raise ValueError("Leave-one-out tuning needs at least 3 labelled points")
        return dict(lams=lams, errors=0.2 + 0.1 * np.cos(np.log(lams)), lam=0.1, current=0.3)

    def export(self, path, format="csv", include_predictions=False):
        h = self.history
        rows = [dict(id=i, label=l, source=self._sources[i]) for i, l in self._labels.items()]
        df = pd.DataFrame(rows, columns=["id", "label", "source"])
        path = Path(path)
        if format == "csv":
            df.to_csv(path, index=False)
        elif format == "jsonl":
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        elif format == "parquet":
            df.to_parquet(path)
        elif format == "zip":
            import zipfile
            with zipfile.ZipFile(path, "w") as z:
                z.writestr("labels.csv", df.to_csv(index=False))
        else:
            raise ValueError(format)
        return path


def install(monkeypatch=None):
    """Register this module as ``labeler.session``."""
    import sys
    mod = types.ModuleType("labeler.session")
    mod.LabelingSession = LabelingSession
    mod.SessionConfig = SessionConfig
    mod.SessionInfo = SessionInfo
    if monkeypatch is not None:
        monkeypatch.setitem(sys.modules, "labeler.session", mod)
    else:
        sys.modules["labeler.session"] = mod
    return mod
