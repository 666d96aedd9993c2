"""Import of fitted scikit-learn pipelines, as models over the ORIGINAL columns.

A pipeline whose preprocessing works column by column (:data:`~kcxai.models.imports._pipeline_steps.STEPS`:
encoders, binning, monotone scalers, imputers, inside a ``ColumnTransformer`` or alone, possibly
chained) and whose last step is any classifier :func:`kcxai.from_sklearn` takes is imported as a kcxai
model whose features are the table's own columns:

* a column encoded by an ``OrdinalEncoder`` or a ``OneHotEncoder`` becomes ONE categorical feature
  over its categories (a one-hot group is not split into independent 0/1 features, so no
  probability mass sits on impossible inputs such as ``sex_Male = sex_Female = 1``);
* a column binned by a ``KBinsDiscretizer`` becomes one categorical feature over its bins, printed
  ``[37.5, 45.5)`` (scikit-learn's bins are closed on the left);
* a column that reaches the classifier as a number (passed through, or scaled by ``StandardScaler``,
  ``MinMaxScaler``, ``RobustScaler``, ``MaxAbsScaler``) feeds tree ensembles only; it becomes a
  numeric feature cut by the thresholds the trees test on it, in the column's own units (a scaled
  threshold is mapped back exactly: :mod:`kcxai.models.imports._pipeline_values`);
* a column that may be missing gets the value :data:`~kcxai.MISSING` (printed ``missing``), routed
  as the pipeline routes NaN: the imputed value's way, or the trees' own rule for NaN. A column has
  it when the pipeline declares it (a ``SimpleImputer`` fills the column, or an encoder learned NaN
  as a category) or when asked (``missing_columns``; the :class:`~kcxai.Explainer` asks for the
  columns its training rows have missing values in).

The classifier's tests on the encoded columns are composed with the preprocessing
(:mod:`kcxai.models.imports._pipeline_trees` for trees, :mod:`kcxai.models.imports._pipeline_scores` for naive Bayes
and linear models); the encoded values are computed by running the fitted steps, so predictions equal
``pipeline.predict`` (the tests compare every imported pipeline with scikit-learn on whole data sets,
including values at and beside every threshold). Anything else is refused with an error naming the step
and the columns, the reason, and what would work.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._gc import gc_paused
from kcxai._table import ColumnReader, TableReader
from kcxai.models.boosted import BoostedTrees
from kcxai.models.classifier import Classifier
from kcxai.models._numbers import Number
from kcxai.models.forest import RandomForest, leaf_dicts, trees_of
from kcxai.models.imports._families import family_of
from kcxai.models.imports._boosted import raw_boosted
from kcxai.models.imports._pipeline_scores import finite_only, score_model
from kcxai.models.imports._pipeline_steps import STEPS, Layout, layout_of
from kcxai.models.imports._pipeline_trees import composed_parts
from kcxai.models.imports._pipeline_values import Preprocessing
from kcxai.models.imports._sklearn import as_tree_parts, nan_rule, raw_decision_tree, raw_forest
from kcxai.models.imports._training import missing_columns as missing_columns_of
from kcxai.models.imports._training import with_distribution
from kcxai.models.tree import DecisionTree
from kcxai.space import MISSING, Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai.data import DataLike

__all__ = ["ImportedPipeline", "from_pipeline", "import_pipeline", "columns_missing_in", "SUPPORTED_STEPS"]

#: The preprocessing steps :func:`from_pipeline` reads (every role of
#: :data:`~kcxai.models.imports._pipeline_steps.STEPS`).
SUPPORTED_STEPS = tuple(name for names in STEPS.values() for name in names)


@dataclass(frozen=True)
class ImportedPipeline:
    """A kcxai model of a pipeline and the reader of the pipeline's input tables.

    Attributes
    ----------
    model : Classifier
        Over the original columns the pipeline uses (in input order).
    reader : TableReader
        Turns DataFrames / arrays with the pipeline's input columns into the model's instances.
    """

    model: Any
    reader: TableReader

    def rounded(self, step: Number) -> "ImportedPipeline":
        """The same pipeline with the model's weights (or leaf scores) rounded to multiples of ``step``: a
        *different classifier*, compiled exactly, for models whose exact form does not compile (binned linear
        models on many columns); its ``model.rounding`` is ``(step, margin)``. See
        :meth:`kcxai.LinearClassifier.rounded <kcxai.models.LinearClassifier.rounded>`.

        Examples
        --------
        >>> import pandas as pd
        >>> from sklearn.linear_model import LogisticRegression
        >>> from sklearn.pipeline import make_pipeline
        >>> from sklearn.preprocessing import KBinsDiscretizer
        >>> from kcxai.models import from_pipeline
        >>> X = pd.DataFrame({"age": [20, 30, 40, 50, 60, 70], "hours": [10, 40, 45, 50, 38, 20]})
        >>> pipe = make_pipeline(KBinsDiscretizer(n_bins=2, encode="onehot-dense", strategy="uniform"),
        ...                      LogisticRegression()).fit(X, [0, 0, 1, 1, 1, 0])
        >>> imported = from_pipeline(pipe).rounded(0.05)
        >>> imported.model.rounding[0]
        Fraction(1, 20)
        """
        rounded = getattr(self.model, "rounded", None)
        if rounded is None:
            raise InvalidTypeError(f"{type(self.model).__name__} has no rounded(): it has no weights to round.")
        return replace(self, model=rounded(step))


def _bin_labels(edges: Sequence[float]) -> list[str]:
    def num(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else repr(float(x))

    inner = [float(e) for e in edges[1:-1]]
    if not inner:
        return ["(-inf, inf)"]
    bounds = [-math.inf, *inner, math.inf]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        lo = "(-inf" if a == -math.inf else f"[{num(a)}"
        hi = "inf)" if b == math.inf else f"{num(b)})"
        out.append(f"{lo}, {hi}")
    return out


@dataclass
class Coding:
    """How one original column reaches the classifier, with the encoded values the steps make of it.

    ``zvals[z]``: per value of the feature (its categories or bins, then the missing value if it has
    one), the value of the classifier's column ``z``; for a number, ``nan_value[z]`` is what a missing
    value becomes there (NaN when it reaches the classifier as NaN) and ``known_value[z]`` what a
    present value makes of an indicator column ``z``.
    """

    column: int
    name: str
    kind: str  # "number", "category" or "bins"
    final: str
    categories: tuple[Any, ...] = ()
    edges: tuple[float, ...] = ()
    missing: bool = False
    requested: bool = False  # asked for by 'missing_columns' (an error if the pipeline has no rule for NaN)
    missing_rep: Any = float("nan")
    number_z: int = -1
    sign: int = 1
    scaled: bool = False
    coded_z: list[int] = field(default_factory=list)
    indicator_z: list[int] = field(default_factory=list)
    zvals: dict[int, np.ndarray] = field(default_factory=dict)
    nan_value: dict[int, float] = field(default_factory=dict)
    known_value: dict[int, float] = field(default_factory=dict)
    if_missing: str = ""
    unknown: str = ""  # the encoder that reads categories it was not fitted on (Column.unknown)

    def outputs_z(self) -> list[int]:
        """The classifier's columns this column feeds."""
        return ([self.number_z] if self.number_z >= 0 else []) + self.coded_z + self.indicator_z

    @property
    def domain(self) -> tuple[Any, ...]:
        """The feature's values as they are read: categories or bin numbers, then the missing value."""
        return (*self.categories, MISSING) if self.missing else self.categories

    def representatives(self) -> list[Any]:
        """An input value per category or bin, as the pipeline reads it (a bin's left edge)."""
        return list(self.categories) if self.kind == "category" else [self.edges[0], *self.edges[1:-1]]

    def feature(self) -> Feature:
        """The kcxai feature of a category or bins column."""
        if self.kind == "bins":
            labels = _bin_labels(self.edges) + (["missing"] if self.missing else [])
            return Feature.categorical(self.name, self.categories, labels=labels, missing=self.missing)
        return Feature.categorical(self.name, self.categories, missing=self.missing)

    def reader(self) -> ColumnReader:
        kind = "number" if self.kind == "number" else ("bins" if self.kind == "bins" else "category")
        unknown = "" if not self.unknown else (
            f"The pipeline's {self.unknown} reads a category it was not fitted on as none of them (its encoded "
            "columns at 0 or the unknown code), a value outside the feature's domain, which kcxai does not "
            "model: explain rows whose categories the encoder knows, or refit the encoder on rows that show "
            "this one (or with handle_unknown='error' to be told at predict time).")
        return ColumnReader(self.name, kind, self.domain if kind == "category" else (), self.edges,
                            missing=self.missing, if_missing=self.if_missing, if_unknown=unknown)

    @property
    def outputs(self) -> tuple[tuple[int, tuple[float, ...]], ...]:
        """``(z, encoded value per domain value)`` for each classifier column (naive Bayes and linear models)."""
        return tuple((z, tuple(float(v) for v in self.zvals[z])) for z in self.coded_z + self.indicator_z)


