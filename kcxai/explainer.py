"""An explainer object, fitted once and applied to whole tables (the practitioner's path).

:class:`Explainer` imports a model once (a kcxai model, a fitted scikit-learn estimator or
``Pipeline``), compiles it once, and explains one row (:meth:`Explainer.explain_one`) or many
(:meth:`Explainer.explain`, an :class:`~kcxai.ExplanationSet`). The functional API
(:func:`kcxai.min_idrs`, ...) stays: the explainer only calls it on its cached compiled form.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._table import TableReader
from kcxai.explain._result import Explanation
from kcxai.explanation_set import ExplanationSet

__all__ = ["Explainer"]


def _import(model: Any, X_train: Any, distribution: Any) -> tuple[Any, TableReader]:
    """The kcxai model of what the user passed, and the reader of its tables."""
    from kcxai.compilers._base import CompiledModel
    from kcxai.models._base import Classifier

    from kcxai.models._pipeline import ImportedPipeline

    if isinstance(model, CompiledModel):
        model = model.model
    if isinstance(model, Classifier):
        return model, TableReader.for_space(model.space)
    if isinstance(model, ImportedPipeline):  # e.g. from_pipeline(pipe).rounded(step): the pipeline's reader kept
        return model.model, model.reader
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    if isinstance(model, Pipeline):
        from kcxai.models._pipeline import import_pipeline

        known = getattr(model, "feature_names_in_", None)
        known = [f"x{k}" for k in range(int(getattr(model, "n_features_in_", 0)))] if known is None else list(known)
        imported = import_pipeline(model, distribution=None, strict=False,
                                   missing_columns=[c for c in _missing_columns(X_train) if c in known])
        return imported.model, imported.reader
    if isinstance(model, BaseEstimator):
        from kcxai.models._from_sklearn import FAMILIES, from_sklearn
        from kcxai.models._sklearn import sklearn_feature_names

        n = getattr(model, "n_features_in_", None)
        if n is None:
            raise InvalidInputError(f"'model' ({type(model).__name__}) is not fitted: call fit() first.")
        missing = _missing_columns(X_train)
        trees = [f for f in FAMILIES if f.kind in ("tree", "forest", "boosted")]
        if missing and any(f.matches(model) for f in trees):  # missing values: the pipeline import routes them
            from kcxai.models._pipeline import import_pipeline

            imported_pipe = import_pipeline(Pipeline([("model", model)]), distribution=None, missing_columns=missing,
                                            strict=False)
            return imported_pipe.model, imported_pipe.reader
        names = sklearn_feature_names(model, int(n), None)
        domains = None
        if _needs_domains(model):
            if X_train is None:
                raise InvalidInputError(
                    f"{type(model).__name__} has no finite feature space of its own: pass 'X_train' (the values "
                    "each column takes are its domain), or a Pipeline that encodes the columns.")
            domains = _domains_from(X_train, names)
        imported = from_sklearn(model, domains=domains, feature_names=names)
        return imported, TableReader.for_space(imported.space)
    raise InvalidTypeError(
        "'model' must be a kcxai model, a CompiledModel, a fitted scikit-learn classifier or Pipeline, or an "
        "ImportedPipeline (kcxai.from_pipeline). "
        f"Got {type(model).__name__} instead.")


def _missing_columns(X: Any) -> list[str]:
    """The columns of the training rows ``X`` that hold a missing value (NaN / None); by position ``x0, x1, ...``
    for an array."""
    import numpy as np

    if X is None:
        return []
    if hasattr(X, "columns") and hasattr(X, "isna"):
        return [str(c) for c in X.columns if bool(X[c].isna().any())]
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        from kcxai._table import is_missing

        arr2 = np.asarray(X, dtype=object)
        if arr2.ndim != 2:
            return []
        return [f"x{k}" for k in range(arr2.shape[1]) if any(is_missing(v) for v in arr2[:, k])]
    if arr.ndim != 2:
        return []
    return [f"x{k}" for k in np.flatnonzero(np.isnan(arr).any(axis=0)).tolist()]


def _needs_domains(est: Any) -> bool:
    from sklearn.linear_model._base import LinearClassifierMixin

    return isinstance(est, LinearClassifierMixin)


def _domains_from(X: Any, names: list[str]) -> list[list[float]]:
    """The sorted distinct values of each column of ``X`` (a DataFrame by name, else by position)."""
    import numpy as np

    if hasattr(X, "columns"):
        missing = [n for n in names if n not in [str(c) for c in X.columns]]
        if missing:
            raise InvalidInputError(f"'X_train' lacks the model's columns {missing}.")
        cols = [X[n].to_numpy() for n in names]
    else:
        arr = np.asarray(X, dtype=np.float64)
        if arr.ndim != 2 or arr.shape[1] != len(names):
            raise InvalidInputError(f"'X_train' must be a 2-D table with {len(names)} columns. Got shape {arr.shape}.")
        cols = [arr[:, k] for k in range(arr.shape[1])]
    out = []
    for n, col in zip(names, cols):
        vals = np.unique(np.asarray(col, dtype=np.float64))
        if vals.size == 0 or np.isnan(vals).any():
            raise InvalidInputError(f"'X_train' column {n!r} is empty or has missing values.")
        if vals.size > 64:
            raise InvalidInputError(
                f"'X_train' column {n!r} takes {vals.size} distinct values; a linear model needs small finite "
                "domains: bin it (KBinsDiscretizer) in a Pipeline.")
        out.append([float(v) for v in vals])
    return out


def _relabel(model: Any, class_names: Any) -> Any:
    """The same model with its class labels renamed through ``class_names`` (a mapping)."""
    from kcxai.models._base import model_from_dict

    if not isinstance(class_names, Mapping):
        raise InvalidTypeError(f"'class_names' must be a mapping {{class: name}}. Got {type(class_names).__name__}.")
    unknown = [c for c in class_names if c not in model.classes]
    if unknown:
        raise InvalidInputError(f"'class_names' names unknown classes {unknown}; the classes are {list(model.classes)}.")
    d = model.to_dict()
    d["classes"] = [class_names.get(c, c) for c in model.classes]
    return model_from_dict(d)


#: The distribution kinds :func:`kcxai.fit_distribution` fits, by name.
_KINDS = ("uniform", "product", "mixture")


def _with_distribution(model: Any, distribution: Any, X_train: Any, reader: TableReader,
                       options: Mapping[str, Any] | None) -> Any:
    """The model under ``distribution``: ``None`` keeps its own; ``"auto"`` is ``"product"`` when there are
    training rows, else the model's own; a kind is fitted on X_train; anything else goes to ``with_distribution``."""
    from kcxai.fit import fit_distribution

    if options is not None and not isinstance(options, Mapping):
        raise InvalidTypeError(f"'distribution_options' must be a mapping. Got {type(options).__name__} instead.")
    if isinstance(distribution, str) and distribution == "auto":
        distribution = None if X_train is None else "product"
    if distribution is None:
        if options:
            raise InvalidInputError("'distribution_options' apply to a fitted distribution: give distribution=KIND.")
        return model
    if isinstance(distribution, str):
        if distribution not in _KINDS:
            raise InvalidInputError(
                f"'distribution' must be None, 'auto', one of {list(_KINDS)}, a Distribution or per-feature "
                f"weights. Got {distribution!r} instead.")
        if X_train is None:
            raise InvalidInputError(f"distribution={distribution!r} is fitted on the training rows: pass X_train.")
        rows = reader.read(X_train, argument="X_train").instances
        return model.with_distribution(fit_distribution(model, rows, kind=distribution, **dict(options or {})))
    if options:
        raise InvalidInputError("'distribution_options' apply to a fitted distribution: give distribution=KIND.")
    return model.with_distribution(distribution)


