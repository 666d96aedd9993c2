"""The data of a decision tree: its nodes as users write them, its flat arrays, its paths, and value masks.

These types sit below every module that builds or reads trees (the tree class,
the importers, the ``.dt`` reader, oracles and drawings), so that the importers
can hand the tree class its parts without importing it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from kcxai._errors import ModelFormatError

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.space import FeatureSpace

__all__ = ["Leaf", "Split", "Node", "TreePath", "TreeArrays", "TreeParts", "preorder", "leaf_reached"]


@dataclass(frozen=True)
class Leaf:
    """A leaf predicting ``label`` (a class label; checked against the tree's classes)."""

    label: object


@dataclass(frozen=True)
class Split:
    """An internal node testing ``feature``.

    ``branches`` is a sequence of ``(values, child)``: ``values`` is the set of
    domain values (user values; intervals or numbers inside them for numeric
    features) that lead to ``child``, a :class:`Leaf` or :class:`Split`.
    A mapping ``{value: child}`` is accepted for one value per branch.
    """

    feature: int | str
    branches: BranchesLike

    @classmethod
    def threshold(cls, feature: int | str, threshold: float, left: "Node", right: "Node") -> "Split":
        """The test ``x <= threshold`` on a numeric feature (left when true)."""
        return cls(feature, _ThresholdBranches(float(threshold), left, right))


@dataclass(frozen=True)
class _ThresholdBranches:
    threshold: float
    left: "Node"
    right: "Node"


Node = Union[Leaf, Split]
#: A split's branches as given: ``(values, child)`` pairs, ``{value: child}``, or a threshold test's two.
BranchesLike = Union[Sequence[tuple[object, Node]], Mapping[object, Node], "_ThresholdBranches"]


@dataclass(frozen=True)
class TreePath:
    """A root-to-leaf path: its leaf's class index and, per tested feature, the
    bitmask of the values consistent with it (bit ``k`` is value number ``k``)."""

    label: int
    masks: tuple[tuple[int, int], ...]  # (feature, mask), sorted by feature, only features restricted
    leaf: int

    def features(self) -> tuple[int, ...]:
        """Features the path restricts."""
        return tuple(f for f, _ in self.masks)


@dataclass(frozen=True)
class TreeArrays:
    """A decision tree's flat, read-only node arrays (one entry per node id).

    This is the public view that oracles, importers, ensembles and drawings read;
    the tuples are immutable, so holding the view cannot change the tree.

    Attributes
    ----------
    feature : tuple of int
        The feature tested at each node, ``-1`` at a leaf.
    label : tuple of int
        The class index at each leaf, ``-1`` at an internal node.
    branches : tuple of tuple of (int, int)
        Per node, its outgoing edges ``(mask, child)``: bit ``k`` of ``mask`` is set
        when value number ``k`` of the tested feature follows the edge. Empty at a leaf.
    root : int
        The root's node id.
    """

    feature: tuple[int, ...]
    label: tuple[int, ...]
    branches: tuple[tuple[tuple[int, int], ...], ...]
    root: int


def preorder(root: int, branches: Sequence[Sequence[tuple[int, int]]]) -> list[int]:
    """The node ids reachable from ``root``, each before its children (read backwards: children first).

    Without recursion, so chains thousands of nodes deep are walked too.

    >>> preorder(0, (((1, 1), (2, 2)), (), ()))
    [0, 2, 1]
    """
    order: list[int] = []
    stack = [root]
    while stack:
        nid = stack.pop()
        order.append(nid)
        stack.extend(child for _, child in branches[nid])
    return order


def _full(size: int) -> int:
    return (1 << size) - 1


def _bits(mask: int) -> list[int]:
    """The set bits of ``mask``, in increasing order (linear in its bit length)."""
    out: list[int] = []
    for m in re.finditer("1+", bin(mask)[:1:-1]):
        out.extend(range(m.start(), m.end()))
    return out


#: Runs found with integer arithmetic before the scan of the mask's binary string takes over: each step
#: costs a few passes over the mask, so many runs are cheaper by the scan, one or two (a threshold test)
#: far cheaper by arithmetic (a 100-tree adult forest's JSON took 133 s by the scan alone).
_FEW_RUNS = 8


def _mask_to_json(mask: int) -> list[Any]:
    """Value indices for JSON: an index ``k`` alone, a run of three or more as ``[first, last]``.

    The runs keep the file linear in the tree's size: a threshold test on a
    feature with thousands of intervals is one pair, not thousands of indices.
    """
    runs: list[tuple[int, int]] = []
    rest = mask
    while rest and len(runs) < _FEW_RUNS:
        lo = (rest & -rest).bit_length() - 1
        carried = rest + (1 << lo)  # the run's bits cleared, the bit above it set
        runs.append((lo, (carried & -carried).bit_length() - 2))
        rest &= carried
    if rest:
        runs = [(m.start(), m.end() - 1) for m in re.finditer("1+", bin(mask)[:1:-1])]
    out: list[Any] = []
    for lo, hi in runs:
        if hi - lo >= 2:
            out.append([lo, hi])
        else:
            out.extend(range(lo, hi + 1))
    return out


def _mask_from_json(items: list[Any], size: int, what: str) -> int:
    """Inverse of :func:`_mask_to_json`; each index or ``[first, last]`` run is checked against ``size``.

    A few items are or-ed as integers; more are set in a byte map, read as one binary number (linear in
    ``size`` whatever their number).
    """
    runs: list[tuple[int, int]] = []
    for v in items:
        if isinstance(v, list) and len(v) == 2:
            lo, hi = v
        else:
            lo = hi = v
        for x in (lo, hi):
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < size:
                raise ModelFormatError(
                    f"{what} must be an integer in [0, {size - 1}] or a run [first, last] of them. "
                    f"Got {str(v)[:40]}.")
        if lo > hi:
            raise ModelFormatError(f"{what}: a run [first, last] needs first <= last. Got {v}.")
        runs.append((lo, hi))
    if len(runs) <= _FEW_RUNS:
        mask = 0
        for lo, hi in runs:
            mask |= ((1 << (hi - lo + 1)) - 1) << lo
        return mask
    bitmap = bytearray(size)
    for lo, hi in runs:
        bitmap[lo:hi + 1] = b"\x01" * (hi - lo + 1)
    return int(bytes(bitmap[::-1]).translate(_BIT_CHARS).decode("ascii") or "0", 2)


_BIT_CHARS = bytes.maketrans(b"\x00\x01", b"01")


@dataclass(frozen=True)
class TreeParts:
    """What a tree importer hands the tree class: the space, the classes and the flat arrays.

    ``names`` optionally names each node for error messages (the file's node ids).
    ``leaves`` is set only by importers whose trees are valid by construction (a
    library's threshold trees): the reachable leaves in the order of the tree's
    paths. The tree class then does not check the tree again.
    """

    space: "FeatureSpace"
    classes: Sequence[object]
    arrays: TreeArrays
    names: Sequence[Any] | None = None
    leaves: Sequence[int] | None = None


def leaf_reached(feat: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]], nid: int,
          point: Sequence[int]) -> int:
    """The leaf a point reaches from node ``nid``: at each node, the child whose value mask holds the point's
    value of the node's feature (``feat[n] < 0`` marks a leaf)."""
    while feat[nid] >= 0:
        bit = 1 << point[feat[nid]]
        for mask, child in branches[nid]:
            if mask & bit:
                nid = child
                break
    return nid