def _codings(layout: Layout, final: Any, missing_columns: Sequence[str], seen_missing: Sequence[str]) -> list[Coding]:
    """The codings of the columns the classifier uses, in input order; the columns of ``missing_columns`` and
    ``seen_missing`` get the missing value (those of ``missing_columns`` must keep it: ``requested``)."""
    final_name = type(final).__name__
    by_col: dict[int, Coding] = {}
    for z, o in enumerate(layout.outs):
        col = layout.columns[o.column]
        c = by_col.get(o.column)
        if c is None:
            c = by_col[o.column] = Coding(o.column, col.name, col.kind, final_name, col.categories, col.edges)
            c.missing = bool(col.imputer) or col.has_nan_category
            c.unknown = col.unknown
            if col.has_nan_category:
                c.missing_rep = col.nan_category
        if o.kind == "number":
            c.number_z, c.sign, c.scaled = z, o.sign, o.scaled
        elif o.kind == "indicator":
            c.indicator_z.append(z)
        else:
            c.coded_z.append(z)
    unknown = [m for m in missing_columns if m not in layout.names]
    if unknown:
        raise InvalidInputError(
            f"'missing_columns' names {unknown}, which are not input columns of the pipeline {layout.names[:20]}.")
    for c in by_col.values():
        if c.name in missing_columns:
            c.missing = c.requested = True
        elif c.name in seen_missing:
            c.missing = True
    return [by_col[k] for k in sorted(by_col)]


