"""A decision tree's node arrays laid out as binary tests, for walking many points at once with numpy.

A node with branches ``(m_1, c_1), ..., (m_r, c_r)`` (the point-wise walk takes the *first* branch
whose mask holds the value) becomes a chain of tests "is the value in ``T_j``? then ``c_j``, else the
next test", the last branch taken by default. A test ``T_j`` is an interval of value indices (a
threshold test is a prefix, a one-hot column's test one value) when the values still reaching it allow
one, else a bitmap of the values (any width: adult's ``fnlwgt`` has 38,768 values). The two children of
a test sit side by side, so a step is ``child = first[node] + inside`` (:class:`BinaryTree`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BinaryTree", "binary_tree"]

_Test = tuple[int, int, bytes | None]  # (lo, width, bitmap): inside iff lo <= v < lo + width, or bit v set


def _lowest(s: int) -> int:
    """The lowest value index in the non-empty set ``s``."""
    return 0 if s & 1 else (s & -s).bit_length() - 1


def _is_interval(s: int) -> bool:
    """Whether the non-empty set ``s`` of value indices is one run ``lo .. hi``."""
    return s.bit_count() == s.bit_length() - _lowest(s)


def _test_for(inside: int, size: int) -> _Test:
    """The test of a non-empty set of value indices: its interval if it is one, else its bitmap
    (``size`` bits, so that no value of the domain reads past it)."""
    lo = _lowest(inside)
    hi = inside.bit_length()
    if inside.bit_count() == hi - lo:
        return lo, hi - lo, None
    return 0, 0, inside.to_bytes((size + 7) // 8, "little")


def _chain(branches: Sequence[tuple[int, int]], size: int) -> tuple[list[tuple[_Test, bool, int]], int]:
    """A node's branches as binary tests: ``([(test, swap, child), ...], default child)``.

    Test ``j`` is reached by the values in no earlier branch (``rest``) and must send exactly those of
    them in ``m_j`` to ``c_j``; it may also hold values of earlier branches (they never reach it), and it
    may test the complement instead (``swap``: inside goes on to the next test), whichever is an interval.
    A branch holding no value of ``rest`` is skipped; the last one holding some is the default: every
    value that reaches a node is in one of its branches (the tree's check), so the values reaching the
    default that are not in its mask reach no point's walk.
    """
    full = (1 << size) - 1
    rest = full
    tests: list[tuple[_Test, bool, int]] = []
    for m, c in branches:
        take = m & rest
        if not take:
            continue
        if take == rest:
            return tests, c
        s, swap = take, False
        if not _is_interval(s):
            done = full ^ rest  # the values of earlier branches
            for cand, flip in ((take | done, False), (full ^ take, True), (rest ^ take, True)):
                if cand and _is_interval(cand):
                    s, swap = cand, flip
                    break
        tests.append((_test_for(s, size), swap, c))
        rest ^= take
    if not tests:
        raise ValueError("a node none of whose branches holds a value")
    return tests, tests.pop()[2]


class BinaryTree:
    """A tree as binary tests on numpy arrays (see the module): slot ``k`` goes to ``first[k] + inside``.

    Slot 0 is the root. At a test slot, ``inside`` is ``lo[k] <= v < lo[k] + width[k]`` for the value
    ``v`` of feature ``feat[k]``, or, where ``bit_at[k] >= 0``, bit ``v`` of the bitmap at byte
    ``bit_at[k]`` of :attr:`bits`. A leaf slot has ``width`` 0 and ``first`` itself; ``node[k]`` is its
    node id in the tree (``-1`` at a test). Build with :func:`binary_tree`.
    """

    __slots__ = ("feat", "lo", "width", "first", "bit_at", "bits", "node", "depth")

    def __init__(self, feat: Any, lo: Any, width: Any, first: Any, bit_at: Any, bits: bytes, node: Any) -> None:
        self.feat = np.asarray(feat, dtype=np.int64)
        self.lo = np.asarray(lo, dtype=np.int64)
        self.width = np.asarray(width, dtype=np.uint64)
        self.first = np.asarray(first, dtype=np.int64)
        self.bit_at = np.asarray(bit_at, dtype=np.int64)
        self.bits = np.frombuffer(bytes(bits), dtype=np.uint8)
        self.node = np.asarray(node, dtype=np.int64)
        #: The most tests on a path (a walk's steps).
        self.depth = 0
        level = np.zeros(1, dtype=np.int64)
        while True:
            level = self.first[level[self.node[level] < 0]]
            if not len(level):
                break
            self.depth += 1
            level = np.concatenate((level, level + 1))

    def __len__(self) -> int:
        return len(self.feat)


class _Bitmaps:
    """The bitmaps of a build, each distinct one stored once."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.at: dict[bytes, int] = {}

    def offset(self, bitmap: bytes) -> int:
        k = self.at.get(bitmap)
        if k is None:
            k = self.at[bitmap] = len(self.data)
            self.data += bitmap
        return k


def binary_tree(feature: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]], root: int,
                sizes: Sequence[int], cache: dict[Any, Any] | None = None) -> BinaryTree:
    """A tree's node arrays as a :class:`BinaryTree`.

    ``cache`` (a dict) may be shared by the trees of one ensemble: importers share mask objects between
    nodes, so each distinct mask is analysed once (keyed by ``id``; the cache holds the masks, so the
    ids stay theirs while it lives). A tree of two-branch nodes only (every importer's) is laid out with
    numpy; any other node shape goes through the general chains.
    """
    cache = {} if cache is None else cache
    return _binary_two_way(feature, branches, root, sizes, cache) or _binary_chains(feature, branches, root, sizes,
                                                                                    cache)


