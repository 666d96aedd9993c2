"""From nested :class:`Leaf` / :class:`Split` nodes to a decision tree's flat arrays.

The build is iterative (chains thousands of nodes deep do not hit the recursion
limit) and linear in the tree's size: a node's name in error messages
(``root / x = 1 / ...``) grows with its depth, so it is spelled out only when
an error is raised.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai.models._tree_data import Leaf, Node, Split, _bits, _full, _ThresholdBranches
from kcxai.space import Feature, FeatureSpace

__all__ = ["arrays_from_nodes"]


def arrays_from_nodes(space: FeatureSpace, root: Node, class_index: Callable[[Any], int]
                      ) -> tuple[list[int], list[int], list[tuple[tuple[int, int], ...]], "_NestedNames"]:
    """The flat arrays (feature, class index, branches; node ids in pre-order) of a tree given as nested
    nodes, and the nodes' names for error messages."""
    feat: list[int] = []
    label: list[int] = []
    branches: list[tuple[tuple[int, int], ...]] = []
    # Each node's place (parent, slot); its name ("root / value / ...") is spelled out only for an
    # error message: the names themselves grow with depth (quadratic memory on deep chains).
    parent_of: list[tuple[int, int]] = []
    pending: dict[int, list[tuple[int, int]]] = {}
    names = _NestedNames(space, feat, pending, parent_of)
    # iterative pre-order build (deep trees must not hit the recursion limit)
    todo: list[tuple[Any, int, int]] = [(root, -1, -1)]  # node, parent, branch
    while todo:
        node, parent, slot = todo.pop()
        nid = len(feat)
        if parent >= 0:
            pending[parent][slot] = (pending[parent][slot][0], nid)
        parent_of.append((parent, slot))
        if isinstance(node, Leaf):
            feat.append(-1)
            label.append(class_index(node.label))
            branches.append(())
            continue
        if not isinstance(node, Split):
            raise InvalidTypeError(
                f"Tree node at {names.where(parent, slot)} must be a Leaf or Split. Got {node!r} instead.")
        f = space.feature_index(node.feature)
        feat.append(f)
        label.append(-1)
        branches.append(())
        masks = _branch_masks(space.features[f], node.branches, names.where(parent, slot))
        pending[nid] = [(mask, -1) for mask, _ in masks]
        for slot_k in range(len(masks) - 1, -1, -1):
            todo.append((masks[slot_k][1], nid, slot_k))
    for nid, out in pending.items():
        branches[nid] = tuple(out)
    return feat, label, branches, names


def _branch_masks(feature: Feature, spec: Any, where: object) -> list[tuple[int, Any]]:
    if isinstance(spec, _ThresholdBranches):
        if not feature.is_numeric:
            raise InvalidInputError(
                f"Split.threshold at {where} needs a numeric feature; {feature.name!r} is categorical.")
        ts = feature.thresholds if feature.thresholds is not None else ()
        t = spec.threshold
        # the intervals only: a missing value (the last value, if any) follows neither side of a threshold
        intervals = _full(len(ts) + 1)
        if math.isfinite(t):  # interval k is (ts[k-1], ts[k]]: two binary searches, not a scan of them all
            n_left = bisect.bisect_right(ts, t)  # intervals whose upper end is <= t
            if n_left == bisect.bisect_left(ts, t) + 1:  # t is a cut: the other intervals start at or after it
                return [((1 << n_left) - 1, spec.left), (intervals ^ ((1 << n_left) - 1), spec.right)]
            raise InvalidInputError(
                f"Split.threshold at {where}: threshold {spec.threshold} cuts the interval "
                f"{feature.values[n_left]} of feature {feature.name!r}; add it to the feature's thresholds.")
        left = right = 0
        for k, iv in enumerate(feature.values[:len(ts) + 1]):
            if iv.high <= spec.threshold:
                left |= 1 << k
            elif iv.low >= spec.threshold:
                right |= 1 << k
            else:
                raise InvalidInputError(
                    f"Split.threshold at {where}: threshold {spec.threshold} cuts the interval {iv} of "
                    f"feature {feature.name!r}; add it to the feature's thresholds.")
        return [(left, spec.left), (right, spec.right)]
    if isinstance(spec, Mapping):
        items: Any = spec.items()
    elif isinstance(spec, Iterable) and not isinstance(spec, (str, bytes)):
        items = spec
    else:
        raise InvalidTypeError(
            f"Split branches at {where} must be a mapping {{value: child}} or a sequence of "
            f"(values, child) pairs. Got {spec!r} instead.")
    out = []
    for item in items:
        try:
            values, child = item
        except (TypeError, ValueError):
            raise InvalidTypeError(
                f"Split branches at {where} must be (values, child) pairs. Got {item!r} instead.") from None
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            values = [values]
        mask = 0
        for v in values:
            mask |= 1 << feature.index(v)
        out.append((mask, child))
    return out



class _NestedNames:
    """The names ``root / value / value ...`` of the nodes of a tree built from nested nodes, spelled out
    only when asked (an error message): stored, they would grow with the depth."""

    __slots__ = ("space", "feat", "branches", "parent_of")

    def __init__(self, space: FeatureSpace, feat: list[int], branches: dict[int, list[tuple[int, int]]],
                 parent_of: list[tuple[int, int]]) -> None:
        self.space, self.feat, self.branches, self.parent_of = space, feat, branches, parent_of

    def where(self, parent: int, slot: int) -> "_Where":
        """The name of the child at ``slot`` of ``parent`` (``-1``: the root), as a lazy string."""
        return _Where(self, parent, slot)

    def name(self, parent: int, slot: int) -> str:
        steps: list[str] = []
        while parent >= 0:
            feature = self.space.features[self.feat[parent]]
            steps.append(feature.set_literal(_bits(self.branches[parent][slot][0])))
            parent, slot = self.parent_of[parent]
        return " / ".join(["root", *reversed(steps)])

    def __getitem__(self, nid: int) -> str:
        return self.name(*self.parent_of[nid])


class _Where:
    __slots__ = ("names", "parent", "slot")

    def __init__(self, names: _NestedNames, parent: int, slot: int) -> None:
        self.names, self.parent, self.slot = names, parent, slot

    def __str__(self) -> str:
        return self.names.name(self.parent, self.slot)
