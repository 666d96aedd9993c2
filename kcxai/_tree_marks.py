"""What both tree drawings (DOT and matplotlib) mark: edge labels, the instance's path, the explanation's features."""

from __future__ import annotations

from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError

__all__ = ["highlight"]


def _edge_label(feature: Any, mask: int) -> str:
    """The values of one branch, without the feature name (``<= 30``, ``= 1``, ``in {a, b}``)."""
    ks = [k for k in range(feature.size) if mask >> k & 1]
    lit = feature.set_literal(ks)
    prefix = feature.name + " "
    return lit[len(prefix):] if lit.startswith(prefix) else lit


def _check_max_depth(max_depth: Any) -> None:
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0):
        raise InvalidInputError(f"'max_depth' must be a non-negative int or None. Got {max_depth!r} instead.")


def highlight(tree: Any, explanation: Any = None, instance: Any = None
              ) -> tuple[frozenset[int], set[int], set[tuple[int, int]]]:
    """What a drawing highlights: the explanation's features, and the nodes and edges of the instance's
    path (the explanation's instance unless ``instance`` is given). Checks the arguments."""
    from kcxai.explain._result import Explanation
    from kcxai.models.tree import DecisionTree

    if not isinstance(tree, DecisionTree):
        raise InvalidTypeError(f"'tree' must be a DecisionTree. Got {type(tree).__name__} instead.")
    if explanation is not None and not isinstance(explanation, Explanation):
        raise InvalidTypeError(f"'explanation' must be an Explanation. Got {type(explanation).__name__} instead.")
    space = tree.space
    expl_features: frozenset[int] = frozenset()
    if explanation is not None:
        names = space.names
        if any(not 0 <= i < len(names) or names[i] != n for i, n in zip(explanation.features, explanation.names)):
            raise InvalidInputError(
                f"'explanation' is over features {list(explanation.names)}, which are not features of "
                f"this tree (its features are {list(names)}).")
        expl_features = frozenset(explanation.features)
        if instance is None and explanation.instance:
            instance = explanation.instance
    point = None if instance is None else space.encode(instance)
    arrays = tree.arrays
    feat, branches = arrays.feature, arrays.branches
    on_path: set[int] = set()
    path_edges: set[tuple[int, int]] = set()
    if point is not None:
        nid = arrays.root
        on_path.add(nid)
        while feat[nid] >= 0:
            bit = 1 << point[feat[nid]]
            child = next(c for m, c in branches[nid] if m & bit)
            path_edges.add((nid, child))
            nid = child
            on_path.add(nid)
    return expl_features, on_path, path_edges
