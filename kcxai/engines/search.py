"""The ``search`` language: exact branch and bound over boxes of values, deciding sufficiency (delta = 0).

The same answers as the ``sat`` language, found by a search whose bounds are sums of leaf values
(:class:`~kcxai.engines._ensemble_box.EnsembleBox`): much faster than SAT where leaf values are
floats (boosted trees, soft-voting forests).

Options
-------
max_seconds : float or None, default 60
    Limit on building the engine; each explanation has its own ``max_seconds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcxai.compilers.compiled import CompiledModel
from kcxai.engines._decision import EngineOptions, compile_engine

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["compile"]


def compile(model: "Classifier", **options: Any) -> CompiledModel:
    """The branch-and-bound engine of a tree ensemble.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> engine = kcxai.compile_model(RandomForest(space, [0, 1], trees), "search")
    >>> kcxai.min_idrs(engine, [1, 1, 0], 0).names
    ('a', 'b')
    """
    return compile_engine(model, "search", EngineOptions.from_kwargs(**options))
