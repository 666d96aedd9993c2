"""Import of fitted scikit-learn pipelines, as models over the ORIGINAL columns.

A pipeline ``ColumnTransformer(OrdinalEncoder | OneHotEncoder | KBinsDiscretizer | passthrough) ->
classifier`` is imported as a kcxai model whose features are the table's own columns:

* a column encoded by an ``OrdinalEncoder`` or a ``OneHotEncoder`` becomes ONE categorical feature
  over its categories (a one-hot group is not split into independent 0/1 features, so no
  probability mass sits on impossible inputs such as ``sex_Male = sex_Female = 1``);
* a column binned by a ``KBinsDiscretizer`` becomes one categorical feature over its bins, printed
  ``[37.5, 45.5)`` (scikit-learn's bins are closed on the left);
* a column passed through as a number feeds trees and forests only; it becomes a numeric feature
  cut by the thresholds the trees test on it (``age in (37.5, 45.5]``).

The classifier's tests on the encoded columns are composed with the encoders: a one-hot split
``x_sex_Male <= 0.5`` becomes the test ``sex in {Female, ...}`` vs ``sex = Male``. Predictions equal
``pipeline.predict`` (the tests compare every imported pipeline with scikit-learn on whole data sets).
Anything else (another transformer, a column used twice, infrequent-category grouping, NaN
categories) is refused with an error naming the step and the columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._table import ColumnReader, TableReader
from kcxai.space import Feature, FeatureSpace

__all__ = ["ImportedPipeline", "from_pipeline", "SUPPORTED_STEPS"]

#: The preprocessing steps :func:`from_pipeline` understands.
SUPPORTED_STEPS = ("OrdinalEncoder", "OneHotEncoder", "KBinsDiscretizer", "'passthrough'", "'drop'")


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


@dataclass
class _Coding:
    """How one original column reaches the classifier."""

    column: str
    step: str
    kind: str  # "category", "bins" or "number"
    categories: tuple[Any, ...] = ()
    edges: tuple[float, ...] = ()
    # (encoded column, the encoded value of each domain value); for "number": (encoded column, ())
    outputs: tuple[tuple[int, tuple[float, ...]], ...] = ()


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


def _categories(enc: Any, step: str, col: str, k: int) -> tuple[Any, ...]:
    cats = [c.item() if isinstance(c, np.generic) else c for c in enc.categories_[k]]
    for c in cats:
        if c is None or (isinstance(c, float) and math.isnan(c)):
            raise InvalidInputError(
                f"Step {step!r}: column {col!r} has a missing-value category (NaN/None); kcxai needs complete "
                "data: impute the column before the pipeline.")
        if not isinstance(c, (str, int, float)) or isinstance(c, bool):
            raise InvalidTypeError(
                f"Step {step!r}: column {col!r} has the category {c!r} ({type(c).__name__}); only str, int "
                "and float categories are supported.")
    return tuple(cats)


def _no_infrequent(enc: Any, step: str, cols: Sequence[str]) -> None:
    try:
        infrequent = enc.infrequent_categories_
    except AttributeError:
        return
    if any(x is not None for x in infrequent):
        raise InvalidInputError(
            f"Step {step!r} ({type(enc).__name__} on {list(cols)}) groups infrequent categories "
            "(min_frequency / max_categories), which kcxai does not import; fit it without them.")


def _codings_of(step: str, trans: Any, cols: list[str], first: int) -> tuple[list[_Coding], int]:
    """The codings of the columns one transformer encodes, its outputs numbered from ``first``."""
    from sklearn.preprocessing import FunctionTransformer, KBinsDiscretizer, OneHotEncoder, OrdinalEncoder

    from sklearn.pipeline import Pipeline

    out: list[_Coding] = []
    z = first
    if isinstance(trans, Pipeline):  # a pipeline of one encoder inside the ColumnTransformer
        inner = [(n, t) for n, t in trans.steps if not (t is None or (isinstance(t, str) and t == "passthrough"))]
        if len(inner) != 1:
            raise InvalidTypeError(
                f"Step {step!r} is a Pipeline of {[type(t).__name__ for _, t in inner]} on columns {list(cols)}; "
                f"kcxai imports one encoder per column ({', '.join(SUPPORTED_STEPS)}).")
        return _codings_of(f"{step}/{inner[0][0]}", inner[0][1], cols, first)
    if isinstance(trans, str) and trans == "drop":
        return out, z
    passthrough = (isinstance(trans, str) and trans == "passthrough") or (
        type(trans) is FunctionTransformer and trans.func is None)
    if passthrough:
        for c in cols:
            out.append(_Coding(c, step, "number", outputs=((z, ()),)))
            z += 1
        return out, z
    if isinstance(trans, OrdinalEncoder):
        _no_infrequent(trans, step, cols)
        for k, c in enumerate(cols):
            cats = _categories(trans, step, c, k)
            out.append(_Coding(c, step, "category", cats, outputs=((z, tuple(float(i) for i in range(len(cats)))),)))
            z += 1
        return out, z
    if isinstance(trans, OneHotEncoder):
        _no_infrequent(trans, step, cols)
        drop = trans.drop_idx_
        for k, c in enumerate(cols):
            cats = _categories(trans, step, c, k)
            skip = None if drop is None or drop[k] is None else int(drop[k])
            hot: list[tuple[int, tuple[float, ...]]] = []
            for j in range(len(cats)):
                if j == skip:
                    continue
                hot.append((z, tuple(float(i == j) for i in range(len(cats)))))
                z += 1
            out.append(_Coding(c, step, "category", cats, outputs=tuple(hot)))
        return out, z
    if isinstance(trans, KBinsDiscretizer):
        for k, c in enumerate(cols):
            edges = tuple(float(e) for e in trans.bin_edges_[k])
            n = len(edges) - 1
            bins = tuple(range(n))
            if trans.encode == "ordinal":
                outs: Any = ((z, tuple(float(b) for b in bins)),)
                z += 1
            else:
                outs = tuple((z + j, tuple(float(b == j) for b in bins)) for j in range(n))
                z += n
            out.append(_Coding(c, step, "bins", bins, edges, outputs=outs))
        return out, z
    raise InvalidTypeError(
        f"Step {step!r} ({type(trans).__name__} on columns {list(cols)}) is not supported. kcxai imports "
        f"pipelines whose preprocessing is {', '.join(SUPPORTED_STEPS)}, ending in a supported classifier.")


def _column_names(est: Any) -> tuple[list[str], bool]:
    names = getattr(est, "feature_names_in_", None)
    if names is not None:
        return [str(x) for x in names], True
    return [f"x{i}" for i in range(int(est.n_features_in_))], False


def _resolve(cols: Any, names: list[str], step: str) -> list[str]:
    """A ColumnTransformer's column spec (names, indices, mask, slice) as column names."""
    if isinstance(cols, (str, int, np.integer)):
        cols = [cols]
    if isinstance(cols, slice):
        return names[cols]
    cols = list(cols.tolist() if hasattr(cols, "tolist") else cols)
    if cols and all(isinstance(c, (bool, np.bool_)) for c in cols):
        return [n for n, keep in zip(names, cols) if keep]
    out = []
    for c in cols:
        if isinstance(c, str):
            if c not in names:
                raise InvalidInputError(f"Step {step!r} uses the column {c!r}, which is not an input column.")
            out.append(c)
        elif isinstance(c, (int, np.integer)) and not isinstance(c, bool):
            out.append(names[int(c)])
        else:
            raise InvalidTypeError(f"Step {step!r}: cannot read the column specification {c!r}.")
    return out


