"""The five PMLB datasets of the paper's experiment, shipped with kcxai (offline)."""

from __future__ import annotations

import csv
import gzip
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError
from kcxai.datasets._metadata import parse_metadata
from kcxai.models.tree import DecisionTree

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.data import DataLike

__all__ = ["Dataset", "load_dataset", "DATASETS", "reference_tree", "REFERENCE_TREES"]

#: Names of the bundled PMLB datasets.
DATASETS = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
#: Names of the bundled reference trees (``.dt`` format, adult).
REFERENCE_TREES = ("IAI12", "IAI14", "SKL14")


@dataclass(frozen=True)
class Dataset:
    """A bundled dataset.

    Attributes
    ----------
    name : str
    X : numpy.ndarray
        Feature values (float64), one row per instance.
    y : numpy.ndarray
        Target values (int64).
    feature_names : tuple of str
    feature_types : tuple of str
        PMLB's types: ``"continuous"``, ``"categorical"``, ``"ordinal"`` or ``"binary"``.
    value_maps : dict
        Column name -> ``{code: label}`` for the coded columns whose labels the metadata gives.
    class_names : dict
        ``{code: label}`` of the target (empty when the metadata gives none).

    With ``as_frame=True``, ``X`` is a pandas DataFrame whose coded columns hold their labels (a
    categorical dtype) and ``y`` a Series of class labels.
    """

    name: str
    X: Any
    y: Any
    feature_names: tuple[str, ...]
    feature_types: tuple[str, ...]
    value_maps: dict[str, dict[int, str]] = field(default_factory=dict)
    class_names: dict[int, str] = field(default_factory=dict)

    @property
    def continuous(self) -> tuple[int, ...]:
        """Indices of the continuous columns."""
        return tuple(i for i, t in enumerate(self.feature_types) if t == "continuous")

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, {self.X.shape[0]} rows, {self.X.shape[1]} features, "
                f"{len(self.continuous)} continuous)")


def _data(name: str) -> Any:
    return resources.files("kcxai.datasets").joinpath("data").joinpath(name)


def _metadata(name: str) -> Any:
    return parse_metadata(_data(f"pmlb/{name}.metadata.yaml").read_text(encoding="utf-8"), name=name)


def _as_frame(X: DataLike, y: Any, names: tuple[str, ...], maps: dict[str, dict[int, str]],
              classes: dict[int, str]) -> tuple[Any, Any]:
    """The data as a DataFrame (labelled categories for coded columns) and a Series of class labels."""
    # pandas (heavy) loads only when a dataset is built as a DataFrame, not with kcxai
    import pandas as pd

    cols: dict[str, Any] = {}
    for k, n in enumerate(names):
        col = X[:, k]
        if n in maps:
            m = maps[n]
            labels = [m[c] for c in sorted(m)]
            cols[n] = pd.Categorical([m[int(v)] for v in col], categories=labels)
        else:
            cols[n] = col
    frame = pd.DataFrame(cols)
    target = pd.Series([classes[int(v)] for v in y] if classes else y, name="target")
    return frame, target


def load_dataset(name: str, *, drop_duplicates: bool = True, as_frame: bool = False) -> Dataset:
    """Load one of the bundled PMLB datasets.

    Parameters
    ----------
    name : {"adult", "allhyper", "ann_thyroid", "fars", "kddcup"}
    drop_duplicates : bool, default True
        Remove duplicate rows (features and target), as the paper's protocol does.
    as_frame : bool, default False
        Return ``X`` as a pandas DataFrame whose coded columns hold the labels the metadata gives
        (``workclass = "Private"``, a categorical dtype) and ``y`` as a Series of class labels
        (``"<=50K"``); otherwise numpy arrays of codes.

    Examples
    --------
    >>> from kcxai.datasets import load_dataset
    >>> ds = load_dataset("allhyper")
    >>> ds.X.shape[1], len(ds.feature_names)
    (29, 29)
    >>> adult = load_dataset("adult", as_frame=True)
    >>> adult.X["sex"].iloc[0], adult.y.iloc[0], adult.class_names
    ('Male', '<=50K', {1: '<=50K', 0: '>50K'})
    """
    if name not in DATASETS:
        raise InvalidInputError(f"Unknown dataset {name!r}; the bundled datasets are {list(DATASETS)}.")
    with _data(f"pmlb/{name}.tsv.gz").open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as fh:
        rows = list(csv.reader(fh, delimiter="\t"))
    header, body = rows[0], rows[1:]
    data = np.array(body, dtype=np.float64)
    if drop_duplicates:
        _, keep = np.unique(data, axis=0, return_index=True)
        data = data[np.sort(keep)]
    meta = _metadata(name)
    types = meta.types
    names = tuple(header[:-1])
    missing = [n for n in names if n not in types]
    if missing:  # pragma: no cover - the bundled metadata types every column
        raise InvalidInputError(f"Dataset {name!r}: the metadata gives no type for the columns {missing}.")
    X, y = data[:, :-1], data[:, -1].astype(np.int64)
    if as_frame:
        X, y = _as_frame(X, y, names, meta.value_maps, meta.target_map)
    return Dataset(name=name, X=X, y=y, feature_names=names, feature_types=tuple(types[n] for n in names),
                   value_maps=meta.value_maps, class_names=meta.target_map)


def reference_tree(name: str = "SKL14") -> DecisionTree:
    """One of the three real adult trees published with the authors' tool (``.dt`` format).

    Examples
    --------
    >>> from kcxai.datasets import reference_tree
    >>> reference_tree("IAI12").n_nodes
    849
    """
    if name not in REFERENCE_TREES:
        raise InvalidInputError(f"Unknown reference tree {name!r}; choose one of {list(REFERENCE_TREES)}.")
    with resources.as_file(_data(f"ref_trees/adult_{name}.dt")) as dt, \
            resources.as_file(_data(f"ref_trees/adult_{name}.map")) as mp:
        return DecisionTree.from_dt(str(dt), str(mp))


def reference_instances(name: str = "SKL14") -> Any:
    """The instances published with the reference trees (tree values), as an int array."""
    if name not in REFERENCE_TREES:
        raise InvalidInputError(f"Unknown reference tree {name!r}; choose one of {list(REFERENCE_TREES)}.")
    fname = "adult_SKL14_instances.csv" if name == "SKL14" else "adult_IAI_instances.csv"
    with _data(f"ref_trees/{fname}").open("r", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    return np.array(rows[1:], dtype=np.int64)[:, :-1]
