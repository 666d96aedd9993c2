"""The margins the box search bounds: per predicted class ``c`` and rival ``d``, ``score_c - score_d`` per leaf.

Each leaf adds ``row[c] - row[d]`` to the margin (its scores minus the rival's). The differences of one
pair are scaled to integers by one common factor (the least common multiple of their denominators,
the base difference's included), so that sums compare exactly, and each leaf keeps the *rank* of its
value among the pair's distinct values (a tree all of whose remaining leaves have one rank is settled,
and the lowest rank is the lowest value). Trees whose leaves all have one value for the pair add it to
the base and leave no row. The values sit in an ``int64`` table when no sum of them can pass ``2**62``
in magnitude; otherwise in a ``float64`` table of the values times ``2**-shift`` (:attr:`Rival.shift`:
so that every sum stays below ``2**63``, however far past the float range the integers are), whose sums
prune only past a stated rounding margin (:attr:`Rival.slack`), the decisions being exact Python-integer
sums (:meth:`Rival.exact_total`). No Python integer of a pair is ever converted by ``float()``: only
:meth:`Rival.to_float` scales one down first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
import numpy as np

from kcxai._deadline import Deadline
from kcxai._errors import ProblemTooLargeError
from kcxai.engines._box_leaves import IntArray, NumberArray
from kcxai.engines._ensemble_cnf import EnsembleView

__all__ = ["Rival", "rivals_of", "MAX_SCALE_BITS"]

#: The largest common factor (in bits) that the leaf values of a pair of classes may need to become exact
#: integers; past it :func:`rivals_of` raises :class:`~kcxai.ProblemTooLargeError`.
MAX_SCALE_BITS = 1024

#: A leaf's class scores (one exact rational per class).
ScoreRow = tuple[Fraction, ...]


class Rival:
    """One rival ``d`` of the predicted class ``c``: the leaves of the trees that separate them.

    Attributes
    ----------
    leaf_rows : array of int
        Rows of the engine's :class:`~kcxai.engines._box_leaves.LeafTable`, grouped by tree.
    leaf_tree : array of int
        The tree of each row (ascending).
    leaf_rank : array of int
        The rank of each row's value among :attr:`values`.
    values : list of int
        The distinct scaled values, ascending.
    value_table : array of int64 or float64
        :attr:`values` as numpy numbers (floats times ``2**-shift`` when :attr:`slack` is not ``None``).
    base : int
        The scaled margin the trees without rows add, and the base scores' difference.
    threshold : int
        A counterexample has a margin of at most this (0 when ``d`` wins ties against ``c``, else -1).
    slack : float or None
        ``None`` for int64 sums; else the rounding margin of any float sum of :attr:`value_table`'s values
        and the base (in its units).
    shift : int
        The float table's values are the exact ones times ``2**-shift`` (0 for int64 sums).
    """

    __slots__ = ("leaf_rows", "leaf_tree", "leaf_rank", "value_table", "values", "base", "threshold", "slack",
                 "shift")

    def __init__(self, leaf_rows: IntArray, leaf_tree: IntArray, leaf_rank: IntArray, values: list[int], base: int,
                 threshold: int) -> None:
        self.leaf_rows = leaf_rows
        self.leaf_tree = leaf_tree
        self.leaf_rank = leaf_rank
        self.values = values
        self.base = base
        self.threshold = threshold
        n_trees = len(np.unique(leaf_tree))
        total = max((abs(v) for v in values), default=0) * n_trees + abs(base)  # bounds every partial sum
        self.value_table: NumberArray
        if total < 2 ** 62:
            self.shift = 0
            self.value_table = np.asarray(values, dtype=np.int64)
            self.slack: float | None = None
        else:  # float bounds, pruning only past their rounding error: a sum of n_trees + 2 rounded terms,
            # each within 2^-53 of its magnitude (at most ``total``), and rounded partial sums
            self.shift = max(0, total.bit_length() - 63)
            self.value_table = np.asarray([self.to_float(v) for v in values], dtype=np.float64)
            self.slack = math.ldexp(self.to_float(total), -52) * (2 * n_trees + 4) + 1.0

    def to_float(self, x: int) -> float:
        """The exact integer ``x`` in the units of :attr:`value_table` (times ``2**-shift``), correctly rounded;
        for ``|x|`` up to the largest sum of the pair it stays below ``2**63``."""
        return x / (1 << self.shift) if self.shift else float(x)

    def float_limit(self, base: int) -> float:
        """The largest float sum of :attr:`value_table`'s values (a guide: a descent or a sweep) that may still
        leave ``base`` plus the exact sum at most :attr:`threshold`: half a unit above the exact limit, plus
        :attr:`slack`. A guide, not a proof (int64 sums near 2**62 round by more than that); every point it
        lets through is checked exactly."""
        return self.to_float(self.threshold - base) + (self.slack or 0.0) + 0.5

    def exact_total(self, ranks: IntArray) -> int:
        """The exact sum of the values of ``ranks``."""
        if self.slack is None:
            return int(self.value_table[ranks].sum())
        return sum(self.values[k] for k in ranks.tolist())


def rivals_of(view: EnsembleView, leaf_tree: IntArray, deadline: Deadline | None = None,
              model_name: str = "model") -> dict[int, list[Rival]]:
    """Per class ``c``, its rivals ``d != c`` in increasing order (the deadline checked once per tree and pair).

    Raises :class:`~kcxai.ProblemTooLargeError` (naming ``model_name``) when a pair's leaf values need a
    common factor of more than :data:`MAX_SCALE_BITS` bits to become integers."""
    distinct, row_ids = _distinct_rows(view, deadline)
    k = len(view.base)
    return {c: [_rival(view, c, d, distinct, row_ids, leaf_tree, deadline, model_name) for d in range(k) if d != c]
            for c in range(k)}


def _distinct_rows(view: EnsembleView, deadline: Deadline | None) -> tuple[list[ScoreRow], list[IntArray]]:
    """The distinct score rows (by identity: a hard-voting forest shares one row per class), and per tree the
    index of each leaf's row."""
    index: dict[int, int] = {}
    distinct: list[ScoreRow] = []
    per_tree = []
    for rows in view.rows:  # look at the clock once per tree
        if deadline is not None:
            deadline.check()
        ids = []
        for row in rows.values():
            k = index.get(id(row))
            if k is None:
                k = index[id(row)] = len(distinct)
                distinct.append(row)
            ids.append(k)
        per_tree.append(np.asarray(ids, dtype=np.int64))
    return distinct, per_tree