def _preprocessing(pipeline: Any) -> tuple[Any, list[_Coding], list[str], bool, int]:
    """The final classifier, the codings of the used columns, all input column names, whether the
    pipeline was fitted with column names, and the number of encoded columns."""
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline

    if not isinstance(pipeline, Pipeline):
        raise InvalidTypeError(f"'pipeline' must be a fitted sklearn Pipeline. Got {type(pipeline).__name__} instead.")
    steps = [(n, s) for n, s in pipeline.steps if not (s is None or (isinstance(s, str) and s == "passthrough"))]
    if not steps:
        raise InvalidInputError("'pipeline' has no steps.")
    final_name, final = steps[-1]
    pre = steps[:-1]
    if not hasattr(final, "n_features_in_"):
        raise InvalidInputError(f"'pipeline' is not fitted (its step {final_name!r} has no n_features_in_).")
    first = pre[0][1] if pre else final
    names, named = _column_names(first)
    if len(pre) > 1:
        extra = ", ".join(f"{n!r} ({type(s).__name__})" for n, s in pre[1:])
        raise InvalidTypeError(
            f"'pipeline' has more than one preprocessing step ({extra} after {pre[0][0]!r}); kcxai imports one "
            f"ColumnTransformer (or one encoder) of {', '.join(SUPPORTED_STEPS)} followed by the classifier.")
    codings: list[_Coding] = []
    if not pre:
        codings, n_out = _codings_of(final_name, "passthrough", names, 0)
    elif isinstance(pre[0][1], ColumnTransformer):
        ct = pre[0][1]
        if not hasattr(ct, "transformers_"):
            raise InvalidInputError(f"'pipeline': step {pre[0][0]!r} is not fitted.")
        seen: dict[str, str] = {}
        n_out = 0
        for step, trans, cols in ct.transformers_:
            cnames = _resolve(cols, names, step)
            if not cnames:
                continue
            for c in cnames:
                if c in seen and not (isinstance(trans, str) and trans == "drop"):
                    raise InvalidInputError(
                        f"Column {c!r} is encoded by two steps ({seen[c]!r} and {step!r}); kcxai needs each "
                        "column encoded once.")
                seen[c] = step
            sl = ct.output_indices_[step]
            more, end = _codings_of(step, trans, cnames, sl.start)
            if end != sl.stop:
                raise InvalidInputError(
                    f"Step {step!r} produces {sl.stop - sl.start} columns, but kcxai reads "
                    f"{end - sl.start} from its encoder: unsupported encoder options.")
            codings += more
            n_out = max(n_out, end)
    else:
        step, trans = pre[0]
        if not hasattr(trans, "n_features_in_"):
            raise InvalidInputError(f"'pipeline': step {step!r} is not fitted.")
        codings, n_out = _codings_of(step, trans, names, 0)
    if n_out != int(final.n_features_in_):
        raise InvalidInputError(
            f"The classifier {final_name!r} reads {final.n_features_in_} columns, but the preprocessing "
            f"produces {n_out}.")
    order = {c: k for k, c in enumerate(names)}
    codings.sort(key=lambda c: order[c.column])
    return final, codings, names, named, n_out