def _bases(layout: Layout, codings: Sequence[Coding]) -> list[Any]:
    """Per input column, the value it takes in synthetic rows that do not ask about it."""
    bases: list[Any] = [0.0] * len(layout.names)
    for c in codings:
        if c.kind == "category":
            bases[c.column] = c.categories[0] if c.categories else c.missing_rep
        elif c.kind == "bins":
            bases[c.column] = c.edges[0]
    return bases


def _fill_values(pre: Preprocessing, codings: Sequence[Coding], accepts_nan: bool) -> None:
    """Run the steps on each column's missing value, then on its categories or bins: the encoded values of
    every coding. A column keeps its missing value only where the pipeline has a rule for NaN (the steps
    accept it, and the classifier does if it reaches it); a column asked for by ``missing_columns``
    (``requested``) without one is an error. A column without a missing value gets the advice an error on a
    missing cell gives."""
    for c, row, error in _missing_rows(pre, codings):
        if row is None:
            if c.requested:
                raise InvalidInputError(
                    f"Column {c.name!r} may be missing, but the pipeline has no rule for a missing value there "
                    f"(its steps raise {error}). Fill it in the pipeline (a SimpleImputer on {c.name!r}), or "
                    "fill or drop such rows before explaining them.")
            c.missing = False
            c.if_missing = ("the pipeline has no rule for it (its steps raise on NaN): fill or drop it first, or add "
                            f"a SimpleImputer on {c.name!r} to the pipeline")
            continue
        for z in c.outputs_z():
            c.nan_value[z] = float(row[z])
        reaches = any(math.isnan(c.nan_value[z]) for z in c.outputs_z())
        if reaches and not accepts_nan:
            if c.requested:
                raise InvalidInputError(
                    f"Column {c.name!r} may be missing, and its missing value reaches the classifier as NaN, which "
                    f"{c.final} does not accept. Fill it in the pipeline (a SimpleImputer on {c.name!r}).")
            c.missing = False
            c.if_missing = (f"the pipeline has no rule for it (NaN reaches {c.final}, which refuses it): fill or drop "
                            f"it first, or add a SimpleImputer on {c.name!r} to the pipeline")
        elif not c.missing:
            c.if_missing = (
                f"the model was imported without a missing value for it, though the pipeline "
                f"{'routes NaN there natively' if reaches else 'fills it'}: import the pipeline with "
                f"from_pipeline(pipe, missing_columns=[{c.name!r}]), or give the Explainer training rows with "
                f"missing values in {c.name!r}")
    coded = [c for c in codings if c.kind != "number"]
    if coded:
        m = max(len(c.representatives()) for c in coded)
        reps = {c.column: _padded(c.representatives(), m) for c in coded}
        X = _run(pre, reps, "the values of " + ", ".join(repr(c.name) for c in coded))
        for c in coded:
            n = len(c.categories)
            for z in c.coded_z + c.indicator_z:
                known = X[:n, z]
                c.zvals[z] = np.append(known, c.nan_value[z]) if c.missing else known.copy()
    numbers = [c for c in codings if c.kind == "number"]
    if any(c.indicator_z for c in numbers):
        X = _run(pre, {c.column: [0.0] for c in numbers}, "numbers")
        for c in numbers:
            for z in c.indicator_z:
                c.known_value[z] = float(X[0, z])


