"""The brute-force reference oracle (language ``"brute"``): enumerate feature space.

Every point is classified once; each query sums the weights of the matching
points. It is the ground truth the tests hold every other language to, and it
only accepts small spaces.
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from kcxai._errors import ProblemTooLargeError
from kcxai.arithmetic import Weight
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.oracle import Box, GenericSession, OracleSession
from kcxai._types import Point

__all__ = ["BruteForceOracle", "compile", "DEFAULT_MAX_POINTS"]

#: Largest feature space the brute-force oracle enumerates by default.
DEFAULT_MAX_POINTS = 1 << 18


class BruteForceOracle:
    """Answers every query by enumerating all points of feature space.

    It reads point weights straight from the space's distribution (any kind,
    mixtures included), independently of the counting walks of the other oracles.
    """

    language = "brute"

    def __init__(self, model: Any, *, max_points: int = DEFAULT_MAX_POINTS) -> None:
        space = model.space
        if space.size > max_points:
            raise ProblemTooLargeError(
                f"The brute-force oracle enumerates feature space, which has {space.size} points here; "
                f"the limit 'max_points' is {max_points}.")
        self.space = space
        self.n_classes = len(model.classes)
        self._points = list(itertools.product(*(range(s) for s in space.domain_sizes)))
        self._labels = [model.predict_point(p) for p in self._points]
        self._weights = [space.point_weight(p) for p in self._points]
        self._where = {p: k for k, p in enumerate(self._points)}

    def predict_point(self, point: Point) -> int:
        return self._labels[self._where[tuple(point)]]

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        at = sorted(fixed)
        total: Weight = 0
        for x, lab, w in zip(self._points, self._labels, self._weights):
            if lab != label and all(x[i] == point[i] for i in at):
                total += w
        return total

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        return GenericSession(self, point, label, fixed)

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)`` weights of the box (:class:`~kcxai.oracle.BoxOracle`)."""
        d: Weight = 0
        w: Weight = 0
        for x, lab, pw in zip(self._points, self._labels, self._weights):
            if all(m >> k & 1 for m, k in zip(box, x)):
                w += pw
                if lab != label:
                    d += pw
        return d, w

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value of ``feature``, the box's weights with ``feature`` set to it."""
        return tuple(self.box_weights(box[:feature] + (1 << k,) + box[feature + 1:], label)
                     for k in range(self.space.features[feature].size))


def compile(model: Any, *, max_points: int = DEFAULT_MAX_POINTS) -> CompiledModel:
    """Tabulate ``model`` over its whole feature space (``max_points`` is checked by
    :class:`~kcxai.engines._registry.BruteOptions`)."""
    t0 = time.perf_counter()
    oracle = BruteForceOracle(model, max_points=max_points)
    return CompiledModel(model=model, oracle=oracle, language="brute", backend="kcxai",
                         stats=CompileStats(size=model.space.size, size_unit="points",
                                            variables=model.space.n_features,
                                            compile_seconds=time.perf_counter() - t0))