def _space(codings: list[_Coding], cuts: dict[int, set[float]], final: Any, distribution: Any) -> FeatureSpace:
    features = []
    for c in codings:
        if c.kind == "category":
            features.append(Feature.categorical(c.column, c.categories))
        elif c.kind == "bins":
            features.append(Feature.categorical(c.column, c.categories, labels=_bin_labels(c.edges)))
        else:
            z = c.outputs[0][0]
            features.append(Feature.numeric(c.column, sorted(cuts.get(z, ())), float32=True))
    return FeatureSpace(features, distribution=distribution)


def _compose_tree(t: Any, space: FeatureSpace, by_z: dict[int, tuple[int, tuple[float, ...]]],
                  labels: list[Any]) -> tuple[Any, dict[int, int]]:
    """A kcxai tree over the original columns for sklearn's tree structure ``t``, and the map from
    sklearn node ids to kcxai node ids."""
    from kcxai.models.tree import DecisionTree, Leaf, Split

    left, right, feat, thr = t.children_left, t.children_right, t.feature, t.threshold
    arg = np.argmax(t.value[:, 0, :], axis=1)
    post: list[int] = []
    stack = [0]
    while stack:
        k = stack.pop()
        post.append(k)
        if left[k] != -1:
            stack += [int(left[k]), int(right[k])]
    built: dict[int, Any] = {}
    for k in reversed(post):
        if left[k] == -1:
            built[k] = Leaf(labels[int(arg[k])])
            continue
        f, zvals = by_z[int(feat[k])]
        th = float(thr[k])
        lo, hi = built.pop(int(left[k])), built.pop(int(right[k]))
        if not zvals:
            built[k] = Split.threshold(f, th, lo, hi)
            continue
        feature = space.features[f]
        # scikit-learn compares float32(x) <= threshold
        goes_left = [float(np.float32(zv)) <= th for zv in zvals]
        built[k] = Split(f, ((tuple(v for v, g in zip(feature.values, goes_left) if g), lo),
                             (tuple(v for v, g in zip(feature.values, goes_left) if not g), hi)))
    tree = DecisionTree(space, labels, built[0])
    # DecisionTree numbers nodes in pre-order, first branch first: replay it on sklearn's ids.
    ids: dict[int, int] = {}
    stack = [0]
    while stack:
        k = stack.pop()
        ids[k] = len(ids)
        if left[k] != -1:
            stack += [int(right[k]), int(left[k])]
    return tree, ids


