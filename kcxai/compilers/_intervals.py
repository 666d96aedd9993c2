"""The interval cache of Chan and Darwiche's threshold construction: nodes by intervals of partial sums.

A threshold test ``s0 + sum_b v_b(x) >= 0`` is compiled block by block; what is left after some blocks
(the *key*: the next block's position, or the tuple of trees still undecided) is a function of the
partial sum ``s`` that is monotone in ``s``, so the partial sums giving one node form an interval: the
intersection of the children's intervals, each shifted back by what its branch added. A key keeps its
intervals disjoint and sorted (:class:`Intervals`), so two partial sums that no completion can tell apart
share one node; :class:`IntervalCache` keeps the intervals of every key.

A construction looks a sum up (:meth:`Intervals.locate`, then :meth:`Intervals.at`), builds the node
from its children when no interval holds it, and stores the node with the intersection of the children's
intervals (:meth:`Intervals.insert` at the position located, clipped to stay disjoint): the children only
touch other keys' intervals, so the position still holds. :meth:`Intervals.find` and
:meth:`Intervals.store` do the same in one call each.

Examples
--------
>>> cache = IntervalCache()
>>> cache.find("b1", 5) is None
True
>>> cache.store("b1", 5, 3, 7, "node A")   # partial sums 3 .. 6 give node A
>>> cache.find("b1", 6), cache.find("b1", 7)
(('node A', 3, 7), None)
>>> cache.store("b1", 8, 0, 10, "node B")  # clipped to [7, 10): the intervals stay disjoint
>>> list(cache.of("b1"))
[(3, 7, 'node A'), (7, 10, 'node B')]

References
----------
H. Chan and A. Darwiche. Reasoning about Bayesian Network Classifiers. UAI 2003.
A. Shih, A. Choi and A. Darwiche. A Symbolic Approach to Explaining Bayesian Network Classifiers. IJCAI 2018.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterator
from fractions import Fraction
from typing import Generic, TypeVar, Union

__all__ = ["Sum", "Intervals", "IntervalCache"]

#: A partial sum or an interval's end: an exact number, or a float infinity.
Sum = Union[int, Fraction, float]

K = TypeVar("K", bound=Hashable)
N = TypeVar("N")


class Intervals(Generic[N]):
    """One key's disjoint half-open intervals ``[lo, hi)`` of partial sums, sorted, each with its node."""

    __slots__ = ("los", "his", "nodes")

    def __init__(self) -> None:
        self.los: list[Sum] = []
        self.his: list[Sum] = []
        self.nodes: list[N] = []

    def locate(self, s: Sum) -> int:
        """The number of intervals that start at or below ``s``: the one that may hold it is the one before."""
        return bisect_right(self.los, s)

    def at(self, k: int, s: Sum) -> tuple[N, Sum, Sum] | None:
        """At the position ``k = locate(s)``: the node whose interval holds ``s``, with the interval's ends
        (``None``: no interval holds it)."""
        if k and s < self.his[k - 1]:
            return self.nodes[k - 1], self.los[k - 1], self.his[k - 1]
        return None

    def insert(self, k: int, lo: Sum, hi: Sum, node: N) -> None:
        """Keep ``node`` for ``[lo, hi)`` at the position ``k`` a missed sum was located at (no interval
        stored since), clipped to stay disjoint from its neighbours."""
        if k and self.his[k - 1] > lo:
            lo = self.his[k - 1]
        if k < len(self.los) and self.los[k] < hi:
            hi = self.los[k]
        self.los.insert(k, lo)
        self.his.insert(k, hi)
        self.nodes.insert(k, node)

    def find(self, s: Sum) -> tuple[N, Sum, Sum] | None:
        """The node whose interval holds ``s``, with that interval's ends; ``None`` when no interval does."""
        return self.at(self.locate(s), s)

    def store(self, s: Sum, lo: Sum, hi: Sum, node: N) -> None:
        """Keep ``node`` for ``[lo, hi)``, which holds ``s`` (a sum no interval held), clipped to stay disjoint."""
        self.insert(self.locate(s), lo, hi, node)

    def __len__(self) -> int:
        return len(self.los)

    def __iter__(self) -> Iterator[tuple[Sum, Sum, N]]:
        """The intervals, ``(lo, hi, node)`` in increasing order."""
        return iter(zip(self.los, self.his, self.nodes))


class IntervalCache(Generic[K, N]):
    """Per key, its :class:`Intervals` (see the module docstring)."""

    __slots__ = ("_by_key",)

    def __init__(self) -> None:
        self._by_key: dict[K, Intervals[N]] = {}

    def of(self, key: K) -> Intervals[N]:
        """The intervals of ``key`` (made empty on first use)."""
        got = self._by_key.get(key)
        if got is None:
            got = self._by_key[key] = Intervals()
        return got

    def find(self, key: K, s: Sum) -> tuple[N, Sum, Sum] | None:
        """The node of ``key`` whose interval holds ``s``, with the interval's ends (``None``: none)."""
        got = self._by_key.get(key)
        return None if got is None else got.find(s)

    def store(self, key: K, s: Sum, lo: Sum, hi: Sum, node: N) -> None:
        """Keep ``node`` for the partial sums ``[lo, hi)`` of ``key`` (which hold ``s``), clipped to stay
        disjoint from the key's other intervals."""
        self.of(key).store(s, lo, hi, node)

    def __len__(self) -> int:
        """The number of intervals kept, over all the keys."""
        return sum(len(v) for v in self._by_key.values())