def _rival(view: EnsembleView, c: int, d: int, distinct: Sequence[ScoreRow], row_ids: Sequence[IntArray],
           leaf_tree: IntArray, deadline: Deadline | None, model_name: str = "model") -> Rival:
    """The margin ``score_c - score_d`` per leaf, scaled to integers, as ranks among its distinct values."""
    diffs = [row[c] - row[d] for row in distinct]
    base = view.base[c] - view.base[d]
    scale = 1
    for x in (*set(diffs), base):
        scale = scale * x.denominator // math.gcd(scale, x.denominator)
        if scale.bit_length() > MAX_SCALE_BITS:
            raise ProblemTooLargeError(
                f"The search engine cannot make this {model_name}'s leaf values exact integers within "
                f"MAX_SCALE_BITS={MAX_SCALE_BITS} bits: the least common multiple of the denominators of classes "
                f"{c} and {d}'s score differences has more than {MAX_SCALE_BITS} bits. Read the forest with "
                "voting='hard', or round its leaf scores with model.rounded(step) (a different classifier whose "
                "predictions can differ only where the two best summed scores are within its stated margin).")
    ints = [int(x * scale) for x in diffs]
    uniq = sorted(set(ints))
    rank_of = {v: r for r, v in enumerate(uniq)}
    rank_of_row = np.asarray([rank_of[v] for v in ints], dtype=np.int64)
    base_int = int(base * scale)
    keep_rows, keep_ranks = [], []
    at = 0
    for ids in row_ids:
        if deadline is not None:
            deadline.check()
        ranks = rank_of_row[ids]
        if len(ranks) and (ranks != ranks[0]).any():
            keep_rows.append(np.arange(at, at + len(ids), dtype=np.int64))
            keep_ranks.append(ranks)
        elif len(ranks):  # constant for this pair
            base_int += uniq[int(ranks[0])]
        at += len(ids)
    rows = np.concatenate(keep_rows) if keep_rows else np.zeros(0, dtype=np.int64)
    rank = np.concatenate(keep_ranks) if keep_ranks else np.zeros(0, dtype=np.int64)
    # ranks over the values that occur in non-constant trees only
    used = np.unique(rank)
    renumber = np.zeros(len(uniq), dtype=np.int64)
    renumber[used] = np.arange(len(used))
    return Rival(rows, leaf_tree[rows], renumber[rank], [uniq[int(k)] for k in used], base_int,
                 0 if view.prefers(d, c) else -1)
