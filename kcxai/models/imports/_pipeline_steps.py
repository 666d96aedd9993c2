"""The preprocessing of a fitted scikit-learn pipeline, read step by step: which original column each column
the classifier reads comes from, and how.

Every supported step works column by column (:data:`STEPS`, the one list error messages print), so each
column the classifier reads depends on ONE original column, as

* ``"number"``: the column's value through pass-through, imputers and monotone scalers (``StandardScaler``,
  ``MinMaxScaler``, ``RobustScaler``, ``MaxAbsScaler``), possibly several in a chain; ``sign`` says whether
  the chain increases or decreases, ``scaled`` whether it changes the units at all;
* ``"coded"``: a function of the column's finite domain: its categories (``OrdinalEncoder``,
  ``OneHotEncoder``) or bins (``KBinsDiscretizer``), possibly scaled afterwards;
* ``"indicator"``: whether the column is missing (``SimpleImputer(add_indicator=True)``).

The values themselves are never re-derived from the steps' parameters: they are computed by running the
fitted steps (:mod:`kcxai.models.imports._pipeline_values`). A step that mixes columns or applies an arbitrary
function is refused with the reason and what would work.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError

__all__ = ["STEPS", "Out", "Column", "Layout", "layout_of", "is_passthrough", "resolve_columns", "supported_steps"]

#: The preprocessing steps :func:`kcxai.models.from_pipeline` reads, by role (the one list messages print).
STEPS: dict[str, tuple[str, ...]] = {
    "encoders": ("OrdinalEncoder", "OneHotEncoder", "KBinsDiscretizer"),
    "scalers": ("StandardScaler", "MinMaxScaler", "RobustScaler", "MaxAbsScaler"),
    "imputers": ("SimpleImputer",),
    "structure": ("ColumnTransformer", "Pipeline", "'passthrough'", "'drop'", "FunctionTransformer()"),
}


def supported_steps() -> str:
    """The supported steps, in words (read from :data:`STEPS`)."""
    return "; ".join(f"{role}: {', '.join(names)}" for role, names in STEPS.items())


#: Steps that mix or expand columns, by name: the reason they cannot be mapped back to one column.
_MIXERS = {
    "PCA": "mixes all the columns into components",
    "TruncatedSVD": "mixes all the columns into components",
    "KernelPCA": "mixes all the columns into components",
    "FastICA": "mixes all the columns into components",
    "PolynomialFeatures": "multiplies columns together",
    "SplineTransformer": "expands each column into basis functions that go up and down",
    "Normalizer": "divides each row by its norm (every output depends on every column)",
    "QuantileTransformer": "is monotone only up to floating-point rounding between its quantiles",
    "PowerTransformer": "is monotone only up to floating-point rounding of its power and log",
}


@dataclass
class Out:
    """One column the classifier reads: the original column it depends on, and how."""

    column: int
    kind: str  # "raw" (not yet interpreted), "number", "coded" or "indicator"
    sign: int = 1
    scaled: bool = False


@dataclass
class Column:
    """An original column as the preprocessing treats it."""

    name: str
    kind: str = ""  # "number", "category" or "bins" ("" until a step uses it)
    categories: tuple[Any, ...] = ()
    edges: tuple[float, ...] = ()
    nan_category: Any = None  # the encoder's own missing-value category (NaN or None), if it learned one
    has_nan_category: bool = False
    imputer: str = ""  # the step that fills its missing values, if any
    unknown: str = ""  # the encoder step that reads a category it was not fitted on (handle_unknown), if any
    steps: list[str] = field(default_factory=list)


@dataclass
class Layout:
    """The preprocessing read: per original column, how it is treated; per classifier column, its origin."""

    names: list[str]
    named: bool
    columns: list[Column]
    outs: list[Out]
    steps: list[Any]  # the fitted preprocessing steps, in order


def is_passthrough(trans: Any) -> bool:
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.preprocessing import FunctionTransformer

    return trans is None or (isinstance(trans, str) and trans == "passthrough") or (
        type(trans) is FunctionTransformer and trans.func is None)


def _refuse(step: str, trans: Any, cols: Sequence[str]) -> InvalidTypeError:
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.preprocessing import FunctionTransformer

    kind = type(trans).__name__
    where = f"Step {step!r} ({kind} on columns {list(cols)})"
    if isinstance(trans, FunctionTransformer):
        why = ("applies an arbitrary function, which kcxai cannot invert to speak of the original columns; "
               "apply it to the data before the pipeline (the explained columns are then its outputs), or use a "
               "step kcxai reads")
    elif kind in _MIXERS:
        why = (f"{_MIXERS[kind]}: its outputs have no threshold in any one original column. To explain the "
               "model over the transformed columns instead, fit the classifier alone on them and pass it to "
               "kcxai.from_sklearn")
    else:
        why = "is not a step kcxai can map back to the original columns"
    return InvalidTypeError(f"{where} {why}. Supported steps: {supported_steps()}.")


def _scale_sign(trans: Any, j: int) -> int:
    """+1 or -1: whether the scaler's map of its column ``j`` increases or decreases."""
    scale = getattr(trans, "scale_", None)
    if scale is None:
        return 1
    s = float(np.asarray(scale, dtype=np.float64).ravel()[j])
    return -1 if s < 0 else 1