def _missing_rows(pre: Preprocessing, codings: Sequence[Coding]) -> list[tuple[Coding, Any, str]]:
    """Per coding, the encoded row of its missing value (``None`` and the error when the steps raise)."""
    if not codings:
        return []
    X, _ = pre.try_run({c.column: [c.missing_rep] for c in codings})
    if X is not None:
        return [(c, X[0], "") for c in codings]
    out = []
    for c in codings:
        row, error = pre.try_run({c.column: [c.missing_rep]})
        out.append((c, None if row is None else row[0], error))
    return out


def _padded(values: list[Any], m: int) -> list[Any]:
    return values + [values[0]] * (m - len(values))


def _run(pre: Preprocessing, values: dict[int, list[Any]], what: str) -> np.ndarray:
    X, error = pre.try_run(values)
    if X is None:
        raise InvalidInputError(f"Running the pipeline's preprocessing on {what} failed ({error}).")
    return X


def from_pipeline(pipeline: Any, X_train: DataLike = None, *, distribution: str | DistributionLike = "auto",
                  missing_columns: Sequence[str] = (),
                  distribution_options: Mapping[str, Any] | None = None) -> ImportedPipeline:
    """Import a fitted scikit-learn ``Pipeline`` as a kcxai model over its original columns, under the
    distribution of its training rows.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        Fitted; its preprocessing works column by column: ``OrdinalEncoder``, ``OneHotEncoder``,
        ``KBinsDiscretizer``, the monotone scalers ``StandardScaler``, ``MinMaxScaler``,
        ``RobustScaler`` and ``MaxAbsScaler``, ``SimpleImputer``, ``"passthrough"`` and ``"drop"``,
        alone, chained, or inside one ``ColumnTransformer`` (the first step); its last step any
        classifier :func:`kcxai.from_sklearn` takes (columns that reach it as numbers: tree
        ensembles only).
    X_train : table, optional
        The pipeline's training rows (its input columns): with the default ``distribution="auto"``, every
        count is under the product distribution fitted on them, as the :class:`~kcxai.Explainer` fits it;
        a column they miss values in gets the missing value where the pipeline has a rule for NaN. Without
        them the model is uniform over its cells (the paper's setting).
    distribution : "auto", None, "product", "mixture", "uniform", Distribution or weights
        As for :func:`kcxai.from_sklearn`.
    missing_columns : sequence of str, default ()
        Columns that may be missing besides those the pipeline declares so (filled by a
        ``SimpleImputer``, or encoded with NaN as a category): each gets the value
        :data:`~kcxai.MISSING`, routed as the pipeline routes NaN (e.g. a tree's own rule for it);
        an error if the pipeline has no rule for NaN in one of them.
    distribution_options : mapping, optional
        Passed to :func:`kcxai.fit_distribution`.

    Returns
    -------
    ImportedPipeline
        ``.model`` (predictions equal ``pipeline.predict``) and ``.reader`` (reads the pipeline's
        input tables; NaN / ``None`` as the missing value where a feature has one).

    Examples
    --------
    >>> import pandas as pd
    >>> from sklearn.compose import ColumnTransformer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import OneHotEncoder
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from kcxai.models import from_pipeline
    >>> X = pd.DataFrame({"sex": ["Male", "Female", "Male", "Female"], "age": [25, 32, 47, 51]})
    >>> y = ["low", "low", "high", "low"]
    >>> ct = ColumnTransformer([("sex", OneHotEncoder(), ["sex"])], remainder="passthrough")
    >>> pipe = make_pipeline(ct, DecisionTreeClassifier(random_state=0)).fit(X, y)
    >>> imported = from_pipeline(pipe)
    >>> imported.model.space.features
    (Feature.categorical('sex', ['Female', 'Male']), Feature.numeric('age', [36.0]))
    >>> [imported.model.predict(x) for x in imported.reader.read(X).instances] == list(pipe.predict(X))
    True
    >>> from_pipeline(pipe, X).model.space.value_probability(0, 1)   # (2 + 1) / (4 + 2) under the rows
    Fraction(1, 2)
    """
    if isinstance(missing_columns, str) or not isinstance(missing_columns, Sequence):
        raise InvalidTypeError(f"'missing_columns' must be a sequence of column names. Got {missing_columns!r}.")
    imported = import_pipeline(pipeline, distribution=None, missing_columns=missing_columns,
                               seen_missing=columns_missing_in(pipeline, X_train))
    model = with_distribution(imported.model, distribution, X_train, imported.reader, distribution_options)
    return replace(imported, model=model)


