"""Exact search for C-delta-relevant sets of a decision tree: SAT over feature selectors, cut lazily.

The paper's proposition ("Relevant Sets for DTs") encodes a set ``S`` by
selectors ``s_i`` and, for each path ``R_j``, a variable ``t_j`` true when a
selected feature makes ``R_j`` inconsistent with ``v``; it then asks for
``sum_{P} ~t_j Pr(R_j) >= delta * sum_{P u Q} ~t_j Pr(R_j)`` with constant
path probabilities. That inequality is not the precision: the weight of the
points of ``R_j`` with ``x_S = v_S`` depends on ``S`` through every feature the
path restricts to a set that contains ``v_i`` (on the running example, for
``S = {1, 9}`` it gives ``113/120`` where the precision is ``121/128``).

Exactly, with ``I_j`` the features on which ``R_j`` excludes ``v_i``, ``T_j``
those it restricts to a set ``E_ji`` that contains ``v_i``, ``w(E)`` the
weight of a value set and ``Z_i`` a feature's total weight::

    precision(S) * L = sum_{j in P, I_j disjoint from S} base_j * prod_{i in T_j} (Z_i if i in S else w(E_ji))

with ``L = prod_i Z_i`` and ``base_j = prod_{i in I_j} w(E_ji) * prod_{i untested} Z_i``,
all exact integers. Each path's term is a product over ``T_j``: a linear
pseudo-Boolean encoding needs one term per subset of ``T_j``, thousands of terms
with 28-bit coefficients per instance on the adult reference trees, too many for
pysat's encodings (``docs/results.md``, "Measurements moved from docstrings").

So the search is lazy (counterexample-guided), in the spirit of SMT: a SAT
solver (python-sat, MiniSat-GH: it stops within milliseconds of a time
limit) holds the selectors, the cardinality bound (an incremental
totalizer) or the subset constraints, and the cuts learnt so far; each
model it proposes is checked exactly with the formula above. A
model that is not relevant is cut off by a clause generalised from two exact
bounds that hold for every completion of a partial choice (``A`` chosen,
``B`` left out, the rest open):

* agreeing paths: ``precision * L <= sum_{P, I_j disjoint from A} base_j prod_{T_j} (w(E_ji) if i in B else Z_i)``;
* disagreeing paths (the paper's inequality on ``Q``, made exact):
  ``(1 - precision) * L >= sum_{Q, I_j within B} base_j prod_{T_j} (Z_i if i in A else w(E_ji))``.

Literals are dropped from the failed model greedily while the bound still
rules it out, and the clause ``OR_{i in A} ~s_i OR_{i in B} s_i`` is added.
Every cut is a fact about precision alone, so cuts are kept across the
queries of one search. No pseudo-Boolean encoding is needed, so big weights
cost nothing (and ``python-sat[pb]`` is not required).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from pysat.card import ITotalizer
from pysat.solvers import Solver

from kcxai._deadline import Deadline
from kcxai.arithmetic import Probability, Weight
from kcxai._types import Point

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.tree import TreePath
    from kcxai.space import FeatureSpace

__all__ = ["TreePrecision", "TreeSearch"]

#: One path's term: its weight ``||R_j||``, the mask of the features it excludes the instance on (``I_j``),
#: and ``(f, w(E_jf), Z_f)`` for each feature it restricts but allows the instance's value on (``T_j``).
_PathTerm = tuple[Weight, int, tuple[tuple[int, Weight, Weight], ...]]


class TreePrecision:
    """Exact precision of ``x_S = v_S`` on a decision tree, and bounds for partial choices.

    Parameters
    ----------
    tree_paths : sequence of TreePath
        The tree's reachable paths.
    space : FeatureSpace
        With a uniform or product distribution: the per-path terms below share
        one normaliser ``L / consistent_weight(S)`` only then (under a mixture each
        component has its own, and precision is not a sum of per-path terms).
    point : tuple of int
        The instance ``v`` (value indices).
    label : int
        ``c = kappa(v)``.
    delta : Fraction or float
        The precision threshold.
    """

    def __init__(self, tree_paths: Sequence["TreePath"], space: "FeatureSpace", point: Point, label: int,
                 delta: Probability) -> None:
        self.arith = arith = space.arith
        div = arith.div
        ws, totals = space.weights, space.totals
        self.total = space.total_weight
        self._bound = arith.bound(delta, self.total)
        n = space.n_features
        untested: Weight = 1
        for z in totals:
            untested *= z
        set_weight: dict[tuple[int, int], Weight] = {}
        # per path: (base, mask of I_j, ((f, w(E_jf), Z_f) for f in T_j), term with every T_j feature left out)
        paths: tuple[list[_PathTerm], list[_PathTerm]] = ([], [])
        active: set[int] = set()
        for p in tree_paths:
            base = untested
            imask = 0
            ts = []
            for f, m in p.masks:
                w_e = set_weight.get((f, m))
                if w_e is None:
                    w_e = set_weight[(f, m)] = sum(w for k, w in enumerate(ws[f]) if m >> k & 1)
                base = div(base, totals[f]) * w_e
                if m >> point[f] & 1:
                    ts.append((f, w_e, totals[f]))
                else:
                    imask |= 1 << f
                active.add(f)
            paths[0 if p.label == label else 1].append((base, imask, tuple(ts)))
        # ``base`` above is ||R_j||, the path's weight; a T_j feature fixed replaces w(E_jf) by Z_f
        self.agree_paths, self.disagree_paths = paths
        #: Features some path restricts: fixing any other feature never changes the precision.
        self.active = tuple(sorted(active))
        # per feature and side: the paths it kills (f in I_j) and those it raises (f in T_j)
        self._kill: tuple[list[list[int]], list[list[int]]] = ([[] for _ in range(n)], [[] for _ in range(n)])
        self._up: tuple[list[list[tuple[int, Weight, Weight]]], ...] = ([[] for _ in range(n)], [[] for _ in range(n)])
        for side in (0, 1):
            for j, (_, imask, allowed) in enumerate(paths[side]):
                f = 0
                while imask:
                    if imask & 1:
                        self._kill[side][f].append(j)
                    imask >>= 1
                    f += 1
                for f, w_e, z in allowed:
                    self._up[side][f].append((j, w_e, z))

    # -- exact values -------------------------------------------------------

    def agree_weight(self, fixed: Iterable[int]) -> Weight:
        """``precision(S) * L`` (an ``int`` in exact spaces)."""
        fixed = frozenset(fixed)
        terms, counts = self._state(0, fixed)
        return sum(t for t, k in zip(terms, counts) if k == 0)

    def _agree_ok(self, value: Weight) -> bool:
        return self._bound.holds_from_below(value)  # delta * total computed once

    def relevant(self, fixed: Iterable[int]) -> bool:
        """Whether ``precision(S) >= delta``, decided exactly in exact spaces."""
        return self._agree_ok(self.agree_weight(fixed))

    def precision(self, fixed: Iterable[int]) -> Probability:
        """``precision(S)`` (a ``Fraction`` in exact spaces)."""
        value = self.agree_weight(fixed)
        return self.arith.probability(value, self.total)

    def _state(self, side: int, fixed: frozenset[int]) -> tuple[list[Weight], list[int]]:
        """Per path of a side: its term for ``S = fixed`` (ignoring kills) and how many of ``S`` kill it."""
        terms = [base for base, _, _ in (self.agree_paths, self.disagree_paths)[side]]
        counts = [0] * len(terms)
        kill, up, div = self._kill[side], self._up[side], self.arith.div
        for f in fixed:
            for j in kill[f]:
                counts[j] += 1
            for j, w_e, z in up[f]:
                terms[j] = div(terms[j], w_e) * z
        return terms, counts

    # -- cuts ---------------------------------------------------------------

    def cuts(self, chosen: frozenset[int]) -> list[tuple[set[int], set[int]]]:
        """Partial choices ``(A, B)`` under which no completion is relevant, from a failed set.

        ``chosen`` must not be relevant. Returns one generalisation per bound.
        """
        return [self._cut_agree(chosen), self._cut_disagree(chosen)]

    def _cut_agree(self, chosen: frozenset[int]) -> tuple[set[int], set[int]]:
        """Open features while ``sum_{P alive under A} base prod (w(E) if in B else Z)`` stays too small."""
        a_set = set(chosen)
        b_set = set(self.active) - a_set
        terms, kills = self._state(0, chosen)
        kill, up, div = self._kill[0], self._up[0], self.arith.div
        total = sum(t for t, k in zip(terms, kills) if k == 0)

        def raised(j: int, w_e: Weight, z: Weight) -> Weight:
            return div(terms[j], w_e) * z

        def gain(f: int) -> Weight:
            if f in a_set:  # paths f alone killed come back
                return sum(terms[j] for j in kill[f] if kills[j] == 1)
            return sum(raised(j, w_e, z) - terms[j] for j, w_e, z in up[f] if kills[j] == 0)

        for f in self._order(a_set, b_set, gain):
            g = gain(f)
            if self._agree_ok(total + g):
                continue
            total += g
            if f in a_set:
                for j in kill[f]:
                    kills[j] -= 1
                a_set.discard(f)
            else:
                for j, w_e, z in up[f]:
                    terms[j] = raised(j, w_e, z)
                b_set.discard(f)
        return a_set, b_set

    def _cut_disagree(self, chosen: frozenset[int]) -> tuple[set[int], set[int]]:
        """Open features while ``sum_{Q, I_j within B} base prod (Z if in A else w(E))`` stays too big."""
        a_set = set(chosen)
        b_set = set(self.active) - a_set
        terms, opened = self._state(1, chosen)  # opened: features of I_j not left out; counted iff none
        kill, up, div = self._kill[1], self._up[1], self.arith.div
        total = sum(t for t, k in zip(terms, opened) if k == 0)

        def lowered(j: int, w_e: Weight, z: Weight) -> Weight:
            return div(terms[j], z) * w_e

        def gain(f: int) -> Weight:
            if f in a_set:  # paths testing f consistently drop to their lower factor
                return sum(terms[j] - lowered(j, w_e, z) for j, w_e, z in up[f] if opened[j] == 0)
            return sum(terms[j] for j in kill[f] if opened[j] == 0)  # paths f could kill stop counting

        for f in self._order(a_set, b_set, gain):
            g = gain(f)
            if self._agree_ok(self.total - (total - g)):
                continue
            total -= g
            if f in a_set:
                for j, w_e, z in up[f]:
                    terms[j] = lowered(j, w_e, z)
                a_set.discard(f)
            else:
                for j in kill[f]:
                    opened[j] += 1
                b_set.discard(f)
        return a_set, b_set

    @staticmethod
    def _order(a_set: set[int], b_set: set[int], gain: Callable[[int], Weight]) -> list[int]:
        """Left-out features first, then chosen ones; each by how little opening it loosens the bound."""
        return sorted(b_set, key=lambda f: (gain(f), f)) + sorted(a_set, key=lambda f: (gain(f), f))


class TreeSearch:
    """A SAT solver over the selectors of the active features, with the cuts learnt so far.

    Use as a context manager. Every query returns an exactly relevant set or
    ``None`` when none exists (the solver proved it), or raises
    :class:`~kcxai.SearchLimitError` at ``deadline`` (SAT calls are interrupted,
    and the clock is checked before each candidate is checked and cut).
    """

    def __init__(self, prec: TreePrecision, deadline: Deadline | None = None) -> None:
        self.prec = prec
        self.deadline = deadline if deadline is not None else Deadline(None, what="TreeSearch", advice="")
        self.var = {f: k + 1 for k, f in enumerate(prec.active)}
        self._top = len(self.var)
        self._solver = Solver(name="mgh")
        self._totalizer: ITotalizer | None = None
        #: Number of candidate sets checked.
        self.candidates = 0

    def __enter__(self) -> "TreeSearch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._totalizer is not None:
            self._totalizer.delete()
            self._totalizer = None
        self._solver.delete()

    def _new_var(self) -> int:
        self._top += 1
        return self._top

    def _find(self, assumptions: list[int]) -> frozenset[int] | None:
        """A relevant set satisfying the clauses and ``assumptions``, or ``None``."""
        solver, var, prec, deadline = self._solver, self.var, self.prec, self.deadline
        while deadline.solve(solver, assumptions):
            true = {lit for lit in solver.get_model() if lit > 0}  # a selector in no clause yet: false
            chosen = frozenset(f for f, x in var.items() if x in true)
            self.candidates += 1
            deadline.examined += 1
            deadline.check()
            if prec.relevant(chosen):
                return chosen
            for a_set, b_set in prec.cuts(chosen):
                solver.add_clause([-var[f] for f in a_set] + [var[f] for f in b_set])
        return None

    def proper_subset(self, fixed: frozenset[int]) -> frozenset[int] | None:
        """A relevant proper subset of the relevant set ``fixed``, or ``None`` if there is none."""
        inside = fixed.intersection(self.var)
        if inside != fixed:  # features no path restricts never change the precision
            return inside
        if not fixed:
            return None
        act = self._new_var()
        self._solver.add_clause([-act] + [-self.var[f] for f in fixed])
        try:
            return self._find([act] + [-x for f, x in self.var.items() if f not in fixed])
        finally:
            self._solver.add_clause([-act])

    def smallest(self, *, below: int | None = None) -> frozenset[int] | None:
        """A relevant set of minimum size (of size ``< below`` if given), or ``None``."""
        lits = list(self.var.values())
        n = len(lits)
        top = n if below is None else min(n, below - 1)
        if top < 0:
            return None
        if self.prec.relevant(frozenset()):
            return frozenset()
        if self._totalizer is None and n:
            self._totalizer = ITotalizer(lits=lits, ubound=n, top_id=self._top)
            self._top = self._totalizer.top_id
            for clause in self._totalizer.cnf.clauses:
                self._solver.add_clause(clause)
        for k in range(1, top + 1):
            found = self._find([-self._totalizer.rhs[k]] if self._totalizer is not None and k < n else [])
            if found is not None:
                return found
        return None