def _nan_marker(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or type(x).__name__ == "NAType"


def _categories(enc: Any, step: str, col: Column, k: int) -> None:
    cats = [c.item() if isinstance(c, np.generic) else c for c in enc.categories_[k]]
    known = []
    for c in cats:
        if _nan_marker(c):
            col.has_nan_category, col.nan_category = True, c
            continue
        if not isinstance(c, (str, int, float)) or isinstance(c, bool):
            raise InvalidTypeError(
                f"Step {step!r}: column {col.name!r} has the category {c!r} ({type(c).__name__}); only str, int "
                "and float categories are supported.")
        known.append(c)
    col.kind, col.categories = "category", tuple(known)


def _no_infrequent(enc: Any, step: str, cols: Sequence[str]) -> None:
    try:
        infrequent = enc.infrequent_categories_
    except AttributeError:
        return
    if any(x is not None for x in infrequent):
        raise InvalidInputError(
            f"Step {step!r} ({type(enc).__name__} on {list(cols)}) groups infrequent categories "
            "(min_frequency / max_categories), which kcxai does not import; fit it without them.")


class _Reader:
    """Walks the steps, keeping per original column how it is treated."""

    def __init__(self, columns: list[Column]) -> None:
        self.columns = columns

    def names(self, ins: Sequence[Out]) -> list[str]:
        return [self.columns[o.column].name for o in ins]

    def walk(self, step: str, trans: Any, ins: list[Out]) -> list[Out]:
        # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
        from sklearn.compose import ColumnTransformer
        from sklearn.pipeline import Pipeline
        from sklearn.preprocessing import KBinsDiscretizer, OneHotEncoder, OrdinalEncoder

        if is_passthrough(trans):
            return ins
        if isinstance(trans, str) and trans == "drop":
            return []
        for o in ins:
            self.columns[o.column].steps.append(step)
        if isinstance(trans, Pipeline):
            for name, sub in trans.steps:
                ins = self.walk(f"{step}/{name}", sub, ins)
            return ins
        if isinstance(trans, ColumnTransformer):
            return self.column_transformer(step, trans, ins)
        if type(trans).__name__ == "SimpleImputer":
            return self.imputer(step, trans, ins)
        if type(trans).__name__ in STEPS["scalers"]:
            return self.scaler(step, trans, ins)
        if isinstance(trans, (OrdinalEncoder, OneHotEncoder, KBinsDiscretizer)):
            changed = [o for o in ins if o.kind != "raw"]
            if changed:
                o = changed[0]
                what = ("its missing-value indicator (SimpleImputer(add_indicator=True))" if o.kind == "indicator"
                        else "it after a scaler" if o.kind == "number" else "it twice")
                raise InvalidTypeError(
                    f"Step {step!r} ({type(trans).__name__}) encodes {what}, column {self.columns[o.column].name!r}: "
                    "kcxai reads encoders on the original column only (a SimpleImputer without add_indicator "
                    "before it is fine).")
            if isinstance(trans, KBinsDiscretizer):
                return self.bins(trans, ins)
            return self.encoder(step, trans, ins)
        raise _refuse(step, trans, self.names(ins))

    def column_transformer(self, step: str, ct: Any, ins: list[Out]) -> list[Out]:
        if not hasattr(ct, "transformers_"):
            raise InvalidInputError(f"'pipeline': step {step!r} is not fitted.")
        if any(o.kind != "raw" for o in ins):
            raise InvalidTypeError(
                f"Step {step!r} (ColumnTransformer) comes after other steps; kcxai reads a ColumnTransformer "
                "as the first step, on the pipeline's input columns.")
        names = self.names(ins)
        seen: dict[str, str] = {}
        parts: list[tuple[int, list[Out]]] = []
        for name, trans, spec in ct.transformers_:
            cols = resolve_columns(spec, names, name)
            if not cols:
                continue
            for c in cols:
                if c in seen and not (isinstance(trans, str) and trans == "drop"):
                    raise InvalidInputError(
                        f"Column {c!r} is encoded by two steps ({seen[c]!r} and {name!r}); kcxai needs each "
                        "column encoded once.")
                seen[c] = name
            outs = self.walk(name, trans, [ins[names.index(c)] for c in cols])
            sl = ct.output_indices_[name]
            if len(outs) != sl.stop - sl.start:
                raise InvalidInputError(
                    f"Step {name!r} produces {sl.stop - sl.start} columns, but kcxai reads {len(outs)} from it: "
                    "unsupported options.")
            parts.append((sl.start, outs))
        return [o for _, outs in sorted(parts, key=lambda p: p[0]) for o in outs]

    def imputer(self, step: str, imp: Any, ins: list[Out]) -> list[Out]:
        if not _nan_marker(imp.missing_values):
            raise InvalidInputError(
                f"Step {step!r} (SimpleImputer) fills the marker {imp.missing_values!r}; kcxai reads missing values "
                "as NaN / None: use missing_values=np.nan (the default).")
        for o in ins:
            self.columns[o.column].imputer = step
        stats = np.asarray(imp.statistics_)
        keep = [j for j in range(len(ins)) if imp.keep_empty_features or not _nan_marker(
            stats[j].item() if isinstance(stats[j], np.generic) else stats[j])]
        out = [ins[j] for j in keep]
        indicator = getattr(imp, "indicator_", None)
        if imp.add_indicator and indicator is not None:
            out += [Out(ins[int(j)].column, "indicator") for j in indicator.features_]
        return out

    def scaler(self, step: str, trans: Any, ins: list[Out]) -> list[Out]:
        out = []
        for j, o in enumerate(ins):
            kind = "number" if o.kind == "raw" else o.kind
            if kind == "number":
                self.columns[o.column].kind = "number"
            out.append(Out(o.column, kind, o.sign * _scale_sign(trans, j), scaled=True))
        return out

    def encoder(self, step: str, enc: Any, ins: list[Out]) -> list[Out]:
        # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
        from sklearn.preprocessing import OneHotEncoder

        _no_infrequent(enc, step, self.names(ins))
        out: list[Out] = []
        drop = getattr(enc, "drop_idx_", None) if isinstance(enc, OneHotEncoder) else None
        rule = getattr(enc, "handle_unknown", "error")
        for k, o in enumerate(ins):
            col = self.columns[o.column]
            _categories(enc, step, col, k)
            if rule != "error":
                col.unknown = f"step {step!r} ({type(enc).__name__}(handle_unknown={rule!r}))"
            if not isinstance(enc, OneHotEncoder):
                out.append(Out(o.column, "coded"))
                continue
            n = len(enc.categories_[k]) - int(drop is not None and drop[k] is not None)
            out += [Out(o.column, "coded") for _ in range(n)]
        return out

    def bins(self, kb: Any, ins: list[Out]) -> list[Out]:
        out: list[Out] = []
        for k, o in enumerate(ins):
            col = self.columns[o.column]
            col.kind, col.edges = "bins", tuple(float(e) for e in kb.bin_edges_[k])
            col.categories = tuple(range(len(col.edges) - 1))
            n = 1 if kb.encode == "ordinal" else len(col.categories)
            out += [Out(o.column, "coded") for _ in range(n)]
        return out


def resolve_columns(cols: Any, names: list[str], step: str) -> list[str]:
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


def _column_names(est: Any) -> tuple[list[str], bool]:
    names = getattr(est, "feature_names_in_", None)
    if names is not None:
        return [str(x) for x in names], True
    return [f"x{i}" for i in range(int(est.n_features_in_))], False


def layout_of(pipeline: Any) -> tuple[Any, str, Layout]:
    """The final estimator, its step name, and the preprocessing's :class:`Layout`."""
    # scikit-learn (heavy) loads on first import of an estimator, not with kcxai
    from sklearn.pipeline import Pipeline

    if not isinstance(pipeline, Pipeline):
        raise InvalidTypeError(f"'pipeline' must be a fitted sklearn Pipeline. Got {type(pipeline).__name__} instead.")
    steps = [(n, s) for n, s in pipeline.steps if not is_passthrough(s)]
    if not steps:
        raise InvalidInputError("'pipeline' has no steps.")
    final_name, final = steps[-1]
    pre = steps[:-1]
    if not hasattr(final, "n_features_in_"):
        raise InvalidInputError(f"'pipeline' is not fitted (its step {final_name!r} has no n_features_in_).")
    for name, s in pre:
        if isinstance(s, str):
            raise InvalidTypeError(f"'pipeline': step {name!r} is the string {s!r}; only 'passthrough' is a step.")
    # the input columns as the first fitted step saw them (an identity FunctionTransformer counts: LightGBM
    # renames the columns it is fitted on, 'mean radius' -> 'mean_radius')
    first = next((st for _, st in pipeline.steps if not isinstance(st, str) and st is not None), final)
    names, named = _column_names(first)
    columns = [Column(n) for n in names]
    reader = _Reader(columns)
    outs = [Out(k, "raw") for k in range(len(names))]
    for name, s in pre:
        if not hasattr(s, "n_features_in_") and not hasattr(s, "transformers_"):
            raise InvalidInputError(f"'pipeline': step {name!r} is not fitted.")
        outs = reader.walk(name, s, outs)
    for o in outs:
        if o.kind == "raw":
            o.kind = "number"
            columns[o.column].kind = "number"
    if len(outs) != int(final.n_features_in_):
        raise InvalidInputError(
            f"The classifier {final_name!r} reads {final.n_features_in_} columns, but the preprocessing "
            f"produces {len(outs)}.")
    return final, final_name, Layout(names, named, columns, outs, [s for _, s in pre])
