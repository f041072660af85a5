"""The report's learners (Srivastava et al., Table 6) in scikit-learn style.

Each learner takes its hyper-parameters in the constructor (fixed random seeds), learns in
``fit(X, y) -> self`` (attributes ending in ``_``), and predicts with ``predict(X)``. Missing
values are replaced by the training medians; SVR, kNN and the linear models also standardise.

A fitted learner exports its state as plain arrays (``state() -> (meta, arrays)``) and a learner
rebuilt from that state (``from_state``) predicts with pure numpy/scipy code, so saved models
never unpickle anything: tree ensembles keep their node arrays, SVR its support vectors, kNN its
training points, linear models their coefficients.

>>> import numpy as np
>>> X = np.arange(20.0).reshape(10, 2); y = X[:, 0] * 2 + 1
>>> m = make_learner("linear").fit(X, y)
>>> round(float(m.predict(np.array([[4.0, 5.0]]))[0]), 6)
9.0
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..errors import GpuprojError

LEARNERS = {
    "linear": "Linear regression (ordinary least squares)",
    "ridge": "Ridge regression (L2)",
    "lasso": "Lasso regression (L1)",
    "svr": "support vector regression, RBF kernel",
    "rf": "Random Forest",
    "gb": "gradient boosting (scikit-learn HistGradientBoosting)",
    "knn": "k nearest neighbours",
}


class Learner:
    """Base: imputation and optional standardisation around an estimator."""

    kind = ""
    scale = False

    def __init__(self, **params):
        self.params = params

    def get_params(self):
        return dict(self.params)

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.params.items())})"

    # preprocessing -------------------------------------------------------------------------
    def _prep_fit(self, X):
        X = np.asarray(X, float)
        with np.errstate(all="ignore"):
            med = np.nanmedian(np.where(np.isfinite(X), X, np.nan), axis=0) if len(X) else \
                np.zeros(X.shape[1])
        self.median_ = np.where(np.isfinite(med), med, 0.0)
        Z = self._impute(X)
        if self.scale:
            self.mean_ = Z.mean(axis=0)
            sd = Z.std(axis=0)
            self.scale_ = np.where(sd > 0, sd, 1.0)
            Z = (Z - self.mean_) / self.scale_
        return Z

    def _impute(self, X):
        X = np.array(X, float, copy=True)
        bad = ~np.isfinite(X)
        if bad.any():
            X[bad] = np.broadcast_to(self.median_, X.shape)[bad]
        return X

    def _prep(self, X):
        Z = self._impute(X)
        if self.scale:
            Z = (Z - self.mean_) / self.scale_
        return Z

    # contract ---------------------------------------------------------------------------
    def fit(self, X, y) -> Learner:
        Z = self._prep_fit(X)
        self.est_ = self._make()
        self.est_.fit(Z, np.asarray(y, float))
        return self

    def predict(self, X) -> np.ndarray:
        if not hasattr(self, "median_"):
            raise GpuprojError(f"{type(self).__name__} is not fitted")
        Z = self._prep(X)
        if len(Z) == 0:
            return np.zeros(0)
        if getattr(self, "est_", None) is not None:
            return np.asarray(self.est_.predict(Z), float)
        return self._numpy_predict(Z)

    # state ------------------------------------------------------------------------------
    def state(self) -> tuple[dict, dict]:
        if getattr(self, "est_", None) is not None:  # fitted: its arrays, as loading sets them
            self._take(self.est_)
        meta = {"kind": self.kind, "params": self.params}
        arrays = {"median": self.median_}
        if self.scale:
            arrays.update(mean=self.mean_, scale=self.scale_)
        m, a = self._export()
        meta.update(m)
        arrays.update(a)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict, compiled: bool = False) -> Learner:
        """Rebuild from ``state()``. ``compiled``: tree ensembles may use scikit-learn's
        compiled tree predictors (only when the saving scikit-learn version is installed)."""
        meta = dict(meta, compiled=compiled)
        k = LEARNER_CLASSES[meta["kind"]]
        self = k(**meta.get("params", {}))
        self.median_ = arrays["median"]
        if self.scale:
            self.mean_, self.scale_ = arrays["mean"], arrays["scale"]
        self.est_ = None
        # a damaged file must stop here with a ValueError, not later in compiled code or in a
        # loop over tree nodes: every array is checked against the n features it serves
        n = self.median_.shape[0] if self.median_.ndim == 1 else -1
        _need(_finite(self.median_, (n,)), "median", "a finite vector")
        if self.scale:
            _need(_finite(self.mean_, (n,)), "mean", f"{n} finite values")
            _need(_finite(self.scale_, (n,)) and (self.scale_ > 0).all(), "scale",
                  f"{n} positive values")
        self._import(meta, arrays, n)
        return self

    def _make(self):
        raise NotImplementedError

    def _take(self, est) -> None:
        """Keep the arrays of the fitted scikit-learn estimator ``est`` in the attributes that
        ``_import`` sets, so that ``_export`` writes a fitted and a loaded learner alike."""
        raise NotImplementedError

    def _export(self):
        """(meta, arrays) of the state, from the attributes ``_import`` (or ``_take``) set."""
        raise NotImplementedError

    def _import(self, meta, arrays, n: int):
        """Take the arrays of ``_export`` back, checked against ``n`` features."""
        raise NotImplementedError

    def _numpy_predict(self, Z):
        raise NotImplementedError


def _need(ok, name: str, what: str) -> None:
    if not ok:
        raise ValueError(f"array '{name}' must be {what}")


def _one(arrays, name: str) -> float:
    """The single finite value that array ``name`` holds."""
    a = np.asarray(arrays[name])
    _need(_finite(a, (1,)), name, "one finite value")
    return float(a[0])


def _finite(a, shape) -> bool:
    """Numbers of ``shape`` within float32's range (the inputs' range: see
    ``PairFeatures.matrix``); larger ones overflow inside distances and decompositions."""
    a = np.asarray(a)
    return (a.dtype.kind in "fiu" and a.shape == shape
            and bool((np.abs(a) <= np.finfo(np.float32).max).all()))


# linear family ------------------------------------------------------------------------------
class _LinearBase(Learner):
    scale = True

    def _take(self, est):
        self.coef_np_ = np.ravel(est.coef_).astype(float)
        self.intercept_np_ = float(est.intercept_)

    def _export(self):
        return {}, {"coef": self.coef_np_, "intercept": np.atleast_1d(self.intercept_np_)}

    def _import(self, meta, arrays, n):
        self.coef_np_, self.intercept_np_ = arrays["coef"], _one(arrays, "intercept")
        _need(_finite(self.coef_np_, (n,)), "coef", f"{n} finite values")

    def _numpy_predict(self, Z):
        return Z @ self.coef_np_ + self.intercept_np_


class LinearLearner(_LinearBase):
    kind = "linear"

    def _make(self):
        from sklearn.linear_model import LinearRegression

        return LinearRegression()


class RidgeLearner(_LinearBase):
    kind = "ridge"

    def __init__(self, alpha: float = 1.0):
        super().__init__(alpha=alpha)

    def _make(self):
        from sklearn.linear_model import Ridge

        return Ridge(alpha=self.params["alpha"])


class LassoLearner(_LinearBase):
    kind = "lasso"

    def __init__(self, alpha: float = 0.001, max_iter: int = 5000):
        super().__init__(alpha=alpha, max_iter=max_iter)

    def _make(self):
        from sklearn.linear_model import Lasso

        return Lasso(alpha=self.params["alpha"], max_iter=self.params["max_iter"],
                     random_state=0)

    def fit(self, X, y):
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return super().fit(X, y)


# SVR and kNN: subsampled training rows, numpy predictions -----------------------------------
class _Subsampled(Learner):
    """A learner whose cost grows with the training rows times the rows it predicts: at most
    ``max_samples`` training rows are used (drawn with ``random_state``). Fitted or loaded, it
    predicts with the same numpy code from the exported state."""

    def _rows(self, X, y):
        from .pairs import subsample

        X, y = np.asarray(X, float), np.asarray(y, float)
        idx = subsample(len(X), self.params["max_samples"], self.params["random_state"])
        return X[idx], y[idx]


class SVRLearner(_Subsampled):
    """RBF support vector regression. Training grows with the square of the samples, hence
    ``max_samples``. Predictions come from the support vectors with numpy: libsvm's own
    predict took 18 s for 10^5 pairs on the largest table where this takes 2 s (same values
    to 1e-12)."""

    kind = "svr"
    scale = True

    def __init__(self, C: float = 10.0, epsilon: float = 0.01, gamma="scale",
                 max_samples: int = 4000, random_state: int = 0):
        super().__init__(C=C, epsilon=epsilon, gamma=gamma, max_samples=max_samples,
                         random_state=random_state)

    def fit(self, X, y):
        from sklearn.svm import SVR

        X, y = self._rows(X, y)
        p = self.params
        e = SVR(kernel="rbf", C=p["C"], epsilon=p["epsilon"], gamma=p["gamma"])
        e.fit(self._prep_fit(X), y)
        self.gamma_, self.sv_ = float(e._gamma), e.support_vectors_
        self.dual_, self.b_ = np.ravel(e.dual_coef_), float(e.intercept_[0])
        self.est_ = None
        return self

    def _export(self):
        return {"gamma_value": self.gamma_}, {
            "support_vectors": self.sv_, "dual_coef": self.dual_,
            "intercept": np.atleast_1d(self.b_)}

    def _import(self, meta, arrays, n):
        self.gamma_ = float(meta["gamma_value"])
        self.sv_, self.dual_ = arrays["support_vectors"], arrays["dual_coef"]
        self.b_ = _one(arrays, "intercept")
        m = len(self.dual_) if np.ndim(self.dual_) == 1 else -1
        _need(_finite(self.dual_, (m,)), "dual_coef", "a finite vector")
        _need(_finite(self.sv_, (m, n)), "support_vectors", f"{m} x {n} finite values")
        _need(np.isfinite(self.gamma_) and self.gamma_ > 0, "gamma_value", "positive")

    def _numpy_predict(self, Z):
        out = np.empty(len(Z))
        sv2 = (self.sv_ ** 2).sum(axis=1)
        step = max(1, 2_000_000 // max(len(self.sv_), 1))
        for i in range(0, len(Z), step):
            z = Z[i:i + step]
            d2 = (z ** 2).sum(axis=1)[:, None] + sv2[None, :] - 2 * z @ self.sv_.T
            out[i:i + step] = np.exp(-self.gamma_ * np.maximum(d2, 0)) @ self.dual_ + self.b_
        return out


class KNNLearner(_Subsampled):
    """k nearest neighbours (a k-d tree over the standardised training rows, queried on every
    core). A query searches the training rows, hence ``max_samples``: on the largest table
    (60,000 training pairs, 2 cores) 10^5 predictions took 24-30 s from all rows, 7.6 s from
    10,000 and 4.1 s from 4,000, the default, with the tree in all 64 feature dimensions.

    Many features are ratios or differences of others, so the training rows span a subspace
    (25 of the 64 dimensions on that table; the next singular value is 1e-14 of the first).
    The tree is built in it: a query's distance to every training row is its distance within
    the subspace plus the same distance from the subspace, so the neighbours are the same
    (same sets on 17,694 queries there), and a query took a tenth of the time (0.09 against
    0.87 s for those queries)."""

    kind = "knn"
    scale = True
    RANK_TOL = 1e-10  # singular values below this fraction of the largest span no direction

    def __init__(self, n_neighbors: int = 5, weights: str = "uniform", max_samples: int = 4000,
                 random_state: int = 0):
        super().__init__(n_neighbors=n_neighbors, weights=weights, max_samples=max_samples,
                         random_state=random_state)

    def fit(self, X, y):
        X, y = self._rows(X, y)
        self.train_X_, self.train_y_ = self._prep_fit(X), y
        self.tree_, self.est_ = None, None
        return self

    def _export(self):
        return {}, {"train_X": self.train_X_, "train_y": self.train_y_}

    def _import(self, meta, arrays, n):
        self.train_X_, self.train_y_ = arrays["train_X"], arrays["train_y"]
        self.tree_ = None
        m = len(self.train_y_) if np.ndim(self.train_y_) == 1 else -1
        _need(m > 0 and _finite(self.train_y_, (m,)), "train_y", "a finite vector")
        _need(_finite(self.train_X_, (m, n)), "train_X", f"{m} x {n} finite values")
        k, w = self.params.get("n_neighbors"), self.params.get("weights")
        _need(isinstance(k, int) and k > 0 and w in ("uniform", "distance"), "params",
              "n_neighbors > 0 and weights 'uniform' or 'distance'")

    def _tree(self):
        """(center, basis of the training rows' subspace, k-d tree of their coordinates)."""
        from scipy.spatial import cKDTree

        if self.tree_ is None:
            c = self.train_X_.mean(axis=0)
            _, sv, vt = np.linalg.svd(self.train_X_ - c, full_matrices=False)
            rank = max(1, int((sv > self.RANK_TOL * sv[0]).sum()))
            basis = vt[:rank].T
            self.tree_ = (c, basis, cKDTree((self.train_X_ - c) @ basis))
        return self.tree_

    def _numpy_predict(self, Z):
        c, basis, tree = self._tree()
        k = min(self.params["n_neighbors"], len(self.train_y_))
        zc = Z - c
        zp = zc @ basis
        d, i = tree.query(zp, k=k, workers=-1)
        d, i = d.reshape(len(Z), k), i.reshape(len(Z), k)
        y = self.train_y_[i]
        if self.params["weights"] == "distance":
            off = ((zc - zp @ basis.T) ** 2).sum(axis=1)  # squared distance from the subspace
            with np.errstate(divide="ignore"):
                w = 1.0 / np.sqrt(d ** 2 + off[:, None])
            exact = ~np.isfinite(w)
            w = np.where(exact.any(axis=1, keepdims=True), exact.astype(float), w)
            return (w * y).sum(axis=1) / w.sum(axis=1)
        return y.mean(axis=1)


# trees ---------------------------------------------------------------------------------------
def _stack_trees(trees):
    """Concatenate trees (dicts of feature, threshold, left, right, value, missing_left; leaves
    have feature -1) into one node array set with global child indices and root offsets."""
    offs, acc = [], 0
    for t in trees:
        offs.append(acc)
        acc += len(t["feature"])
    out = {k: np.concatenate([t[k] for t in trees]) for k in
           ("feature", "threshold", "value", "missing_left")}
    for k in ("left", "right"):
        out[k] = np.concatenate([np.where(t[k] >= 0, t[k] + o, -1) for t, o in zip(trees, offs)])
    out["roots"] = np.asarray(offs, np.int64)
    return out


def _tree_predict_sum(nodes, Z, float32: bool):
    """Sum over trees of the leaf value each row of ``Z`` reaches (vectorised over rows and
    trees; iterates once per tree level). ``float32``: compare like scikit-learn's trees, which
    cast inputs to float32."""
    if float32:
        Z = Z.astype(np.float32).astype(np.float64)
    feat, thr = nodes["feature"], nodes["threshold"]
    left, right, miss = nodes["left"], nodes["right"], nodes["missing_left"].astype(bool)
    roots = nodes["roots"]
    n = len(Z)
    total = np.zeros(n)
    step = max(1, 4_000_000 // max(len(roots), 1))
    for i in range(0, n, step):
        z = Z[i:i + step]
        m = len(z)
        node = np.broadcast_to(roots, (m, len(roots))).copy()
        rows = np.broadcast_to(np.arange(m)[:, None], node.shape)
        while True:
            f = feat[node]
            active = f >= 0
            if not active.any():
                break
            r, c = np.nonzero(active)
            nd = node[r, c]
            x = z[rows[r, c], f[r, c]]
            go_left = np.where(np.isnan(x), miss[nd], x <= thr[nd])
            node[r, c] = np.where(go_left, left[nd], right[nd])
        total[i:i + step] = nodes["value"][node].sum(axis=1)
    return total


def _check_trees(nodes, n: int) -> None:
    """Raise ValueError unless ``nodes`` (``_stack_trees``) are trees over ``n`` features that
    every walk leaves: each internal node's children lie after it within its own tree (as
    scikit-learn's builders number them), so no walk can cycle or index outside the arrays."""
    keys = ("feature", "threshold", "left", "right", "value", "missing_left", "roots")
    _need(all(k in nodes for k in keys), "tree_*", "all of " + ", ".join(keys))
    size = len(nodes["feature"])
    for k in keys[:-1]:
        _need(np.ndim(nodes[k]) == 1 and len(nodes[k]) == size, f"tree_{k}",
              f"a vector of {size} values")
    for k in ("feature", "left", "right", "roots"):
        _need(nodes[k].dtype.kind in "iu", f"tree_{k}", "integers")
    # a split that sends only missing values one way may have an infinite threshold
    _need(nodes["threshold"].dtype.kind == "f" and not np.isnan(nodes["threshold"]).any(),
          "tree_threshold", "numbers")
    _need(nodes["value"].dtype.kind == "f" and np.isfinite(nodes["value"]).all(), "tree_value",
          "finite numbers")
    roots = nodes["roots"]
    _need(np.ndim(roots) == 1 and len(roots) > 0 and roots[0] == 0
          and (np.diff(roots) > 0).all() and roots[-1] < size, "tree_roots",
          "increasing node offsets starting at 0")
    end = np.repeat(np.append(roots[1:], size), np.diff(np.append(roots, size)))
    idx = np.arange(size)
    feat, left, right = nodes["feature"], nodes["left"], nodes["right"]
    inner = left >= 0
    _need(((right >= 0) == inner).all() and ((feat >= 0) == inner).all()
          and (feat < n).all(), "tree_feature",
          f"a feature index below {n} exactly where a node has children")
    _need(((left > idx) & (left < end) & (right > idx) & (right < end))[inner].all(),
          "tree_left", "child indices after their node within its tree")


def _split_trees(nodes):
    """Per-tree views of stacked node arrays with local child indices (-1 for leaves)."""
    roots = list(nodes["roots"]) + [len(nodes["feature"])]
    for a, b in zip(roots[:-1], roots[1:]):
        yield {k: (np.where(nodes[k][a:b] >= 0, nodes[k][a:b] - a, -1) if k in ("left", "right")
                   else nodes[k][a:b]) for k in ("feature", "threshold", "left", "right", "value",
                                                 "missing_left")}


def _depth(t) -> int:
    depth, cur = 0, np.array([0])
    while True:
        cur = cur[t["left"][cur] >= 0]
        if len(cur) == 0:
            return depth
        cur = np.concatenate([t["left"][cur], t["right"][cur]])
        depth += 1


def _compiled_trees(nodes, kind):
    """The trees rebuilt as scikit-learn's compiled predictors from the plain arrays (no
    unpickling: only the documented node records are filled in), or None where this
    scikit-learn cannot take them. Used only when the saved and installed versions match;
    ``_tree_predict_sum`` is the version-independent path."""
    try:
        if kind == "rf":
            from sklearn.tree._tree import NODE_DTYPE, Tree

            out = []
            for t in _split_trees(nodes):
                n = len(t["feature"])
                rec = np.zeros(n, dtype=NODE_DTYPE)
                rec["left_child"], rec["right_child"] = t["left"], t["right"]
                rec["feature"] = np.where(t["left"] < 0, -2, t["feature"])
                rec["threshold"] = np.where(t["left"] < 0, -2.0, t["threshold"])
                rec["missing_go_to_left"] = t["missing_left"]
                tree = Tree(1, np.array([1], dtype=np.intp), 1)
                tree.__setstate__({"max_depth": _depth(t), "node_count": n, "nodes": rec,
                                   "values": t["value"].reshape(n, 1, 1).astype(float)})
                out.append(tree)

            def predict(Z):
                Z32 = np.ascontiguousarray(Z, dtype=np.float32)
                return sum(np.asarray(tr.predict(Z32)).reshape(len(Z32), -1)[:, 0] for tr in out)

            return predict
        from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE
        from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

        preds = []
        for t in _split_trees(nodes):
            n = len(t["feature"])
            rec = np.zeros(n, dtype=PREDICTOR_RECORD_DTYPE)
            leaf = t["left"] < 0
            rec["value"], rec["is_leaf"] = t["value"], leaf
            rec["feature_idx"] = np.where(leaf, 0, t["feature"])
            rec["num_threshold"] = t["threshold"]
            rec["missing_go_to_left"] = t["missing_left"]
            rec["left"], rec["right"] = np.where(leaf, 0, t["left"]), np.where(leaf, 0, t["right"])
            empty = np.zeros((0, 8), dtype=np.uint32)
            preds.append(TreePredictor(rec, empty, empty))

        def predict(Z):
            Z = np.ascontiguousarray(Z, dtype=np.float64)
            cats, fmap = np.zeros((0, 8), dtype=np.uint32), np.zeros(0, dtype=np.uint32)
            return sum(p.predict(Z, cats, fmap, 1) for p in preds)

        return predict
    except Exception:  # noqa: BLE001 - another scikit-learn layout: the numpy path predicts
        return None


class RandomForestLearner(Learner):
    """Random Forest. Defaults: 100 trees, a third of the features per split (Breiman's choice
    for regression), leaves of at least 3 pairs. The report's 200 full trees on every feature
    took 357 s to train on the largest public table (NeuSight bmm, 60,000 pairs, 2 cores, 90 %
    conformal interval); these defaults about 50 s, and on leave-one-GPU-out over the four small
    tables a lower median APE on each (Rodinia 12.1 -> 9.1, 19.1 -> 15.8, 23.6 -> 17.3 %, seed
    report 46.4 -> 45.5 %) at a MAPE within 2.5 points or better."""

    kind = "rf"

    def __init__(self, n_estimators: int = 100, max_features=0.33, min_samples_leaf: int = 3,
                 max_depth: int | None = None, max_samples: int | None = None,
                 random_state: int = 0, n_jobs: int = 2):
        super().__init__(n_estimators=n_estimators, max_features=max_features,
                         min_samples_leaf=min_samples_leaf, max_depth=max_depth,
                         max_samples=max_samples, random_state=random_state, n_jobs=n_jobs)

    def _make(self):
        from sklearn.ensemble import RandomForestRegressor

        p = self.params
        return RandomForestRegressor(
            n_estimators=p["n_estimators"], max_features=p["max_features"],
            min_samples_leaf=p["min_samples_leaf"], max_depth=p["max_depth"],
            max_samples=p["max_samples"], random_state=p["random_state"], n_jobs=p["n_jobs"])

    def _take(self, est):
        trees = []
        for e in est.estimators_:
            t = e.tree_
            trees.append({"feature": t.feature.astype(np.int64), "threshold": t.threshold,
                          "left": t.children_left.astype(np.int64),
                          "right": t.children_right.astype(np.int64),
                          "value": t.value[:, 0, 0] / len(est.estimators_),
                          "missing_left": np.asarray(getattr(t, "missing_go_to_left",
                                                             np.zeros(t.node_count)), np.uint8)})
        self.nodes_ = _stack_trees(trees)
        self.nodes_["feature"] = np.where(self.nodes_["left"] < 0, -1, self.nodes_["feature"])
        self.float32_ = True

    def _export(self):
        return {"float32": self.float32_}, {f"tree_{k}": v for k, v in self.nodes_.items()}

    def _import(self, meta, arrays, n):
        self.nodes_ = {k[5:]: v for k, v in arrays.items() if k.startswith("tree_")}
        self.float32_ = bool(meta.get("float32", True))
        _check_trees(self.nodes_, n)  # first: scikit-learn's compiled trees trust the indices
        self.compiled_ = _compiled_trees(self.nodes_, "rf") if meta.get("compiled") else None

    def _numpy_predict(self, Z):
        if self.compiled_ is not None:
            return self.compiled_(Z)
        return _tree_predict_sum(self.nodes_, Z, self.float32_)


# Below this many rows gradient boosting fits and predicts on one OpenMP thread: threads cost
# more than they give there (2 cores, 500 rows: 0.13 s on two, 0.09 s on one), and on a machine
# busy with other work far more (18 rows beside two busy processes: 31 s on two, 0.5 s on one);
# from about 10^4 rows two threads gain (60000 rows: 0.72 against 1.17 s).
THREADED_MIN_ROWS = 10_000


def _threads_for(rows: int):
    """One OpenMP thread under ``THREADED_MIN_ROWS`` rows, else as many as there are."""
    if rows >= THREADED_MIN_ROWS:
        return contextlib.nullcontext()
    # threadpoolctl limits only the OpenMP runtimes already loaded when the limit is entered,
    # and scikit-learn loads its own on import: imported inside the limit (the first fit of a
    # process), the fit ran on every core (18 rows beside busy processes: 66 s, not 1 s)
    import sklearn.ensemble  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1, user_api="openmp")


class HistGBLearner(Learner):
    kind = "gb"
    # losses whose trees sum to the log of the prediction (scikit-learn's predict takes exp)
    LOG_LINK = ("poisson", "gamma")

    def fit(self, X, y) -> Learner:
        with _threads_for(len(X)):
            return super().fit(X, y)

    def predict(self, X) -> np.ndarray:
        with _threads_for(len(X)):
            return super().predict(X)

    def __init__(self, max_iter: int = 120, learning_rate: float = 0.1,
                 max_leaf_nodes: int = 15, min_samples_leaf: int = 20, l2_regularization=0.0,
                 max_bins: int = 63, loss: str = "squared_error", random_state: int = 0):
        super().__init__(max_iter=max_iter, learning_rate=learning_rate,
                         max_leaf_nodes=max_leaf_nodes, min_samples_leaf=min_samples_leaf,
                         l2_regularization=l2_regularization, max_bins=max_bins, loss=loss,
                         random_state=random_state)

    def _make(self):
        from sklearn.ensemble import HistGradientBoostingRegressor

        p = self.params
        return HistGradientBoostingRegressor(
            max_iter=p["max_iter"], learning_rate=p["learning_rate"],
            max_leaf_nodes=p["max_leaf_nodes"], min_samples_leaf=p["min_samples_leaf"],
            l2_regularization=p["l2_regularization"], max_bins=p["max_bins"], loss=p["loss"],
            early_stopping=False,
            random_state=p["random_state"])

    def _take(self, est):
        trees = []
        for (pred,) in est._predictors:
            nd = pred.nodes
            leaf = nd["is_leaf"].astype(bool)
            trees.append({"feature": np.where(leaf, -1, nd["feature_idx"]).astype(np.int64),
                          "threshold": nd["num_threshold"].astype(float),
                          "left": np.where(leaf, -1, nd["left"].astype(np.int64)),
                          "right": np.where(leaf, -1, nd["right"].astype(np.int64)),
                          "value": np.where(leaf, nd["value"], 0.0),
                          "missing_left": nd["missing_go_to_left"].astype(np.uint8)})
        self.nodes_ = _stack_trees(trees) if trees else {}
        self.baseline_ = float(np.ravel(est._baseline_prediction)[0])

    def _export(self):
        return ({"baseline": self.baseline_, "float32": False},
                {f"tree_{k}": v for k, v in self.nodes_.items()})

    def _import(self, meta, arrays, n):
        self.nodes_ = {k[5:]: v for k, v in arrays.items() if k.startswith("tree_")}
        self.baseline_ = float(meta["baseline"])
        _need(np.isfinite(self.baseline_), "baseline", "finite")
        self.compiled_ = None
        if self.nodes_:  # none: the baseline alone (a constant target)
            _check_trees(self.nodes_, n)  # first: scikit-learn's compiled trees trust them
            self.compiled_ = _compiled_trees(self.nodes_, "gb") if meta.get("compiled") else None

    def _numpy_predict(self, Z):
        if not self.nodes_:
            raw = np.full(len(Z), self.baseline_)
        elif self.compiled_ is not None:
            raw = self.baseline_ + self.compiled_(Z)
        else:
            raw = self.baseline_ + _tree_predict_sum(self.nodes_, Z, False)
        return np.exp(raw) if self.params.get("loss") in self.LOG_LINK else raw


LEARNER_CLASSES = {"linear": LinearLearner, "ridge": RidgeLearner, "lasso": LassoLearner,
                   "svr": SVRLearner, "rf": RandomForestLearner, "gb": HistGBLearner,
                   "knn": KNNLearner}


def make_learner(kind: str, **params) -> Learner:
    """A learner by name (``LEARNERS``) with hyper-parameters ``params``."""
    if kind not in LEARNER_CLASSES:
        raise GpuprojError(f"unknown learner '{kind}' (known: {', '.join(LEARNERS)})")
    return LEARNER_CLASSES[kind](**params)
