"""What an import takes from the training rows: the columns that may be missing, the domains a linear model
ranges over, and the distribution every count is under (:func:`with_distribution`, the one rule the
:class:`~kcxai.Explainer`, :func:`kcxai.from_sklearn` and :func:`kcxai.from_pipeline` share).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._table import TableReader, is_missing
from kcxai.fit import KINDS, fit_distribution
from kcxai.models.classifier import Classifier

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai.data import DataLike

__all__ = ["Imported", "missing_columns", "domains_from", "relabel", "with_distribution", "DISTRIBUTIONS"]

#: What a ``distribution`` argument of an import may name: ``"auto"``, or a kind :func:`kcxai.fit_distribution`
#: fits.
DISTRIBUTIONS = ("auto", *KINDS)


class Imported(NamedTuple):
    """A kcxai model and the reader of the tables its source reads (a pipeline's input columns, or the
    model's own features)."""

    model: Classifier
    reader: TableReader


def missing_columns(X: DataLike) -> list[str]:
    """The columns of the training rows ``X`` that hold a missing value (NaN / None); by position ``x0, x1, ...``
    for an array.

    Examples
    --------
    >>> missing_columns([[1.0, float("nan")], [2.0, 3.0]]), missing_columns(None)
    (['x1'], [])
    """
    if X is None:
        return []
    if hasattr(X, "columns") and hasattr(X, "isna"):
        return [str(c) for c in X.columns if bool(X[c].isna().any())]
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        cells = np.asarray(X, dtype=object)
        if cells.ndim != 2:
            return []
        return [f"x{k}" for k in range(cells.shape[1]) if any(is_missing(v) for v in cells[:, k])]
    if arr.ndim != 2:
        return []
    return [f"x{k}" for k in np.flatnonzero(np.isnan(arr).any(axis=0)).tolist()]


def domains_from(X: Any, names: Sequence[str]) -> list[list[float]]:
    """The sorted distinct values of each column of ``X`` (a DataFrame by name, else by position): the finite
    domains of a linear model over raw numbers.

    Examples
    --------
    >>> domains_from([[0, 1.5], [1, 1.5], [0, 2.5]], ["a", "b"])
    [[0.0, 1.0], [1.5, 2.5]]
    """
    if hasattr(X, "columns"):
        absent = [n for n in names if n not in [str(c) for c in X.columns]]
        if absent:
            raise InvalidInputError(f"'X_train' lacks the model's columns {absent}.")
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


def relabel(model: Classifier, class_names: Any) -> Classifier:
    """The same model with its class labels renamed through ``class_names`` (a mapping ``{class: name}``)."""
    if not isinstance(class_names, Mapping):
        raise InvalidTypeError(f"'class_names' must be a mapping {{class: name}}. Got {type(class_names).__name__}.")
    unknown = [c for c in class_names if c not in model.classes]
    if unknown:
        raise InvalidInputError(
            f"'class_names' names unknown classes {unknown}; the classes are {list(model.classes)}.")
    return model.with_classes([class_names.get(c, c) for c in model.classes])


def with_distribution(model: Classifier, distribution: DistributionLike, X_train: DataLike, reader: TableReader,
                      options: Mapping[str, Any] | None = None) -> Classifier:
    """The model under ``distribution``.

    ``"auto"`` is ``"product"`` when there are training rows, else the model's own (uniform, unless it was
    given one: the paper's setting); ``None`` keeps the model's own; a kind of :data:`kcxai.fit.KINDS` is
    fitted on ``X_train`` (read by ``reader``) with :func:`kcxai.fit_distribution` and ``options``; anything
    else (a :class:`~kcxai.Distribution`, per-feature weights) goes to ``model.with_distribution``.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> rows = [[1, 1, 1, 1, 0, 0, 0, 0, 1]] * 3
    >>> fitted = with_distribution(tree, "auto", rows, TableReader.for_space(tree.space))
    >>> fitted.space.distribution.kind, fitted.space.value_probability(0, 1)
    ('product', Fraction(4, 5))
    """
    if options is not None and not isinstance(options, Mapping):
        raise InvalidTypeError(f"'distribution_options' must be a mapping. Got {type(options).__name__} instead.")
    if isinstance(distribution, str) and distribution == "auto":
        distribution = None if X_train is None else "product"
    if distribution is None:
        if options:
            raise InvalidInputError("'distribution_options' apply to a fitted distribution: give distribution=KIND.")
        return model
    if isinstance(distribution, str):
        if distribution not in KINDS:
            raise InvalidInputError(
                f"'distribution' must be None, 'auto', one of {list(KINDS)}, a Distribution or per-feature "
                f"weights. Got {distribution!r} instead.")
        if X_train is None:
            raise InvalidInputError(f"distribution={distribution!r} is fitted on the training rows: pass X_train.")
        rows = reader.read(X_train, argument="X_train").instances
        return model.with_distribution(fit_distribution(model, rows, kind=distribution, **dict(options or {})))
    if options:
        raise InvalidInputError("'distribution_options' apply to a fitted distribution: give distribution=KIND.")
    return model.with_distribution(distribution)
