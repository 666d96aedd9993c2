"""Inflating an AXp of a tree ensemble (delta = 0): widen each feature's range while the box stays sufficient.

The ensemble engines decide sufficiency without counting. The box search
(:class:`~kcxai.engines._ensemble_box.EnsembleBox`) answers it for any box of value ranges
(``changes_in_box``), so each condition grows one adjacent value at a time (up, then down) while no point
of the box gets another class. Sufficiency is monotone in the box, so one pass over the features leaves no
range that one more value could widen. The widened rule's precision is 1 (proved by the search) and its
coverage is the box's weight under the model's distribution, exactly.

The SAT engine (:class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`) fixes a feature to one value by
assumptions; a value set needs the assumptions "not value k" for each k outside it, which its encoding
would have to expose. Until it does, an AXp found by SAT is widened with the box search on the same model.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kcxai._deadline import Deadline, check_max_seconds
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.explain.explanation import Explanation
from kcxai.explain._widen import widened_explanation, widening_order
from kcxai.oracle import box_weight

__all__ = ["inflate_sufficient"]


def _engine(obj: Any, deadline: Deadline) -> Any:
    from kcxai.engines._ensemble_box import EnsembleBox
    from kcxai.engines._ensemble_cnf import EnsembleCnf
    from kcxai.models.boosted import BoostedTrees
    from kcxai.models.forest import RandomForest

    if isinstance(obj, EnsembleBox):
        return obj
    inner = getattr(getattr(obj, "oracle", obj), "engine", None)  # a compiled 'search' engine, or its oracle
    if isinstance(inner, EnsembleBox):
        return inner
    model = obj.model if isinstance(obj, EnsembleCnf) else getattr(obj, "model", obj)
    if not isinstance(model, (RandomForest, BoostedTrees)):
        raise InvalidTypeError(
            "An ensemble AXp (language 'sat' or 'search') is widened on its ensemble: pass the RandomForest or "
            f"BoostedTrees model, or its prepared engine. Got {type(obj).__name__} instead.")
    from kcxai.engines.choose import cached_compiled

    compiled = cached_compiled(model, "search")  # built once per model, kept by it
    return compiled.oracle.engine  # type: ignore[union-attr]


def inflate_sufficient(obj: Any, e: Explanation, *, order: Any, max_seconds: Any, t0: float) -> Explanation:
    """:func:`kcxai.inflate` for an ensemble AXp (delta = 0)."""
    if e.delta != 0:
        raise InvalidInputError(f"An ensemble explanation ({e.language}) is an AXp (delta = 0). Got delta {e.delta}.")
    calls = 0
    deadline = Deadline(check_max_seconds(max_seconds), what="widening an ensemble AXp", advice="",
                        queries=lambda: calls)
    try:
        engine = _engine(obj, deadline)
        model = engine.model
        space = model.space
        point = space.encode(e.instance, argument="explanation.instance")
        label = model.predict_point(point)
        if model.classes[label] != e.prediction:
            raise InvalidInputError(
                f"'obj' predicts {model.classes[label]!r} for the explanation's instance, "
                f"explained as {e.prediction!r}.")
        sizes = [f.size for f in space.features]
        lo = np.array([point[f] if f in e.features else 0 for f in range(len(sizes))], dtype=np.int64)
        hi = np.array([point[f] if f in e.features else sizes[f] - 1 for f in range(len(sizes))], dtype=np.int64)
        calls += 1
        if engine.changes_in_box(lo, hi, label, deadline):
            raise InvalidInputError(f"'explanation' ({e.method}) is not sufficient for 'obj': nothing to widen from.")
        for f in widening_order(space, e.features, order):
            for end, step, stop in ((hi, 1, sizes[f] - 1), (lo, -1, 0)):
                while end[f] != stop:
                    end[f] += step
                    calls += 1
                    if engine.changes_in_box(lo, hi, label, deadline):
                        end[f] -= step
                        break
    finally:
        deadline.close()
    box = tuple(((1 << (int(h) + 1)) - 1) & ~((1 << int(lw)) - 1) for lw, h in zip(lo, hi))
    dist = space.distribution
    weight = sum((c * box_weight(pw, box) for c, pw in dist.components), dist.arith.zero)
    return widened_explanation(e, space, box, dist.arith.zero, weight, calls, time.perf_counter() - t0)