def _first_branch_tests(masks: Sequence[int], node_sizes: Sequence[int], cache: dict[Any, Any]) -> list[Any]:
    """For two-branch nodes (their first masks and domain sizes), each node's ``(test, swap)`` for its
    first branch (see :func:`_chain`), or ``None`` when that branch holds no value or every value."""
    out = []
    for mask, size in zip(masks, node_sizes):
        by_id = cache.get(size)
        if by_id is None:
            by_id = cache[size] = {}
        hit = by_id.get(id(mask))
        if hit is None:
            hit = by_id[id(mask)] = (mask, _first_branch_test(mask, size))  # the mask kept: its id stays its own
        out.append(hit[1])
    return out


def _first_branch_test(mask: int, size: int) -> Any:
    bits = mask.bit_length()
    take = mask if bits <= size else mask & ((1 << size) - 1)
    count = take.bit_count()
    if not count or count == size:
        return None
    if take & 1 and count == take.bit_length():  # a prefix (a threshold test): the usual case, checked first
        return (0, count, None), False
    test = _test_for(take, size)
    if test[2] is not None:  # not an interval: its complement may be one
        other = _test_for(((1 << size) - 1) ^ take, size)
        if other[2] is None:
            return other, True
    return test, False


def _binary_two_way(feature: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]], root: int,
                    sizes: Sequence[int], cache: dict[Any, Any]) -> BinaryTree | None:
    """The layout of a tree whose internal nodes all have two branches, each holding some value and
    not all: internal node of rank ``r`` (in node order) has its children at slots ``1 + 2 r`` and
    ``2 + 2 r``; ``None`` for any other tree."""
    feat = np.asarray(feature, dtype=np.int64)
    internal = np.flatnonzero(feat >= 0)
    br = [branches[k] for k in internal.tolist()]
    if any(len(b) != 2 for b in br):
        return None
    c0 = [b[0][1] for b in br]
    c1 = [b[1][1] for b in br]
    tests = _first_branch_tests([b[0][0] for b in br], [sizes[f] for f in feat[internal].tolist()], cache)
    if any(t is None for t in tests):
        return None
    n = len(feat)
    rank = np.full(n, -1, dtype=np.int64)
    rank[internal] = np.arange(len(internal))
    first_of = 1 + 2 * rank  # the slot of a test node's first child
    swap = np.fromiter((s for _, s in tests), dtype=bool, count=len(tests))
    slot = np.full(n, -1, dtype=np.int64)
    slot[root] = 0
    pair = first_of[internal]
    slot[np.asarray(c0, dtype=np.int64)] = pair + ~swap  # the first branch: inside, unless swapped
    slot[np.asarray(c1, dtype=np.int64)] = pair + swap
    n_slots = 1 + 2 * len(internal)
    placed = slot[slot >= 0]
    if len(placed) != n_slots or not (np.bincount(placed, minlength=n_slots) == 1).all():
        return None  # shared or missing nodes: leave it to the general build (and its tree's own checks)
    s_feat = np.zeros(n_slots, dtype=np.int64)
    s_lo = np.zeros(n_slots, dtype=np.int64)
    s_width = np.zeros(n_slots, dtype=np.uint64)
    s_bit = np.full(n_slots, -1, dtype=np.int64)
    s_node = np.full(n_slots, -1, dtype=np.int64)
    s_first = np.arange(n_slots, dtype=np.int64)
    s = slot[internal]
    s_feat[s] = feat[internal]
    s_first[s] = pair
    bitmaps = _Bitmaps()
    s_lo[s] = [t[0][0] for t in tests]
    s_width[s] = [t[0][1] for t in tests]
    s_bit[s] = [-1 if t[0][2] is None else bitmaps.offset(t[0][2]) for t in tests]
    leaves = np.flatnonzero((feat < 0) & (slot >= 0))
    s_node[slot[leaves]] = leaves
    return BinaryTree(s_feat, s_lo, s_width, s_first, s_bit, bytes(bitmaps.data), s_node)