def _tree_cuts(structures: Sequence[Any], by_z: dict[int, tuple[int, tuple[float, ...]]]) -> dict[int, set[float]]:
    cuts: dict[int, set[float]] = {}
    for t in structures:
        for k in range(t.node_count):
            if t.children_left[k] != -1 and not by_z[int(t.feature[k])][1]:
                cuts.setdefault(int(t.feature[k]), set()).add(float(t.threshold[k]))
    return cuts


def from_pipeline(pipeline: Any, *, distribution: Any = None) -> ImportedPipeline:
    """Import a fitted scikit-learn ``Pipeline`` as a kcxai model over its original columns.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        Fitted; its preprocessing is at most one ``ColumnTransformer`` (or one encoder on every
        column) of ``OrdinalEncoder``, ``OneHotEncoder``, ``KBinsDiscretizer``, ``"passthrough"``
        and ``"drop"``; its last step a ``DecisionTreeClassifier``, ``RandomForestClassifier`` /
        ``ExtraTreesClassifier`` (soft voting), ``CategoricalNB``, ``BernoulliNB`` or a linear classifier
        (numeric pass-through columns: trees and forests only).
    distribution : optional
        Passed to :class:`~kcxai.FeatureSpace`.

    Returns
    -------
    ImportedPipeline
        ``.model`` (predictions equal ``pipeline.predict``) and ``.reader`` (reads the pipeline's
        input tables).

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
    """
    from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
    from sklearn.linear_model._base import LinearClassifierMixin
    from sklearn.naive_bayes import BernoulliNB, CategoricalNB
    from sklearn.tree import DecisionTreeClassifier

    from kcxai.models._from_sklearn import SUPPORTED

    final, codings, names, named, _ = _preprocessing(pipeline)
    if getattr(final, "n_outputs_", 1) != 1:
        raise InvalidInputError(f"The pipeline's classifier must have a single output. Got {final.n_outputs_}.")
    by_z = {z: (f, zvals) for f, c in enumerate(codings) for z, zvals in c.outputs}
    labels = [c.item() if isinstance(c, np.generic) else c for c in final.classes_]
    model: Any
    if isinstance(final, DecisionTreeClassifier):
        space = _space(codings, _tree_cuts([final.tree_], by_z), final, distribution)
        model, _ = _compose_tree(final.tree_, space, by_z, labels)
    elif isinstance(final, (RandomForestClassifier, ExtraTreesClassifier)):
        from kcxai.models.forest import RandomForest

        structures = [e.tree_ for e in final.estimators_]
        space = _space(codings, _tree_cuts(structures, by_z), final, distribution)
        trees, scores = [], []
        k = len(labels)
        for t in structures:
            tree, ids = _compose_tree(t, space, by_z, labels)
            trees.append(tree)
            scores.append({ids[s]: [float(x) for x in t.value[s, 0, :k]] for s in range(t.node_count)
                           if t.children_left[s] == -1})
        model = RandomForest(space, labels, trees, voting="soft", leaf_scores=scores)
    elif isinstance(final, (CategoricalNB, BernoulliNB, LinearClassifierMixin)):
        from kcxai.models._pipeline_scores import finite_only, score_model

        finite_only(codings, final)
        model = score_model(final, codings, labels, distribution, _space(codings, {}, final, distribution))
    else:
        raise InvalidTypeError(
            f"The pipeline ends in {type(final).__name__}, which kcxai does not import. Supported: "
            f"{', '.join(SUPPORTED)}.")
    readers = [ColumnReader(c.column, c.kind, c.categories, c.edges) for c in codings]
    return ImportedPipeline(model=model, reader=TableReader(names, readers, by_position=not named))
