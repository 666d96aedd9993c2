"""The last levels of a threshold test decided from value vectors, exactly.

Below a *cut* level ``L`` the features left span few points (``P_L``, the product of their numbers of
values, at most :data:`BOTTOM_POINTS`). There the construction stops branching state by state: the
remaining trees ``R`` of a state add a value vector ``g_R`` over those ``P_L`` points (each tree's
residual evaluated on every point, summed with numpy), and the state ``(R, s)`` is the truth table
``g_R + s >= 0``. Its node is made from the truth table, level by level, through a memo of truth tables
and the diagram's unique table, so it is the node the state-by-state construction would make.

Three things follow from the vector, all exact:

* the least and greatest values ``min g_R`` and ``max g_R`` replace the sums of the trees' least and
  greatest leaves (which no point may reach), so more states above are decided by the interval test;
* the partial sums giving the same node are exactly those between two consecutive values of ``g_R``:
  ``[-min{g >= -s}, -max{g < -s})``, the widest interval any state-by-state construction can cache;
* residual tuples whose states differ only in the partial sum share that computation.

Values are the scaled integer leaf differences, unbounded Python integers (scikit-learn's float64 leaves
scale to integers of about 120 bits). Vectors are ``int64``: each value is shifted right by ``k`` bits,
the least ``k`` that keeps every sum within 62 bits (``k = 0``, exact, for most models), and a sum
``G`` of ``m`` shifted values brackets the exact one, ``G * 2**k <= g <= (G + m) * 2**k - 1``. A point is
decided from the bracket; the few whose bracket straddles the threshold are summed exactly. The cached
intervals and ranges use the brackets' ends, so they are sound, and exact when ``k = 0``.

References
----------
Chan, H. and Darwiche, A. (2003). Reasoning about Bayesian network classifiers. UAI 2003 (the intervals of
partial sums giving one node).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
import numpy as np

from kcxai.compilers._ensemble.diagram import FALSE, TRUE, EnsembleDiagram
from kcxai.compilers._ensemble.sources import Residuals, Sources

__all__ = ["Bottom", "BOTTOM_POINTS", "cut_level"]

#: The cut is the highest level below which the features span at most this many points. Measured on adult
#: (14 features, at most 10 bins; see docs/results.md, "Bounded diagrams").
BOTTOM_POINTS = 512

_INF = float("inf")


def cut_level(sizes: Sequence[int], points: int = BOTTOM_POINTS) -> int:
    """The highest level ``L`` with ``prod(sizes[L:]) <= points`` (``len(sizes)`` if none).

    >>> cut_level([10, 6, 2, 5, 2], 100)
    2
    """
    level, span = len(sizes), 1
    while level and span * sizes[level - 1] <= points:
        level -= 1
        span *= sizes[level]
    return level


class Bottom:
    """Value vectors of a sealed :class:`~kcxai.compilers._ensemble.sources.Sources` below the cut level, and
    the nodes of truth tables over those levels.

    Every vector spans the points of all the levels from the cut on (a residual deeper down repeats its
    values along the levels above it), so the vector of a residual tuple is one gather and one sum. The
    vectors of the tuples used last are kept (at most ``keep`` bytes): a tuple is usually met again with
    other partial sums soon after.

    Parameters
    ----------
    src : Sources
        Sealed.
    out : EnsembleDiagram
    cut : int
        The first level decided from vectors.
    bound : int
        A bound on the absolute value of ``s + g_R`` for every state.
    keep : int
        Bytes of recent vectors kept.
    """

    def __init__(self, src: Sources, out: EnsembleDiagram, cut: int, bound: int, keep: int = 64 << 20) -> None:
        self.src, self.out, self.cut, self.bound = src, out, cut, bound
        n = src.n_levels
        self.span = [1] * (n + 1)  # span[l]: points spanned by the levels l .. n-1
        for lv in range(n - 1, -1, -1):
            self.span[lv] = self.span[lv + 1] * src.sizes[lv]
        self.first = src.start[cut]
        #: the right shift of every value (0: vectors are exact)
        self.shift = max(0, bound.bit_length() + (len(src.level) + 2).bit_length() - 61)
        #: the vectors of the nodes at or below the cut (numbered from ``first``), over the cut's span
        self.vectors = self._build_vectors()
        self._recent: OrderedDict[Residuals, np.ndarray] = OrderedDict()
        self._room = max(1, keep // max(1, 8 * self.span[cut]))
        self._tables: list[dict[bytes, int]] = [{} for _ in range(n + 1)]
        for lv in range(cut, n + 1):  # the constant tables
            width = self.span[lv]
            self._tables[lv][np.packbits(np.ones(width, dtype=bool)).tobytes()] = TRUE
            self._tables[lv][np.packbits(np.zeros(width, dtype=bool)).tobytes()] = FALSE

    def _build_vectors(self) -> np.ndarray:
        src, n, cut, k = self.src, self.src.n_levels, self.cut, self.shift
        own: dict[int, np.ndarray] = {u: np.asarray([src.lo[u] >> k], dtype=np.int64)
                                      for u in range(src.start[n], len(src.level))}
        for lv in range(n - 1, cut - 1, -1):  # each node over its own levels, from its children's
            sub = self.span[lv + 1]
            for u in range(src.start[lv], src.start[lv + 1]):
                vec = np.empty(self.span[lv], dtype=np.int64)
                for j, c in enumerate(src.vchild[u]):  # a child deeper down repeats along the levels between
                    vec[j * sub:(j + 1) * sub] = np.tile(own[c], sub // len(own[c]))
                own[u] = vec
        full = np.empty((src.start[n] - self.first, self.span[cut]), dtype=np.int64)
        for u in range(self.first, src.start[n]):
            full[u - self.first] = np.tile(own[u], self.span[cut] // len(own[u]))
        return full

    def vector(self, rs: Residuals) -> np.ndarray:
        """The shifted sum ``G`` of ``R``'s vectors over the points of the levels from the cut on."""
        got = self._recent.get(rs)
        if got is not None:
            self._recent.move_to_end(rs)
            return got
        first = self.first
        g = self.vectors[[r - first for r in rs]].sum(axis=0)
        self._recent[rs] = g
        if len(self._recent) > self._room:
            self._recent.popitem(last=False)
        return g

    def extremes(self, g: np.ndarray, terms: int) -> tuple[int, int]:
        """A lower bound on ``min g_R`` and an upper bound on ``max g_R`` (both exact when ``shift == 0``), from
        the shifted sum ``g`` of ``terms`` vectors."""
        k = self.shift
        if not k:
            return int(g.min()), int(g.max())
        return int(g.min()) << k, ((int(g.max()) + terms) << k) - 1

    def node(self, rs: Residuals, g: np.ndarray, s: int) -> tuple[int, float, float]:
        """The node of ``g_R + s >= 0`` and an interval ``[a, b)`` of partial sums giving it, containing ``s``
        (the widest when ``shift == 0``; ``g`` is :meth:`vector`)."""
        k = self.shift
        if not k:
            table = g >= -s
            false = ~table
            a = -int(g[table].min()) if table.any() else -_INF
            b = -int(g[false].max()) if false.any() else _INF
            return self.table_node(self.cut, table), a, b
        m = len(rs)
        low = g >= -(s >> k)               # G * 2**k + s >= 0: surely true
        high = g + m <= (-s) >> k          # (G + m) * 2**k - 1 + s < 0: surely false
        table = low.copy()
        lows, highs = [], []
        if low.any():
            lows.append(int(g[low].min()) << k)
        if high.any():
            highs.append(((int(g[high].max()) + m) << k) - 1)
        for y in np.flatnonzero(~(low | high)):  # the bracket straddles the threshold: the exact sum
            exact = sum(self._value(r, int(y)) for r in rs)
            table[y] = exact + s >= 0
            (lows if table[y] else highs).append(exact)
        return self.table_node(self.cut, table), -min(lows) if lows else -_INF, -max(highs) if highs else _INF

    def _value(self, r: int, y: int) -> int:
        """The exact value of residual ``r`` at point number ``y`` of the cut's span."""
        src = self.src
        n = src.n_levels
        while src.level[r] < n:
            lv = src.level[r]
            r = src.vchild[r][y // self.span[lv + 1] % src.sizes[lv]]
        return src.lo[r]

    def table_node(self, level: int, table: np.ndarray) -> int:
        """The node of a truth table over the points of the levels ``level ..`` (row-major, level first)."""
        memo = self._tables[level]
        key = np.packbits(table).tobytes()
        got = memo.get(key)
        if got is None:
            rows = table.reshape(self.src.sizes[level], -1)
            by: dict[int, int] = {}
            for j in range(rows.shape[0]):
                c = self.table_node(level + 1, rows[j])
                by[c] = by.get(c, 0) | 1 << j
            got = memo[key] = self.out.make(level, by)
        return got

    def memory(self) -> int:
        """Bytes held by the vectors (the truth-table memo not counted)."""
        return int(self.vectors.nbytes + sum(v.nbytes for v in self._recent.values()))
