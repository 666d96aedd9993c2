"""The seed paper's running example (its Figure 1), made concrete."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcxai.models.tree import DecisionTree, Leaf, Split
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["running_example_tree"]


def running_example_tree(*, distribution: DistributionLike = None) -> DecisionTree:
    """The 9-feature boolean tree of the paper's running example.

    Features ``x1 .. x9`` (0-based indices 0..8) have domain ``{0, 1}``;
    classes are ``0`` and ``1``. The instance ``(1,1,1,1,0,0,0,0,1)`` is
    predicted ``1``, and its AXps are ``{x1,x2,x3,x4,x9}`` and ``{x1,x2,x3,x8,x9}``.

    Examples
    --------
    >>> from kcxai.datasets import running_example_tree
    >>> tree = running_example_tree()
    >>> tree.predict((1, 1, 1, 1, 0, 0, 0, 0, 1))
    1
    >>> tree.n_nodes, len(tree.paths)
    (35, 18)
    """
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1]) for i in range(1, 10)],
                         distribution=distribution)

    def t(x: str, zero: Any, one: Any) -> Split:
        return Split(x, {0: zero, 1: one})

    neg, pos = Leaf(0), Leaf(1)
    node16 = t("x7", neg, pos)                     # Q2 / P1
    node10 = t("x3", pos, node16)
    node6 = t("x6", node10, pos)
    node4 = t("x5", node6, pos)
    node26 = t("x4", pos, neg)                     # Q3
    node18 = t("x7", node26, pos)
    node12 = t("x6", node18, pos)
    node8 = t("x5", node12, pos)
    node32 = t("x8", pos, neg)                     # Q4
    node28 = t("x7", node32, pos)
    node20 = t("x6", node28, pos)
    node14 = t("x5", node20, pos)
    node15 = t("x9", neg, pos)                     # Q5 / P13
    node9 = t("x4", node14, node15)
    node5 = t("x3", node8, node9)
    node3 = t("x2", node4, node5)
    root = t("x1", neg, node3)                     # Q1
    return DecisionTree(space, [0, 1], root)