def columns_missing_in(pipeline: Any, X_train: DataLike) -> list[str]:
    """The pipeline's input columns the training rows miss values in."""
    names = getattr(pipeline, "feature_names_in_", None)
    known = [f"x{k}" for k in range(int(getattr(pipeline, "n_features_in_", 0)))] if names is None else list(names)
    return [c for c in missing_columns_of(X_train) if c in known]


def import_pipeline(pipeline: Any, *, distribution: DistributionLike, missing_columns: Sequence[str],
                    seen_missing: Sequence[str] = ()) -> ImportedPipeline:
    """:func:`from_pipeline` under ``distribution`` (passed to the feature space): a column of
    ``missing_columns`` gets the missing value or is an error when the pipeline has no rule for NaN there; a
    column of ``seen_missing`` (which the training rows miss values in) gets it where there is one, and is
    left without it otherwise (a missing cell there is then refused with the column and the row)."""

    final, final_name, layout = layout_of(pipeline)
    family = family_of(final, where=f"The pipeline ends in {type(final).__name__}, which kcxai does not import")
    if getattr(final, "n_outputs_", 1) != 1:
        raise InvalidInputError(f"The pipeline's classifier must have a single output. Got {final.n_outputs_}.")
    codings = _codings(layout, final, [str(m) for m in missing_columns], [str(m) for m in seen_missing])
    categorical = [False] * len(layout.names)
    for c in codings:
        categorical[c.column] = c.kind == "category"
    pre = Preprocessing(layout.steps, layout.names, layout.named, _bases(layout, codings), categorical)
    _fill_values(pre, codings, bool(nan_rule(final, "yes")))
    with gc_paused():
        model = _model(family.kind, final, codings, pre, distribution)
    readers = [c.reader() for c in codings]
    return ImportedPipeline(model=model, reader=TableReader(layout.names, readers, by_position=not layout.named))


def _model(kind: str, final: Any, codings: list[Coding], pre: Preprocessing,
           distribution: DistributionLike) -> Classifier:
    """The kcxai model of the classifier ``final`` (of the family ``kind``) composed with the codings."""
    labels = [c.item() if isinstance(c, np.generic) else c for c in final.classes_]
    if kind in ("tree", "forest", "boosted"):
        raw = replace({"tree": raw_decision_tree, "forest": raw_forest, "boosted": raw_boosted}[kind](final),
                      classes=labels)
        parts = composed_parts(raw, codings, pre, distribution)
        if kind == "tree":
            return DecisionTree._from_parts(as_tree_parts(parts))
        if kind == "forest":
            return RandomForest._of_sklearn_parts(parts)
        trees = trees_of(parts)
        return BoostedTrees(parts.space, parts.classes, trees, leaf_dicts(trees, parts.node_values or []),
                            tree_class=parts.tree_class, init=parts.init, ties=parts.ties)
    finite_only(codings, final)
    space = FeatureSpace([c.feature() for c in codings], distribution=distribution)
    return score_model(final, codings, labels, distribution, space)