def _binary_chains(feature: Sequence[int], branches: Sequence[Sequence[tuple[int, int]]], root: int,
                   sizes: Sequence[int], cache: dict[Any, Any]) -> BinaryTree:
    """The general layout: each node's chain of tests (:func:`_chain`), built depth first."""
    feat: list[int] = [0]
    lo: list[int] = [0]
    width: list[int] = [0]
    first: list[int] = [0]
    bit_at: list[int] = [-1]
    node: list[int] = [-1]
    bitmaps = _Bitmaps()
    stack: list[tuple[int, int, int]] = [(0, root, 0)]  # (slot, node id, tests of its chain done)
    while stack:
        k, nid, j = stack.pop()
        f = feature[nid]
        if f < 0:
            first[k], node[k] = k, nid
            continue
        br = branches[nid]
        key = (tuple(id(m) for m, _ in br), sizes[f])
        hit = cache.get(key)
        if hit is None:  # children as branch positions; ``br`` keeps the masks (and so their ids) alive
            hit = cache[key] = (br, _chain([(m, i) for i, (m, _) in enumerate(br)], sizes[f]))
        tests, default = hit[1]
        if j == len(tests):
            stack.append((k, br[default][1], 0))
            continue
        (t_lo, t_width, bitmap), swap, pos = tests[j]
        a = len(feat)
        feat += (0, 0)
        lo += (0, 0)
        width += (0, 0)
        first += (a, a + 1)
        bit_at += (-1, -1)
        node += (-1, -1)
        feat[k], lo[k], width[k], first[k] = f, t_lo, t_width, a
        if bitmap is not None:
            bit_at[k] = bitmaps.offset(bitmap)
        branch, onward = (a, a + 1) if swap else (a + 1, a)
        stack.append((branch, br[pos][1], 0))
        stack.append((onward, nid, j + 1))
    return BinaryTree(feat, lo, width, first, bit_at, bytes(bitmaps.data), node)
