"""A tree ensemble as CNF in an incremental SAT solver: "some point with ``x_S = v_S`` gets another class".

Variables and clauses (pysat; solver MiniSat-GH by default, see :class:`EnsembleCnf`):

* **Features**, order encoding: ``y[i][k]`` means ``x_i <= k`` (value numbers
  ``0 .. d-1``), with ``y[i][k] -> y[i][k+1]``. A value is two literals, so
  fixing a feature to ``v`` is at most two *assumptions*, and a threshold test
  (a prefix or suffix of a numeric feature's intervals) is one literal.
* **Trees**: a literal per node "the point reaches this node", implying its
  parent and the value set on its incoming edge (one run of consecutive values
  is at most two binary clauses); at least one reachable leaf per tree. As the
  leaves partition feature space, exactly one leaf per tree is true in every
  model, and when all features are fixed unit propagation finds it.
* **Class change**: for the predicted class ``c`` and each rival ``d``, a
  selector ``g_cd -> score_d - score_c >= 0`` (``> 0`` when ``c`` wins ties
  against ``d``), over the trees' leaf scores scaled to integers
  (:func:`~kcxai.explain._sums.guarded_sum_geq`: a totalizer for votes, adders
  for float leaf values); ``t_c -> OR_d g_cd``. Built the first time class
  ``c`` is asked for, and kept.

A query assumes ``t_c`` and the literals of the fixed features; it is
satisfiable iff some point consistent with them is classified otherwise. The
encoding holds no instance: one solver serves every instance of a model.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

from pysat.formula import IDPool  # type: ignore[import-untyped]
from pysat.solvers import Solver  # type: ignore[import-untyped]

from kcxai._deadline import Deadline
from kcxai._errors import InvalidTypeError
from kcxai.explain._sums import guarded_sum_geq

__all__ = ["EnsembleCnf", "ensemble_view"]


class _View:
    """What the encoding reads from a tree ensemble: trees, per-leaf class scores, base scores, tie order."""

    __slots__ = ("trees", "rows", "base", "ties_last")

    def __init__(self, trees: Sequence[Any], rows: Sequence[dict[int, tuple[Fraction, ...]]],
                 base: Sequence[Fraction], ties_last: bool) -> None:
        self.trees = trees
        self.rows = rows
        self.base = base
        self.ties_last = ties_last

    def prefers(self, d: int, c: int) -> bool:
        """Whether ``d`` wins a tie against ``c``."""
        return d > c if self.ties_last else d < c


def ensemble_view(model: Any) -> _View:
    """The scores of a :class:`~kcxai.models.RandomForest` or :class:`~kcxai.models.BoostedTrees`."""
    from kcxai.models.boosted import BoostedTrees
    from kcxai.models.forest import RandomForest

    if isinstance(model, RandomForest):
        k = len(model.classes)
        return _View(model.trees, [model.leaf_scores(t) for t in range(model.n_trees)], [Fraction(0)] * k, False)
    if isinstance(model, BoostedTrees):
        return _View(model.trees, [model.leaf_scores(t) for t in range(model.n_trees)], model.base_scores,
                     model.ties == "last")
    raise InvalidTypeError(
        f"'model' must be a RandomForest or BoostedTrees (a tree ensemble). Got {type(model).__name__} instead.")


def _runs(mask: int) -> list[tuple[int, int]]:
    """The maximal runs ``(first, last)`` of consecutive set bits of ``mask``."""
    out = []
    pos = 0
    while mask:
        low = (mask & -mask).bit_length() - 1
        mask >>= low
        pos += low
        length = (mask ^ (mask + 1)).bit_length() - 1  # trailing ones
        out.append((pos, pos + length - 1))
        mask >>= length
        pos += length
    return out


class EnsembleCnf:
    """The CNF of a tree ensemble in one incremental solver (see the module docstring).

    Parameters
    ----------
    model : RandomForest or BoostedTrees
    solver : str, default "mgh"
        A pysat solver name that supports assumptions and cores (and interrupts, for a time limit:
        the MiniSat-like solvers "g3", "g4", "m22", "mgh"). MiniSat-GH by default: on a 100-tree
        adult forest (depth 8) it stopped 2-4 ms after an interrupt where Glucose 4 took 0.1-0.3 s and
        Glucose 3 up to 2 s (these only look at the flag between decisions), and its median AXp
        (hard voting, 8 instances) took 6.6 s against 20 s with Glucose 4 (8.8 s with MiniSat 2.2).
    deadline : Deadline, optional
        The time limit of the construction (checked once per tree and per clause batch).
    """

    language = "sat"

    def __init__(self, model: Any, *, solver: str = "mgh", deadline: Deadline | None = None) -> None:
        self.model = model
        self._deadline = deadline
        self.view = ensemble_view(model)
        self.space = model.space
        self.pool = IDPool()
        self.solver = Solver(name=solver)
        try:
            self._encode()
        except BaseException:  # stopped by the deadline: free the solver
            self.solver.delete()
            raise

    def _encode(self) -> None:
        self.clauses = 0
        self._buffer: list[list[int]] = []
        self.sizes = [f.size for f in self.space.features]
        # y[i][k] <=> x_i <= k, k = 0 .. d-2
        self.y: list[list[int]] = []
        for d in self.sizes:
            ys = [self._new() for _ in range(d - 1)]
            for a, b in zip(ys, ys[1:]):
                self._add([-a, b])
            self.y.append(ys)
        self._run_lits: dict[tuple[int, int, int], int] = {}
        self.leaves: list[dict[int, int]] = []
        for t in self.view.trees:
            self._check()
            self.leaves.append(self._encode_tree(t))
        self._targets: dict[int, int] = {}
        self.encodings: dict[int, list[str]] = {}
        self._flush()
        self._deadline = None

    def _check(self) -> None:
        if self._deadline is not None:
            self._deadline.check()

    def _ticks(self, items: Iterable[Any]) -> Iterable[Any]:
        """``items``, looking at the clock before each."""
        for x in items:
            self._check()
            yield x

    # -- building -------------------------------------------------------------

    def _new(self) -> int:
        return int(self.pool.id())

    def _add(self, clause: list[int]) -> None:
        buf = self._buffer
        buf.append(clause)
        if not len(buf) & 4095:  # the adders of one rival are one call: look at the clock every 4096 clauses
            if len(buf) >= 20_000:  # appending 20,000 clauses to the solver takes about 30 ms
                self._flush()
            else:
                self._check()

    def _flush(self) -> None:
        self._check()
        self.solver.append_formula(self._buffer)
        self.clauses += len(self._buffer)
        self._buffer = []

    def _range_lits(self, i: int, a: int, b: int) -> list[int]:
        """The literals whose conjunction says ``a <= x_i <= b``."""
        out = []
        if a > 0:
            out.append(-self.y[i][a - 1])
        if b < self.sizes[i] - 1:
            out.append(self.y[i][b])
        return out

    def _in(self, lit: int, i: int, mask: int) -> None:
        """``lit -> x_i in mask``."""
        full = (1 << self.sizes[i]) - 1
        mask &= full
        if mask == full:
            return
        if not mask:
            self._add([-lit])
            return
        runs = _runs(mask)
        if len(runs) == 1:
            for x in self._range_lits(i, *runs[0]):
                self._add([-lit, x])
            return
        alts = []
        for a, b in runs:
            key = (i, a, b)
            r = self._run_lits.get(key)
            if r is None:
                r = self._run_lits[key] = self._new()
                for x in self._range_lits(i, a, b):
                    self._add([-r, x])
            alts.append(r)
        self._add([-lit, *alts])

    def _encode_tree(self, tree: Any) -> dict[int, int]:
        """Node literals; returns ``{leaf node id: literal}`` for the reachable leaves (constant trees: {})."""
        a = tree.arrays
        reachable = set(tree.leaves)
        if a.feature[a.root] < 0:
            return {}
        lit_of: dict[int, int] = {}
        leaves: dict[int, int] = {}
        stack = [a.root]
        while stack:
            nid = stack.pop()
            f = a.feature[nid]
            parent = lit_of.get(nid)
            for mask, child in a.branches[nid]:
                lit = self._new()
                lit_of[child] = lit
                if parent is not None:
                    self._add([-lit, parent])
                self._in(lit, f, mask)
                if a.feature[child] >= 0:
                    stack.append(child)
                elif child in reachable:
                    leaves[child] = lit
                else:
                    self._add([-lit])
        self._add(list(leaves.values()))
        return leaves

    def target(self, c: int, deadline: Deadline | None = None) -> int:
        """The literal ``t_c``: "a rival beats class ``c``" (built on first use, under ``deadline``)."""
        t = self._targets.get(c)
        if t is not None:
            return t
        self._deadline = deadline
        try:
            return self._build_target(c)
        finally:  # a build stopped by the deadline leaves clauses over fresh variables only: harmless
            self._deadline = None

    def _build_target(self, c: int) -> int:
        view = self.view
        k = len(view.base)
        rivals = []
        kinds = []
        for d in range(k):
            if d == c:
                continue
            g = self._new()
            kinds.append(self._rival(c, d, g))
            rivals.append(g)
        t = self._new()
        self._add([-t, *rivals])
        self._deadline = None  # past the last check: ``t`` is registered only once all its clauses are in
        self._flush()
        self._targets[c] = t
        self.encodings[c] = kinds
        return t

    def _rival(self, c: int, d: int, g: int) -> str:
        """``g -> score_d - score_c >= 0`` (``> 0`` unless ``d`` wins ties), scaled to integers."""
        view = self.view
        tick = self._ticks
        diffs = [{leaf: row[d] - row[c] for leaf, row in rows.items()} for rows in tick(view.rows)]
        base = view.base[d] - view.base[c]
        scale = 1
        for t in tick(diffs):  # exact fractions over every leaf: 0.1-0.3 s on 100 trees, so per tree
            for x in t.values():
                scale = scale * x.denominator // math.gcd(scale, x.denominator)
        scale = scale * base.denominator // math.gcd(scale, base.denominator)
        ints = [{leaf: int(v * scale) for leaf, v in t.items()} for t in tick(diffs)]
        b0 = int(base * scale)
        common = 0
        for t in tick(ints):
            lo = min(t.values(), default=0)
            for v in set(t.values()):
                common = math.gcd(common, v - lo)
        bound_strict = 0 if view.prefers(d, c) else 1
        blocks: list[list[tuple[int, int]]] = []
        shift = b0
        for t, lits in zip(ints, self.leaves):
            self._check()
            if not t:
                continue
            lo = min(t.values())
            shift += lo
            groups: dict[int, list[int]] = {}
            for leaf, v in t.items():
                if v != lo:
                    groups.setdefault(v - lo, []).append(lits[leaf])
            if not groups:
                continue
            blk = []
            for u, ls in groups.items():
                blk.append((u // common, self._or(ls)))
            blocks.append(blk)
        # sum_t (lo_t + u_t) + b0 >= bound  <=>  sum_t u_t >= bound - shift; in units of ``common``
        need = bound_strict - shift
        if common > 1:
            need = -((-need) // common)  # ceiling: the sum of multiples of ``common`` reaches ``need``
        return guarded_sum_geq(blocks, need, g, self.pool, self._add)

    def _or(self, lits: list[int]) -> int:
        """A literal equivalent to ``OR lits`` (leaves of one tree: at most one is true)."""
        if len(lits) == 1:
            return lits[0]
        o = self._new()
        for x in lits:
            self._add([-x, o])
        self._add([-o, *lits])
        return o

    # -- queries --------------------------------------------------------------

    def fixed_literals(self, point: Sequence[int], features: Iterable[int]) -> dict[int, list[int]]:
        """Per fixed feature, the assumption literals saying ``x_i = point[i]``."""
        return {i: self._range_lits(i, point[i], point[i]) for i in features}

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``.

        Under ``deadline`` the SAT call is interrupted at the time limit (:class:`~kcxai.SearchLimitError`).
        """
        lits = [self.target(label, deadline)]
        for ls in self.fixed_literals(point, fixed).values():
            lits.extend(ls)
        if deadline is None:
            return bool(self.solver.solve(assumptions=lits))
        return deadline.solve(self.solver, lits)

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """After an unsatisfiable :meth:`changes`: the fixed features in the solver's core."""
        by_lit = {x: i for i, ls in self.fixed_literals(point, fixed).items() for x in ls}
        core = self.solver.get_core() or []
        return {by_lit[x] for x in core if x in by_lit}

    def model_point(self) -> tuple[int, ...]:
        """After a satisfiable :meth:`changes`: the point of the solver's model."""
        model = self.solver.get_model()
        assert model is not None  # only called after a satisfiable query
        out = []
        for ys in self.y:
            truth = [model[v - 1] > 0 for v in ys]
            out.append(bisect_left(truth, True) if truth else 0)  # x <= k holds from k = x on
        return tuple(out)

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a satisfiable :meth:`changes`: the features among ``features`` whose model value is not ``point``'s."""
        model = self.solver.get_model()
        assert model is not None
        out = set()
        for i in features:
            if any(model[abs(x) - 1] * x < 0 for x in self._range_lits(i, point[i], point[i])):
                out.add(i)
        return out

    def close(self) -> None:
        """Free the solver."""
        self.solver.delete()

    @property
    def n_vars(self) -> int:
        """Number of variables."""
        return int(self.pool.top)
