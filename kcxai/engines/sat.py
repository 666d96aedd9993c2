"""The ``sat`` language: a tree ensemble's CNF in an incremental SAT solver, deciding sufficiency (delta = 0).

Nothing is counted: the oracle (:class:`~kcxai.engines._decision.EngineOracle`) decides whether
every point agreeing with an instance on a set of features gets its class, one SAT call under
assumptions each (the encoding: :class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`). So it answers the
delta = 0 methods (AXps, CXps, the smallest of them) of forests and boosted trees whose compiled
forms do not fit in memory.

Options
-------
solver : str, default "mgh"
    A MiniSat-like pysat solver (``"mgh"``, ``"m22"``, ``"g3"``, ``"g4"``), which a time limit can interrupt.
max_seconds : float or None, default 60
    Limit on building the CNF; each explanation has its own ``max_seconds``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcxai.compilers.compiled import CompiledModel
from kcxai.engines._decision import SatOptions, compile_engine

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["compile"]


def compile(model: "Classifier", **options: Any) -> CompiledModel:
    """The SAT engine of a tree ensemble.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> engine = kcxai.compile_model(RandomForest(space, [0, 1], trees, voting="hard"), "sat")
    >>> kcxai.min_idrs(engine, [1, 1, 0], 0).names
    ('a', 'b')
    """
    return compile_engine(model, "sat", SatOptions.from_kwargs(**options))
