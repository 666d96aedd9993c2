"""Data preparation for the paper's experiment: discretisation, split, the explained instances."""

from __future__ import annotations

import functools
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._params import INT, Range, check
from kcxai.datasets import load_dataset

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = ["PreparedData", "prepare_data", "discretise", "explained_instances", "subsample"]


@dataclass(frozen=True)
class PreparedData:
    """A bundled dataset made finite: every feature is coded ``0 .. k-1``.

    Attributes
    ----------
    name : str
    X : numpy.ndarray
        ``int64`` codes, one row per (distinct) instance of the original data.
    y : numpy.ndarray
        Targets.
    feature_names : tuple of str
    feature_types : tuple of str
        PMLB's types (``"continuous"``, ``"categorical"``, ``"ordinal"``, ``"binary"``).
    labels : tuple of tuple of str
        Per feature, a readable label per code: the original value, or for a
        discretised continuous column the interval ``(a, b]`` of the bin.
    train, test : numpy.ndarray
        Row indices of the train / test split.
    bins : int
        The number of quantile bins asked for continuous columns.
    """

    name: str
    X: Any
    y: Any
    feature_names: tuple[str, ...]
    feature_types: tuple[str, ...]
    labels: tuple[tuple[str, ...], ...]
    train: Any
    test: Any
    bins: int

    @property
    def n_features(self) -> int:
        """Number of features."""
        return int(self.X.shape[1])

    @property
    def n_rows(self) -> int:
        """Number of rows (distinct rows of the original data)."""
        return int(self.X.shape[0])

    @property
    def domains(self) -> list[list[int]]:
        """Per feature, the list of its codes (the feature's domain)."""
        return [list(range(len(lab))) for lab in self.labels]

    @property
    def domain_sizes(self) -> tuple[int, ...]:
        """Per feature, the size of its domain."""
        return tuple(len(lab) for lab in self.labels)


def _fmt(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.4g}"


def discretise(column: Any, bins: int) -> tuple[Any, tuple[str, ...]]:
    """Cut a continuous column into (at most) ``bins`` quantile bins.

    The cut points are the column's ``1/bins, 2/bins, ...`` quantiles
    (duplicates merged, so a column with few distinct values keeps fewer bins);
    a value ``v`` goes to bin ``k`` when ``cut[k-1] < v <= cut[k]``.

    Returns
    -------
    codes : numpy.ndarray
        ``int64`` bin numbers ``0 .. k-1``, renumbered so that only non-empty bins remain.
    labels : tuple of str
        ``(a, b]`` for each bin (``-inf`` / ``inf`` at the ends).

    Examples
    --------
    >>> codes, labels = discretise([1.0, 2.0, 3.0, 4.0], 2)
    >>> codes.tolist(), labels
    ([0, 0, 1, 1], ('(-inf, 2.5]', '(2.5, inf)'))
    """
    check("bins", bins, Range(numbers.Integral, 1))
    col = np.asarray(column, dtype=np.float64)
    cuts = np.unique(np.quantile(col, np.linspace(0.0, 1.0, int(bins) + 1)[1:-1]))
    cuts = cuts[cuts < col.max()] if col.size else cuts  # a cut at the maximum leaves an empty top bin
    raw = np.searchsorted(cuts, col, side="left")  # v <= cut[k] -> bin k
    used, codes = np.unique(raw, return_inverse=True)
    edges = [-np.inf, *cuts.tolist(), np.inf]
    labels = []
    lo = -np.inf  # an empty bin merges into the next one
    for b in used.tolist():
        hi = edges[b + 1]
        lo_s = "-inf" if lo == -np.inf else _fmt(lo)
        labels.append(f"({lo_s}, inf)" if hi == np.inf else f"({lo_s}, {_fmt(hi)}]")
        lo = hi
    return codes.astype(np.int64), tuple(labels)


def prepare_data(name: str, *, bins: int = 10, test_size: float = 0.2, seed: int = 0) -> PreparedData:
    """Load a bundled dataset and make it finite, as the experiment uses it.

    Duplicate rows of the original data are removed (by the loader, as in
    the paper). Continuous columns are cut into ``bins`` quantile bins
    (:func:`discretise`); other columns keep their observed values. Every
    column is then coded ``0 .. k-1`` in the order of its values, so a
    threshold on codes is a threshold on values. The train/test split is
    random (``seed``). Results are cached per process (loading kddcup takes
    seconds): treat the arrays as read-only.

    Examples
    --------
    >>> from kcxai.experiments import prepare_data
    >>> data = prepare_data("allhyper")
    >>> data.n_rows, data.n_features, max(data.domain_sizes)
    (3710, 29, 10)
    """
    check("bins", bins, Range(numbers.Integral, 1))
    if not isinstance(test_size, float) or not 0.0 < test_size < 1.0:
        raise InvalidInputError(f"'test_size' must be a float in (0, 1). Got {test_size!r} instead.")
    check("seed", seed, INT)
    return _prepare(name, int(bins), test_size, int(seed))


@functools.lru_cache(maxsize=6)
def _prepare(name: str, bins: int, test_size: float, seed: int) -> PreparedData:
    ds = load_dataset(name)
    cols, labels = [], []
    for j, kind in enumerate(ds.feature_types):
        if kind == "continuous":
            codes, lab = discretise(ds.X[:, j], bins)
        else:
            vals, codes = np.unique(ds.X[:, j], return_inverse=True)
            lab = tuple(_fmt(v) for v in vals.tolist())
        cols.append(codes.astype(np.int64))
        labels.append(lab)
    X = np.column_stack(cols)
    for a in (X, ds.y):
        a.setflags(write=False)
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    n_test = int(round(test_size * X.shape[0]))
    return PreparedData(name=name, X=X, y=ds.y, feature_names=ds.feature_names, feature_types=ds.feature_types,
                        labels=tuple(labels), train=np.sort(perm[n_test:]), test=np.sort(perm[:n_test]),
                        bins=bins)


def explained_instances(n_rows: int, *, seed: int = 0) -> Any:
    """The rows the paper's protocol explains: a random 30% of a dataset with
    fewer than 10,000 rows, 3% otherwise (rounded to the nearest row).

    Examples
    --------
    >>> len(explained_instances(3710)), len(explained_instances(145585))
    (1113, 4368)
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise InvalidTypeError(f"'n_rows' must be a positive int. Got {n_rows!r} instead.")
    frac = 0.3 if n_rows < 10_000 else 0.03
    n = max(1, int(round(frac * n_rows)))
    return np.sort(np.random.default_rng(seed).choice(int(n_rows), size=n, replace=False))


def subsample(rows: Sequence[int] | np.ndarray[Any, Any], k: int | None, *, seed: int = 0) -> Any:
    """A seeded random subset of ``k`` of ``rows`` (all of them when ``k`` is ``None`` or larger).

    Examples
    --------
    >>> subsample([5, 7, 9], None).tolist()
    [5, 7, 9]
    >>> len(subsample(list(range(100)), 10))
    10
    """
    rows = np.asarray(rows)
    if k is None or k >= rows.size:
        return rows
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InvalidInputError(f"The number of instances must be a non-negative int. Got {k!r} instead.")
    pick = np.random.default_rng(seed).choice(rows.size, size=int(k), replace=False)
    return np.sort(rows[pick])