class Explainer:
    """Explain a model's predictions on rows of a table, with exact guarantees.

    Parameters
    ----------
    model : Classifier, CompiledModel, sklearn classifier or sklearn Pipeline
        A kcxai model; or a fitted scikit-learn estimator (see :func:`kcxai.from_sklearn`); or a
        fitted ``Pipeline`` whose preprocessing is ``OrdinalEncoder`` / ``OneHotEncoder`` /
        ``KBinsDiscretizer`` / pass-through columns (see :func:`kcxai.models.from_pipeline`):
        explanations then speak of the original columns (``sex = Male``).
    X_train : table, optional
        Training rows (a DataFrame with the model's input columns, or an array): the feature domains of
        linear models without them, and the data a distribution given by name is fitted on.
    language : str, optional
        The knowledge-compilation language (``"dt"``, ``"sdd"``, ``"obdd"``, ``"brute"``); default
        ``"dt"`` for decision trees, ``"obdd"`` otherwise. Compiled once, here.
    distribution : "auto", None, "product", "mixture", "uniform", Distribution or weights
        What every probability is under. ``"auto"`` (default): a product distribution fitted on
        ``X_train`` (per-column value frequencies, +1 smoothing) when it is given, else the model's
        own. ``None``: the model's own (uniform unless it was given one: the paper's setting). A kind is
        fitted on ``X_train`` with :func:`kcxai.fit_distribution` (``"mixture"``: a mixture of
        product distributions, which keeps dependencies between columns). A
        :class:`~kcxai.Distribution` or per-feature weights go to the model's ``with_distribution``.
    distribution_options : mapping, optional
        Passed to :func:`kcxai.fit_distribution` (``n_components``, ``random_state``, ``smoothing``, ...).
    class_names : mapping, optional
        Printed names of the classes, ``{class: name}`` (e.g. ``{1: "<=50K", 0: ">50K"}``).
    compile_options : mapping, optional
        Passed to :func:`kcxai.compile_model`.

    Attributes
    ----------
    model_ : Classifier
        The kcxai model explained.
    compiled_ : CompiledModel
        Its compiled form, made once.
    reader_ : TableReader
        Reads input tables into the model's instances.

    Examples
    --------
    >>> import kcxai
    >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
    >>> e = explainer.explain_one((1, 1, 1, 1, 0, 0, 0, 0, 1), delta=0.03, start="path")
    >>> print(e.rule())
    IF x1 = 1 AND x9 = 1 THEN class = 1
    >>> explainer.explain([(1, 1, 1, 1, 0, 0, 0, 0, 1)] * 3, method="axp").to_frame()["size"].tolist()
    [5, 5, 5]
    """

    def __init__(self, model: Any, X_train: Any = None, *, language: str | None = None, distribution: Any = "auto",
                 distribution_options: Mapping[str, Any] | None = None, class_names: Mapping[Any, Any] | None = None,
                 compile_options: Mapping[str, Any] | None = None) -> None:
        from kcxai.compilers import compile_model
        from kcxai.models.tree import DecisionTree

        imported, reader = _import(model, X_train, distribution)
        if class_names is not None:
            imported = _relabel(imported, class_names)
        imported = _with_distribution(imported, distribution, X_train, reader, distribution_options)
        if language is None:
            language = "dt" if isinstance(imported, DecisionTree) else "obdd"
        options = dict(compile_options or {})
        self.model_ = imported
        self.reader_ = reader
        self.language_ = language
        self.compile_options_ = options
        self.compiled_ = compile_model(imported, language, **options)
        self._token = uuid.uuid4().hex
        from kcxai._batch import register

        register(self._token, self.compiled_)

    # -- reading and predicting --------------------------------------------------------

    def instances(self, X: Any) -> list[tuple[Any, ...]]:
        """The rows of ``X`` as instances of :attr:`model_` (user values in feature order)."""
        return self.reader_.read(X).instances

    def predict(self, X: Any) -> list[Any]:
        """The class label the model predicts for each row of ``X``."""
        return [self.model_.predict(x) for x in self.instances(X)]

    # -- explaining -------------------------------------------------------------------

    def _job(self, method: str, delta: Any, options: dict[str, Any], on_error: str) -> Any:
        from kcxai._batch import Job, register
        from kcxai._methods import check_options, resolve_method

        m, _ = resolve_method(method, delta)  # checks the name and the delta before any work
        check_options(m, options)
        register(self._token, self.compiled_)  # in-process runs use this compiled form (the cache keeps a few)
        return Job(self._token, self.model_, self.language_, self.compile_options_, method, delta, options, on_error)

    def explain_one(self, x: Any, *, method: str = "min_idrs", delta: Any = None, **options: Any) -> Explanation:
        """The explanation of one row (see :meth:`explain` for the arguments).

        Raises the method's error if the row cannot be explained.
        """
        table = self.reader_.read(x, argument="x")
        if len(table.instances) != 1:
            raise InvalidInputError(f"'x' must be one row. Got {len(table.instances)} rows: use explain().")
        from kcxai._batch import run

        (row, _), = run(self._job(method, delta, options, "raise"), list(zip(table.ids, table.instances)),
                        n_jobs=None, progress=False)
        assert isinstance(row, Explanation)  # on_error="raise" never returns a failure
        return row

    def explain(self, X: Any, *, method: str = "min_idrs", delta: Any = None, n_jobs: int | None = None,
                progress: bool = False, on_error: str = "raise", **options: Any) -> ExplanationSet:
        """Explain every row of ``X``.

        Parameters
        ----------
        X : DataFrame, 2-D array, list of rows, dict or one row
            Rows with the model's input columns (a DataFrame is read by column name; its index gives
            the rows' ids).
        method : str, default "min_idrs"
            ``"min_idrs"`` (subset-minimal I-delta-relevant set, the paper's Algorithm 1), ``"axp"``
            (the same with delta = 0: an abductive explanation), ``"smallest_idrs"``,
            ``"min_dual_idrs"``, ``"cxp"`` (a contrastive explanation), ``"local_cdrs"``,
            ``"min_cdrs"``, ``"smallest_drs"`` (precision at least delta).
        delta : number, optional
            The bound: on the error for I-delta methods (default 0), on precision for C-delta ones
            (required, e.g. 0.95). Floats are read as the decimals they print as.
        n_jobs : int, optional
            ``None`` or 1: in this process. Otherwise joblib workers (-1: all cores); inside
            ``joblib.parallel_config(backend="dask")`` (or ``"ray"``) the work goes to that cluster.
        progress : bool, default False
            Show a progress bar (``tqdm.auto``: a widget in notebooks).
        on_error : {"raise", "report"}, default "raise"
            ``"raise"``: the first row that cannot be read or explained raises an error naming it.
            ``"report"``: such a row becomes a :class:`~kcxai.explanation_set.RowFailure` (``failure``
            column of :meth:`ExplanationSet.to_frame`) and the other rows are explained.
        **options
            Passed to the method (``order``, ``start``, ...). The exact searches (``"smallest_idrs"``,
            ``"min_cdrs"``, ``"smallest_drs"``) take ``max_seconds``, the time limit of each row's
            search (default 60, ``None``: none); a row that hits it raises
            :class:`~kcxai.SearchLimitError`, or is reported with ``on_error="report"``.

        Returns
        -------
        ExplanationSet
        """
        from kcxai._batch import ON_ERROR, check_n_jobs, run

        n_jobs = check_n_jobs(n_jobs)
        if on_error not in ON_ERROR:
            raise InvalidInputError(f"'on_error' must be one of {list(ON_ERROR)}. Got {on_error!r} instead.")
        job = self._job(method, delta, options, on_error)
        rows, failed = self._read(X, on_error)
        done = run(job, rows, n_jobs=n_jobs, progress=progress)
        if not failed:
            items = done
            ids = [r[0] for r in rows]
        else:  # put the rows that could not be read back in their places
            explained = iter(done)
            ids, items = [], []
            for rid, fail in failed:
                ids.append(rid)
                items.append(next(explained) if fail is None else (fail, None))
        bounds = "precision" if job.method in ("local_cdrs", "min_cdrs", "smallest_drs") else "error"
        return ExplanationSet([r for r, _ in items], ids, bounds=bounds, coverage=[c for _, c in items])

    def _read(self, X: Any, on_error: str) -> tuple[list[tuple[Any, tuple[Any, ...]]], list[Any]]:
        """The rows to explain and, when some could not be read (``on_error="report"``), every row's id
        with its read failure or ``None``."""
        from kcxai._errors import KcxaiError
        from kcxai.explanation_set import RowFailure

        try:
            table = self.reader_.read(X)
            return list(zip(table.ids, table.instances)), []
        except KcxaiError:
            if on_error == "raise":
                raise
            singles = self._rows_of(X)
            if singles is None:  # not a batch of rows (one row, a bad table): nothing to report row by row
                raise
        rows: list[tuple[Any, tuple[Any, ...]]] = []
        every: list[Any] = []
        for rid, one in singles:
            try:
                t = self.reader_.read(one)
            except KcxaiError as err:
                every.append((rid, RowFailure(rid, (), type(err).__name__, str(err))))
                continue
            rows.append((rid, t.instances[0]))
            every.append((rid, None))
        return rows, every

    def evaluate(self, result: ExplanationSet, X: Any) -> Any:
        """How each explanation's rule fares on the rows ``X`` (typically held out): a DataFrame with one
        row per row of ``result`` (``id``, ``data_rows``, ``data_matching``, ``data_coverage``,
        ``data_precision``), to set beside :meth:`ExplanationSet.to_frame` (see
        :func:`kcxai.evaluate_on_data`). Rows that failed, and dual sets, get empty figures.

        Examples
        --------
        >>> import kcxai
        >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
        >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
        >>> result = explainer.explain([v], delta=0.03, start="path")
        >>> rows = [[1, 0, 0, 0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 1]]
        >>> explainer.evaluate(result, rows)[["data_matching", "data_precision"]].values.tolist()
        [[2.0, 1.0]]
        """
        import pandas as pd

        from kcxai.evaluation import evaluate_on_data

        if not isinstance(result, ExplanationSet):
            raise InvalidTypeError(f"'result' must be an ExplanationSet. Got {type(result).__name__} instead.")
        rows = self.reader_.read(X).instances
        picked = [e for e in result if isinstance(e, Explanation) and e.kind == "relevant"]
        # the model, not the compiled form: evaluate_on_data finds the class index through model.classes
        found = evaluate_on_data(self.model_, picked, rows) if picked else []
        metrics = iter(found if isinstance(found, list) else [found])
        out = []
        for rid, e in zip(result.ids, result):
            if isinstance(e, Explanation) and e.kind == "relevant":
                m = next(metrics)
                out.append({"id": rid, **m.to_dict()})
            else:
                out.append({"id": rid, "data_rows": len(rows), "data_matching": None, "data_coverage": None,
                            "data_precision": None})
        return pd.DataFrame.from_records(out, columns=["id", "data_rows", "data_matching", "data_coverage",
                                                       "data_precision"])

    def _rows_of(self, X: Any) -> list[tuple[Any, Any]] | None:
        """``(id, one-row table)`` for each row of a DataFrame or a 2-D array / list of rows, or ``None``
        when ``X`` is not such a batch, or its columns themselves are wrong (then every row would fail)."""
        import numpy as np

        from kcxai._errors import KcxaiError

        if hasattr(X, "iloc") and hasattr(X, "columns"):
            try:
                self.reader_._check_names(list(X.columns), "X")
            except KcxaiError:
                return None
            return [(X.index[k], X.iloc[k:k + 1]) for k in range(len(X))] or None
        if isinstance(X, (str, bytes, dict)) or hasattr(X, "iloc"):
            return None
        try:
            arr = np.asarray(X, dtype=object)
        except (TypeError, ValueError):
            return None
        if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != len(self.reader_.columns):
            return None
        return [(k, [list(arr[k])]) for k in range(arr.shape[0])]

    def __repr__(self) -> str:
        return f"Explainer({self.model_!r}, language={self.language_!r})"
