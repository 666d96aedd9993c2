"""The experiment's settings beyond the paper's: a distribution fitted on the training rows, the
C-delta mode, and the explanations held against the held-out rows.

The paper's setting is the uniform distribution over the finite feature space and
min-I-delta-relevant sets (:func:`kcxai.min_idrs`). Here the distribution can also be
fitted (:func:`kcxai.fit_distribution`) on the protocol's training rows (the rows the
tree is trained on), and the explainer can be :func:`kcxai.local_cdrs` with a precision
bound. Every explanation is then measured on the protocol's test rows, which were used
neither to train the tree nor to fit the distribution.
"""

from __future__ import annotations

import dataclasses
import time
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai import fit_distribution
from kcxai._params import POSITIVE_INT, Options, check
from kcxai.experiments._data import PreparedData
from kcxai.experiments._trees import TrainedTree

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai.data import DataLike

__all__ = ["DISTRIBUTIONS", "MODES", "with_fitted_distribution", "HeldOut", "check_setting"]

#: Distributions the experiment can explain under (``kind`` of :func:`kcxai.fit_distribution`).
DISTRIBUTIONS = ("uniform", "product", "mixture")

#: ``idrs``: :func:`kcxai.min_idrs` (delta bounds the error, the paper's setting);
#: ``cdrs``: :func:`kcxai.local_cdrs` (delta bounds the precision from below).
MODES = ("idrs", "cdrs")

# Fitted distributions of this process, by (dataset, seed, bins, tree settings, kind, K): the
# side-by-side runner explains the same trees under several settings, and a mixture fit of
# kddcup (116k training rows, 41 features) takes tens of seconds.
_FITTED: dict[tuple[Any, ...], Any] = {}


def check_setting(distribution: DistributionLike, mode: Any, components: Any) -> None:
    """An :class:`~kcxai.InvalidInputError` naming the argument unless the setting is known."""
    check("distribution", distribution, Options(DISTRIBUTIONS))
    check("mode", mode, Options(MODES))
    check("components", components, POSITIVE_INT)


def with_fitted_distribution(data: PreparedData, trained: TrainedTree, kind: str, *, components: int = 8,
                             seed: int = 0) -> tuple[TrainedTree, float]:
    """``trained`` with its kcxai tree under a distribution fitted on ``data``'s training rows.

    ``"uniform"`` returns ``trained`` itself (the paper's setting). The fit is
    seeded (``random_state=seed``) and cached per process.

    Returns
    -------
    trained : TrainedTree
    fit_seconds : float
        CPU seconds of the fit (0 when cached or uniform).

    Examples
    --------
    >>> from kcxai.experiments import prepare_data, train_tree
    >>> data = prepare_data("allhyper")
    >>> t, _ = with_fitted_distribution(data, train_tree(data), "product")
    >>> t.tree.space.distribution.kind
    'product'
    """
    check_setting(kind, "idrs", components)
    if kind == "uniform":
        return trained, 0.0
    key = (data.name, seed, data.bins, tuple(sorted(trained.settings.items())), trained.n_nodes, kind,
           components if kind == "mixture" else 0)
    seconds = 0.0
    dist = _FITTED.get(key)
    if dist is None:
        c0 = time.process_time()
        dist = _FITTED[key] = fit_distribution(trained.tree, data.X[data.train], kind=kind, n_components=components,
                                               random_state=seed)
        seconds = time.process_time() - c0
    return dataclasses.replace(trained, tree=trained.tree.with_distribution(dist)), seconds


class HeldOut:
    """The protocol's test rows and the tree's predictions on them: on-data precision and coverage.

    Equivalent to :func:`kcxai.evaluate_on_data` (a rule ``x_S = v_S`` against the rows),
    vectorised with numpy for the experiment's thousands of explanations.

    Examples
    --------
    >>> import numpy as np
    >>> h = HeldOut(np.array([[0, 0], [0, 1], [1, 1]]), np.array([0, 1, 1]))
    >>> h.measure(np.array([0, 1]), (0,), 1)
    (2, 1)
    """

    def __init__(self, X: DataLike, labels: Any) -> None:
        self.X = np.asarray(X)
        self.labels = np.asarray(labels)

    @classmethod
    def of(cls, data: PreparedData, trained: TrainedTree) -> HeldOut:
        """The test rows of ``data``, classified by ``trained``'s scikit-learn tree."""
        X = data.X[data.test]
        return cls(X, trained.clf.predict(X))

    def measure(self, x: Any, features: Any, prediction: Any) -> tuple[int, int]:
        """``(matching, agreeing)``: rows with ``x_S = v_S``, and those of them predicted ``prediction``."""
        cols = list(features)
        mask = np.all(self.X[:, cols] == np.asarray(x)[cols], axis=1) if cols else np.ones(len(self.X), dtype=bool)
        return int(mask.sum()), int(np.count_nonzero(self.labels[mask] == prediction))

    def measure_box(self, box: Any, prediction: Any) -> tuple[int, int]:
        """``(matching, agreeing)`` for a rule given as a box (per feature a bitmask of the codes it allows;
        a negative mask leaves the feature free): the widened rules of :func:`kcxai.inflate` and Anchor's.

        >>> import numpy as np
        >>> h = HeldOut(np.array([[0, 0], [1, 1], [2, 1]]), np.array([0, 1, 1]))
        >>> h.measure_box((0b011, -1), 1)
        (2, 1)
        """
        mask = np.ones(len(self.X), dtype=bool)
        for f, allowed in enumerate(box):
            if allowed >= 0:
                mask &= np.isin(self.X[:, f], [k for k in range(int(allowed).bit_length()) if allowed >> k & 1])
        return int(mask.sum()), int(np.count_nonzero(self.labels[mask] == prediction))

    def fields(self, x: Any, features: Any, prediction: Any) -> dict[str, Any]:
        """The record fields ``data_rows``, ``data_matching``, ``data_precision`` (``""`` with no
        matching row) and ``data_coverage``."""
        matching, agreeing = self.measure(x, features, prediction)
        n = len(self.X)
        return {"data_rows": n, "data_matching": matching,
                "data_precision": float(Fraction(agreeing, matching)) if matching else "",
                "data_coverage": float(Fraction(matching, n)) if n else ""}
