"""CNF for ``sum of bounded non-negative integers >= bound``, guarded by a selector literal.

Each summand is a block (a tree of an ensemble) that takes exactly one of a
few non-negative integer values, each value given by a literal that holds iff
the block takes it (mutually exclusive, exactly one true; value 0 needs no
literal). Two encodings, chosen by the size of the numbers:

* **unary** (small totals, e.g. votes): the block's value ``u`` is the count of
  true literals ``[u >= 1], [u >= 2], ...``, and a cardinality constraint
  (pysat's totalizer) asks for at least ``bound`` of them.
* **binary** (big totals: float leaf values scaled to integers, 30 to 60 bits):
  each block's value as bits (``bit_j = OR`` of the value literals whose value
  has bit ``j``), the bits summed column by column with full and half adders
  (Tseitin, both directions), and the result compared with the constant bound
  by a chain from the lowest bit. The size is about ``blocks x bits`` adders,
  independent of how many leaves there are. pysat's ``PBEnc`` with
  ``EncType.adder`` over every leaf literal would need one adder input per set
  bit of every leaf's weight (hundreds of thousands on a 100-tree model).

Either encoding is only enforced when the selector ``g`` is true:
``g -> sum >= bound``. Literals are ints (DIMACS); the constants ``True`` and
``False`` may appear as bits and are simplified away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Union

from pysat.card import CardEnc, EncType
from pysat.formula import IDPool

__all__ = ["Bit", "guarded_sum_geq", "UNARY_LIMIT"]

#: A literal (non-zero int) or a constant.
Bit = Union[int, bool]

#: Up to this total of the blocks' maxima the unary encoding is used.
UNARY_LIMIT = 256


class _Gates:
    """Tseitin gates over literals and constants, written to ``add``."""

    def __init__(self, pool: IDPool, add: Callable[[list[int]], None]) -> None:
        self.pool = pool
        self.add = add

    def new(self) -> int:
        return int(self.pool.id())

    def xor(self, a: Bit, b: Bit) -> Bit:
        if isinstance(a, bool):
            return (not b if isinstance(b, bool) else -b) if a else b
        if isinstance(b, bool):
            return -a if b else a
        s = self.new()
        self.add([-s, a, b])
        self.add([-s, -a, -b])
        self.add([s, -a, b])
        self.add([s, a, -b])
        return s

    def and_(self, a: Bit, b: Bit) -> Bit:
        if isinstance(a, bool):
            return b if a else False
        if isinstance(b, bool):
            return a if b else False
        c = self.new()
        self.add([-c, a])
        self.add([-c, b])
        self.add([c, -a, -b])
        return c

    def maj(self, a: Bit, b: Bit, c: Bit) -> Bit:
        if isinstance(a, bool):
            return self.or_(b, c) if a else self.and_(b, c)
        if isinstance(b, bool):
            return self.maj(b, a, c)
        if isinstance(c, bool):
            return self.maj(c, a, b)
        m = self.new()
        self.add([-m, a, b])
        self.add([-m, a, c])
        self.add([-m, b, c])
        self.add([m, -a, -b])
        self.add([m, -a, -c])
        self.add([m, -b, -c])
        return m

    def or_(self, a: Bit, b: Bit) -> Bit:
        if isinstance(a, bool):
            return True if a else b
        if isinstance(b, bool):
            return True if b else a
        o = self.new()
        self.add([o, -a])
        self.add([o, -b])
        self.add([-o, a, b])
        return o

    def or_many(self, lits: Sequence[int]) -> Bit:
        if not lits:
            return False
        if len(lits) == 1:
            return lits[0]
        o = self.new()
        for x in lits:
            self.add([o, -x])
        self.add([-o, *lits])
        return o


def _add_columns(g: _Gates, columns: list[list[Bit]]) -> list[Bit]:
    """Sum the bits of every column (column ``j`` weighs ``2^j``): one bit per column."""
    j = 0
    while j < len(columns):
        col = [b for b in columns[j] if b is not False]
        ones = sum(1 for b in col if b is True)
        col = [b for b in col if b is not True]
        if ones:  # constant ones: carry pairs up, keep the odd one
            if ones >= 2:
                if j + 1 == len(columns):
                    columns.append([])
                columns[j + 1].extend([True] * (ones // 2))
            if ones % 2:
                col.append(True)
        k = 0
        while len(col) - k >= 2:
            if len(col) - k >= 3:
                a, b, c = col[k], col[k + 1], col[k + 2]
                k += 3
                s, carry = g.xor(g.xor(a, b), c), g.maj(a, b, c)
            else:
                a, b = col[k], col[k + 1]
                k += 2
                s, carry = g.xor(a, b), g.and_(a, b)
            col.append(s)
            if carry is not False:
                if j + 1 == len(columns):
                    columns.append([])
                columns[j + 1].append(carry)
        rest = col[k:]
        columns[j] = rest
        j += 1
    return [c[0] if c else False for c in columns]


def _geq_constant(g: _Gates, bits: Sequence[Bit], bound: int, guard: int) -> None:
    """``guard -> value(bits) >= bound`` (bits LSB first), by a chain from the lowest bit."""
    if bound <= 0:
        return
    if bound >> len(bits):
        g.add([-guard])
        return
    ge: Bit = True  # value of the bits below j >= bound's bits below j
    for j, b in enumerate(bits):
        if bound >> j & 1:
            ge = _implied_and(g, b, ge)
        else:
            ge = _implied_or(g, b, ge)
    if ge is False:
        g.add([-guard])
    elif ge is not True:
        g.add([-guard, ge])


def _implied_and(g: _Gates, a: Bit, b: Bit) -> Bit:
    """A literal that implies ``a and b`` (one direction suffices under a guard)."""
    if isinstance(a, bool):
        return b if a else False
    if isinstance(b, bool):
        return a if b else False
    x = g.new()
    g.add([-x, a])
    g.add([-x, b])
    return x


def _implied_or(g: _Gates, a: Bit, b: Bit) -> Bit:
    """A literal that implies ``a or b``."""
    if isinstance(a, bool):
        return True if a else b
    if isinstance(b, bool):
        return True if b else a
    x = g.new()
    g.add([-x, a, b])
    return x


def guarded_sum_geq(blocks: Sequence[Sequence[tuple[int, int]]], bound: int, guard: int, pool: IDPool,
                    add: Callable[[list[int]], None]) -> str:
    """Clauses for ``guard -> sum_b value_b >= bound``; returns the encoding used (``"unary"``/``"binary"``).

    ``blocks[b]`` lists ``(value, literal)`` for the block's non-zero values:
    exactly one literal is true, or none when the block is 0. Values are positive ints.
    """
    top = sum(max((v for v, _ in blk), default=0) for blk in blocks)
    if bound <= 0:
        return "none"
    if bound > top:
        add([-guard])
        return "none"
    g = _Gates(pool, add)
    if top <= UNARY_LIMIT:
        lits: list[int] = []
        for blk in blocks:
            m = max((v for v, _ in blk), default=0)
            for j in range(1, m + 1):  # [u >= j]
                lits.append(int(g.or_many([lit for v, lit in blk if v >= j])))  # a literal: some value is >= j
        cnf = CardEnc.atleast(lits=lits, bound=bound, vpool=pool, encoding=EncType.totalizer)
        for cl in cnf.clauses:
            add([-guard, *cl])
        return "unary"
    columns: list[list[Bit]] = [[] for _ in range(top.bit_length())]
    for blk in blocks:
        m = max((v for v, _ in blk), default=0)
        for j in range(m.bit_length()):
            columns[j].append(g.or_many([lit for v, lit in blk if v >> j & 1]))
    bits = _add_columns(g, columns)
    _geq_constant(g, bits, bound, guard)
    return "binary"
