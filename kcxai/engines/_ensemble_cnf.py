"""A tree ensemble as CNF in an incremental SAT solver: "some point with ``x_S = v_S`` gets another class".

Is there a point with ``x_S = v_S`` that a rival class beats the predicted
class at? The encoding is the one of RFxpl (Izza and Marques-Silva 2021) and
PyXAI (a clause per leaf), with features in order encoding instead of one
variable per split:

* **Features**: ``y[i][k]`` means ``x_i <= k`` (value numbers ``0 .. d-1``),
  with ``y[i][k] -> y[i][k+1]``. Fixing a feature is at most two
  assumptions; "``x_i`` is outside the values a path allows" is one literal
  per side of the allowed range (a run of values strictly inside the domain
  gets one auxiliary literal implying both of its bounds).
* **Trees**: no node variables. A tree's outcome is described by *level
  literals* that only imply facts: ``w -> (the point is outside this leaf's
  box)`` for every leaf whose outcome is below the level, one clause per leaf
  over the order literals of the features its path restricts. As the leaves
  of a tree partition feature space, a true level literal forces the tree's
  outcome to its level; a false one says nothing. This is sound and complete
  for "sum of outcomes >= bound" constraints, in which only true literals
  count. A 100-tree adult forest of unbounded depth (20,000 training rows,
  293,000 leaves) takes 42,047 variables and 342,592 clauses (4.5 million
  literals, 6-7 s to build), where one variable per node needed over a
  million variables and 2.75 million clauses on a forest of that size; one
  SAT call costs tens of milliseconds instead of about 0.3 s.
* **Hard voting**: for the predicted class ``c`` and a rival ``d``, a tree
  counts 2 when it votes ``d``, 1 when it votes neither, 0 when it votes
  ``c``; ``d`` wins (or ties, if it wins ties against ``c``) when the sum is at
  least the number of trees (plus one). The per-tree literals are "does not
  vote ``c``" and "votes ``d``"; the bound is a totalizer (pysat's
  ``ITotalizer`` over the negated literals, so that one assumption selects the
  bound). With two classes a tree's literal is "votes the other class",
  counted once. Measured on 100 trees of depth 8 (median AXp, CPU): the
  totalizer 0.08 s; sequential counter, sorting and cardinality networks,
  modulo totalizers 0.12-0.19 s; Minicard's native constraint ran past 60 s.
* **Sums** (soft voting, boosted trees): per pair ``(c, d)`` and tree, the
  distinct values ``u_0 < u_1 < ...`` of ``score_d - score_c`` over its leaves
  (scaled to integers); ``L_j -> value >= u_j`` (``L_j -> L_{j-1}`` and
  ``L_j`` excludes the leaves of value ``u_{j-1}``); the value ``u_j`` is
  taken when ``L_j`` holds and ``L_{j+1}`` does not, and the sum over trees
  is compared with the bound by :func:`~kcxai.engines._sums.guarded_sum_geq`
  (a totalizer for small totals, adders for big ones). Here each leaf also
  implies its own level (``inside the leaf -> L_j``): not needed for
  soundness, but it lets unit propagation settle a tree once its leaf is
  known (AXps of a 10-tree boosted model 8 times faster).

All of it is built when the engine is made (every class), so the first
explanation of a class is not slower than the others. The encoding holds no
instance: one solver serves every instance of a model, the fixed features
being assumptions.

References
----------
Y. Izza and J. Marques-Silva. On Explaining Random Forests with SAT. IJCAI 2021.
G. Audemard, S. Bellart, L. Bounia, F. Koriche, J.-M. Lagniez and P. Marquis.
Trading Complexity for Sparsity in Random Forest Explanations. AAAI 2022 (PyXAI).
"""

from __future__ import annotations

import math
import sys
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from fractions import Fraction

from pysat.card import ITotalizer
from pysat.formula import IDPool
from pysat.solvers import Solver

from kcxai._deadline import Deadline
from kcxai._errors import InvalidTypeError, ProblemTooLargeError
from kcxai._params import Options, check
from kcxai.engines._sums import guarded_sum_geq
from kcxai._types import Point
from kcxai.models.boosted import BoostedTrees
from kcxai.models.forest import RandomForest
from kcxai.models.classifier import Classifier
from kcxai.models.tree import DecisionTree

__all__ = ["EnsembleCnf", "EnsembleView", "ensemble_view", "SOLVERS", "DEFAULT_MAX_MEMORY"]


class EnsembleView:
    """What the engines read from a tree ensemble: trees, per-leaf class scores, base scores, tie order.

    Attributes
    ----------
    trees : sequence of DecisionTree
    rows : sequence of dict
        Per tree, ``{reachable leaf: its exact score for each class}``.
    base : sequence of Fraction
        The class scores before any tree.
    ties_last : bool
        Whether ties go to the later class (else to the earlier).
    """

    __slots__ = ("trees", "rows", "base", "ties_last")

    def __init__(self, trees: Sequence[DecisionTree], rows: Sequence[dict[int, tuple[Fraction, ...]]],
                 base: Sequence[Fraction], ties_last: bool) -> None:
        self.trees = trees
        self.rows = rows
        self.base = base
        self.ties_last = ties_last

    def prefers(self, d: int, c: int) -> bool:
        """Whether ``d`` wins a tie against ``c``."""
        return d > c if self.ties_last else d < c


def ensemble_view(model: Classifier) -> EnsembleView:
    """The scores of a :class:`~kcxai.models.RandomForest` or :class:`~kcxai.models.BoostedTrees`."""
    if isinstance(model, RandomForest):
        k = len(model.classes)
        return EnsembleView(model.trees, [model.leaf_scores(t) for t in range(model.n_trees)], [Fraction(0)] * k,
                            False)
    if isinstance(model, BoostedTrees):
        return EnsembleView(model.trees, [model.leaf_scores(t) for t in range(model.n_trees)], model.base_scores,
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


#: The pysat solvers the engine accepts: they answer under assumptions, give cores, and return within
#: milliseconds of an interrupt, so that ``max_seconds`` holds (:mod:`kcxai._deadline`): MiniSat-GH,
#: MiniSat 2.2, Minicard, MapleChrono and MapleSAT. Glucose and Gluecard look at the interrupt only between
#: restarts (measured 1.3-4.1 times a 2 s limit, ``benchmarks/bench_ensembles.py --solvers``), MapleCM
#: 1.0-1.14 times, CaDiCaL not at all. On 100 trees of depth 8 (adult,
#: 20 rows) the median AXp took 0.060-0.088 s CPU with every solver tried, CaDiCaL 1.9.5 0.090 s.
SOLVERS = ("mgh", "m22", "mc", "mcb", "mpl")

#: Default ``max_memory`` of the encoding, in bytes (estimated from its size, see :meth:`EnsembleCnf.memory`).
DEFAULT_MAX_MEMORY = 2 << 30

#: Estimated solver bytes per clause literal, per clause and per variable (MiniSat-like solvers; measured:
#: the 342,592 clauses of a 100-tree adult forest of unbounded depth, 4.46 million literals, grew the process
#: by 32 MB with MiniSat-GH and 46 MB with Glucose 4; the estimate says 44 MB).
_BYTES_PER_LITERAL = 6
_BYTES_PER_CLAUSE = 40
_BYTES_PER_VARIABLE = 80
#: Bytes per clause literal of the Python copy of the clauses kept for :meth:`EnsembleCnf.restart`, beyond its
#: lists (the int objects; the lists themselves are measured as they are kept). Measured in docs/results.md
#: ("The SAT engine's clause copy").
_COPY_BYTES_PER_LITERAL = 16
#: Bytes per clause of the copy's outer list (one pointer).
_COPY_BYTES_PER_SLOT = 8


class EnsembleCnf:
    """The leaf-clause CNF of a tree ensemble in one incremental solver (see the module docstring).

    Parameters
    ----------
    model : RandomForest or BoostedTrees
    solver : str, default "mgh"
        One of :data:`SOLVERS`.
    deadline : Deadline, optional
        The time limit of the construction (checked once per tree and per clause batch).
    max_memory : int or None, default :data:`DEFAULT_MAX_MEMORY`
        Bound on the estimated memory of the encoding, in bytes; ``None``: none.
    """

    language = "sat"

    def __init__(self, model: Classifier, *, solver: str = "mgh", deadline: Deadline | None = None,
                 max_memory: int | None = DEFAULT_MAX_MEMORY) -> None:
        check("solver", solver, Options(SOLVERS))
        self.model = model
        self.solver_name = solver
        self.max_memory = max_memory
        self.view = ensemble_view(model)
        self.space = model.space
        self.sizes = [f.size for f in self.space.features]
        self.pool = IDPool()
        self.solver = Solver(name=solver)
        self.clauses = 0
        self.literals = 0
        self._buffer: list[list[int]] = []
        self._formula: list[list[int]] = []  # every clause, to load a fresh solver (see restart)
        self._formula_lists = 0  # bytes of the copy's clause lists (sys.getsizeof), counted in memory
        self._used = False
        self._deadline = deadline
        self._totalizers: list[ITotalizer] = []
        try:
            self._encode()
        except BaseException:
            self.close()
            raise
        self._deadline = None

    # -- building -------------------------------------------------------------

    def _new(self) -> int:
        return int(self.pool.id())

    def _add(self, clause: list[int]) -> None:
        buf = self._buffer
        buf.append(clause)
        if len(buf) >= 20_000:
            self._flush()

    def _flush(self) -> None:
        if self._deadline is not None:
            self._deadline.check()
        self.clauses += len(self._buffer)
        self.literals += sum(map(len, self._buffer))
        self.solver.append_formula(self._buffer)
        self._formula.extend(self._buffer)
        self._formula_lists += sum(map(sys.getsizeof, self._buffer))
        self._buffer = []
        if self.max_memory is not None and self.memory > self.max_memory:
            raise ProblemTooLargeError(
                f"The SAT encoding of this {type(self.model).__name__} ({len(self.view.trees)} trees) needs more "
                f"than max_memory={self.max_memory:,} bytes (estimated {self.memory:,} bytes after "
                f"{self.clauses:,} clauses). Pass a larger 'max_memory' (None: no limit), use the search engine "
                "(engine='search'), or a model with fewer or shallower trees.")

    @property
    def memory(self) -> int:
        """The estimated memory of the encoding, in bytes: the solver's clauses and variables, and the Python
        copy of the clauses that :meth:`restart` loads (:attr:`copy_memory`)."""
        return (_BYTES_PER_LITERAL * self.literals + _BYTES_PER_CLAUSE * self.clauses
                + _BYTES_PER_VARIABLE * int(self.pool.top) + self.copy_memory)

    @property
    def copy_memory(self) -> int:
        """The estimated bytes of the clauses' Python copy kept for :meth:`restart` (its lists as measured, and
        its int objects; about 1.8 times the solver's part)."""
        return (self._formula_lists + _COPY_BYTES_PER_SLOT * len(self._formula)
                + _COPY_BYTES_PER_LITERAL * self.literals)

    def _encode(self) -> None:
        self.y: list[list[int]] = []
        for d in self.sizes:
            ys = [self._new() for _ in range(d - 1)]
            for a, b in zip(ys, ys[1:]):
                self._add([-a, b])
            self.y.append(ys)
        self._outside_cache: dict[tuple[int, int], tuple[int, ...]] = {}
        self._run_lits: dict[tuple[int, int, int], int] = {}
        k = len(self.view.base)
        self._targets: dict[int, int] = {}
        if self._hard():
            self._encode_votes(k)
        else:
            self._encode_sums(k)
        self._flush()
        self._outside_cache = {}

    def _hard(self) -> bool:
        return isinstance(self.model, RandomForest) and self.model.voting == "hard"

    def _outside(self, i: int, mask: int) -> tuple[int, ...]:
        """Literals whose disjunction says ``x_i`` is not in ``mask`` (each implies it)."""
        d = self.sizes[i]
        low = (mask & -mask).bit_length() - 1
        high = mask.bit_length() - 1
        if (mask >> low) + 1 == 1 << (high - low + 1):  # a range: one order literal per side
            out = []
            if low > 0:
                out.append(self.y[i][low - 1])
            if high < d - 1:
                out.append(-self.y[i][high])
            return tuple(out)
        key = (i, mask)
        got = self._outside_cache.get(key)
        if got is not None:
            return got
        runs = []
        for a, b in _runs(~mask & ((1 << d) - 1)):
            if a == 0:
                runs.append(self.y[i][b])
            elif b == d - 1:
                runs.append(-self.y[i][a - 1])
            else:
                r = self._run_lits.get((i, a, b))
                if r is None:
                    r = self._run_lits[(i, a, b)] = self._new()
                    self._add([-r, -self.y[i][a - 1]])
                    self._add([-r, self.y[i][b]])
                runs.append(r)
        got = self._outside_cache[key] = tuple(runs)
        return got

    def _leaf_boxes(self, tree: DecisionTree) -> Iterable[tuple[int, list[int]]]:
        """Per reachable leaf, ``(leaf, literals)``: the disjunction of the literals says the point is outside it.

        A walk down the node arrays keeping, per restricted feature, the allowed values and their outside
        literals (computed once per node, not per leaf: masks of large domains are big integers)."""
        a = tree.arrays
        if a.feature[a.root] < 0:
            yield a.root, []
            return
        full = [(1 << d) - 1 for d in self.sizes]
        stack: list[tuple[int, dict[int, int], dict[int, tuple[int, ...]]]] = [(a.root, {}, {})]
        outside = self._outside
        while stack:
            nid, masks, outs = stack.pop()
            f = a.feature[nid]
            if f < 0:
                yield nid, [x for lits in outs.values() for x in lits]
                continue
            here = masks.get(f, full[f])
            for mask, child in a.branches[nid]:
                m = mask & here
                if not m:
                    continue
                if m == here:
                    stack.append((child, masks, outs))
                    continue
                sub = dict(masks)
                sub[f] = m
                sub_outs = dict(outs)
                sub_outs[f] = outside(f, m)
                stack.append((child, sub, sub_outs))

    # -- hard voting ------------------------------------------------------------

    def _encode_votes(self, k: int) -> None:
        """Per tree: ``not_c[t][c] -> tree t does not vote c``, and with 3+ classes ``votes[t][d] -> it votes d``."""
        labels = [tree.arrays.label for tree in self.view.trees]
        n_trees = len(labels)
        not_c: list[list[int]] = []
        votes: list[list[int]] = []
        for t, tree in enumerate(self.view.trees):
            if self._deadline is not None:
                self._deadline.check()
            vd = [self._new() for _ in range(k)]
            nc = [vd[1], vd[0]] if k == 2 else [self._new() for _ in range(k)]
            for leaf, lits in self._leaf_boxes(tree):  # a constant tree: ``lits`` empty, the literals false
                lab = labels[t][leaf]
                self._add([-nc[lab], *lits])
                if k > 2:
                    for d in range(k):
                        if d != lab:
                            self._add([-vd[d], *lits])
            not_c.append(nc)
            votes.append(vd)
        ties_first = True  # hard voting: ties go to the first class
        for c in range(k):
            rivals = []
            for d in range(k):
                if d == c:
                    continue
                strict = 1 if (c < d) == ties_first else 0
                lits = []
                for t in range(n_trees):
                    lits.append(not_c[t][c])
                    if k > 2:
                        lits.append(votes[t][d])
                need = (n_trees + strict) if k > 2 else -(-(n_trees + strict) // 2)
                rivals.append(self._at_least(lits, need))
            self._targets[c] = self._any(rivals)

    def _at_least(self, lits: list[int], need: int) -> int:
        """A literal that implies ``sum(lits) >= need`` (a totalizer over the negations: at most
        ``len - need`` of them false)."""
        n = len(lits)
        if need <= 0:
            return self._true()
        if need > n:
            return -self._true()
        tot = ITotalizer(lits=[-x for x in lits], ubound=n - need + 1, top_id=self.pool.top)
        self._totalizers.append(tot)
        self.pool.top = tot.top_id
        for cl in tot.cnf.clauses:
            self._add(list(cl))
        return -int(tot.rhs[n - need])

    def _true(self) -> int:
        t = self._new()
        self._add([t])
        return t

    def _any(self, lits: list[int]) -> int:
        if len(lits) == 1:
            return lits[0]
        t = self._new()
        self._add([-t, *lits])
        return t

    # -- sums -------------------------------------------------------------------

    def _encode_sums(self, k: int) -> None:
        view = self.view
        trees = view.trees
        pairs = [(c, d) for c in range(k) for d in range(k) if c != d]
        # per pair and tree: the scaled integer value of each leaf
        values: dict[tuple[int, int], list[dict[int, int]]] = {}
        bases: dict[tuple[int, int], int] = {}
        for c, d in pairs:
            diffs = []
            scale = 1
            for rows in view.rows:
                if self._deadline is not None:
                    self._deadline.check()
                diff = {leaf: row[d] - row[c] for leaf, row in rows.items()}
                for x in set(diff.values()):
                    scale = scale * x.denominator // math.gcd(scale, x.denominator)
                diffs.append(diff)
            base = view.base[d] - view.base[c]
            scale = scale * base.denominator // math.gcd(scale, base.denominator)
            values[(c, d)] = [{leaf: int(v * scale) for leaf, v in diff.items()} for diff in diffs]
            bases[(c, d)] = int(base * scale)
        # per pair and tree: sorted distinct values and the level literals L_1.. (L_0 is true)
        levels: dict[tuple[int, int], list[tuple[list[int], list[int]]]] = {p: [] for p in pairs}
        for t, tree in enumerate(trees):
            if self._deadline is not None:
                self._deadline.check()
            per_pair = []
            for p in pairs:
                us = sorted(set(values[p][t].values()))
                ls = [self._new() for _ in us[1:]]
                for a, b in zip(ls[1:], ls):
                    self._add([-a, b])
                levels[p].append((us, ls))
                rank = {u: j for j, u in enumerate(us)}
                per_pair.append((values[p][t], rank, ls))
            for leaf, lits in self._leaf_boxes(tree):
                for vals, rank, ls in per_pair:
                    j = rank[vals[leaf]]
                    if j < len(ls):  # L_{j+1} excludes this leaf
                        self._add([-ls[j], *lits])
                    if j > 0:  # the leaf implies L_j (for propagation: measured 8x faster on a boosted model)
                        self._add([ls[j - 1], *lits])
        for c in range(k):
            rivals = []
            for d in range(k):
                if d == c:
                    continue
                rivals.append(self._sum_at_least(levels[(c, d)], bases[(c, d)],
                                                 0 if view.prefers(d, c) else 1))
            self._targets[c] = self._any(rivals)

    def _sum_at_least(self, levels: list[tuple[list[int], list[int]]], base: int, bound: int) -> int:
        """A literal that implies ``base + sum of the trees' values >= bound``."""
        blocks: list[list[tuple[int, int]]] = []
        shift = base
        for us, ls in levels:
            shift += us[0]
            if not ls:
                continue
            blk = []
            for j, lit in enumerate(ls):  # value u_{j+1}: L_{j+1} and not L_{j+2}
                exact = lit if j + 1 == len(ls) else self._and_not(lit, ls[j + 1])
                blk.append((us[j + 1] - us[0], exact))
            blocks.append(blk)
        g = self._new()
        common = 0
        for blk in blocks:
            for v, _ in blk:
                common = math.gcd(common, v)
        need = bound - shift
        if common > 1:
            blocks = [[(v // common, x) for v, x in blk] for blk in blocks]
            need = -((-need) // common)
        guarded_sum_geq(blocks, need, g, self.pool, self._add)
        return g

    def _and_not(self, a: int, b: int) -> int:
        """A literal equivalent to ``a and not b``."""
        x = self._new()
        self._add([-x, a])
        self._add([-x, -b])
        self._add([x, -a, b])
        return x

    # -- queries --------------------------------------------------------------

    def fixed_literals(self, point: Sequence[int], features: Iterable[int]) -> dict[int, list[int]]:
        """Per fixed feature, the assumption literals saying ``x_i = point[i]``."""
        out = {}
        for i in features:
            ys, v = self.y[i], point[i]
            ls = []
            if v > 0:
                ls.append(-ys[v - 1])
            if v < len(ys):
                ls.append(ys[v])
            out[i] = ls
        return out

    def assumptions(self, point: Sequence[int], label: int, fixed: Iterable[int]) -> list[int]:
        """The assumptions of the query "does some point with ``x_fixed = point_fixed`` get a class other than
        ``label``?"."""
        lits = [self._targets[label]]
        for ls in self.fixed_literals(point, fixed).values():
            lits.extend(ls)
        return lits

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``.

        Under ``deadline`` the SAT call is interrupted at the time limit (:class:`~kcxai.SearchLimitError`).
        """
        lits = self.assumptions(point, label, fixed)
        self._used = True
        if deadline is None:
            return bool(self.solver.solve(assumptions=lits))
        return deadline.solve(self.solver, lits)

    def box_literals(self, lo: Sequence[int], hi: Sequence[int]) -> list[int]:
        """The assumption literals saying ``lo[f] <= x_f <= hi[f]`` for every feature (``y[f][k]``: ``x_f <= k``)."""
        lits = []
        for ys, low, high in zip(self.y, lo, hi):
            if low > 0:
                lits.append(-ys[low - 1])
            if high < len(ys):
                lits.append(ys[high])
        return lits

    def changes_within(self, point: Sequence[int], label: int, fixed: Iterable[int], conflicts: int,
                       deadline: Deadline | None = None, box: tuple[Sequence[int], Sequence[int]] | None = None
                       ) -> bool | None:
        """:meth:`changes` within ``conflicts`` conflicts of the solver: ``None`` when undecided by then.
        With ``box`` (``lo``, ``hi``): whether some point of the box of ranges gets a class other than ``label``
        (``point`` and ``fixed`` unused).

        The deadline is looked at before the call only: the budget bounds the call itself."""
        if deadline is not None:
            deadline.check()
        lits = (self.assumptions(point, label, fixed) if box is None
                else [self._targets[label], *self.box_literals(*box)])
        self._used = True
        self.solver.conf_budget(conflicts)
        answer = self.solver.solve_limited(assumptions=lits)
        return None if answer is None else bool(answer)

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """After an unsatisfiable :meth:`changes`: the fixed features in the solver's core."""
        by_lit = {x: i for i, ls in self.fixed_literals(point, fixed).items() for x in ls}
        core = self.solver.get_core() or []
        return {by_lit[x] for x in core if x in by_lit}

    def model_point(self) -> Point:
        """After a satisfiable :meth:`changes`: the point of the solver's model."""
        model = self.solver.get_model()
        assert model is not None  # only called after a satisfiable query
        out = []
        for ys in self.y:
            truth = [model[v - 1] > 0 for v in ys]
            out.append(bisect_left(truth, True) if truth else 0)
        return tuple(out)

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a satisfiable :meth:`changes`: the features among ``features`` whose model value is not ``point``'s."""
        p = self.model_point()
        return {i for i in features if p[i] != point[i]}

    def restart(self) -> None:
        """Load the clauses into a fresh solver, if the current one has answered a query.

        An incremental solver keeps what it learned: its next model or core depends on every call
        before, so the counterexample or proof of one explanation would depend on the explanations
        run before it. Each explanation restarts (:meth:`EngineOracle.decide`), so its answer depends
        only on its input; loading costs a fraction of the encoding (about 6 ms for 17 k clauses).
        """
        if not self._used:
            return
        self.solver.delete()
        self.solver = Solver(name=self.solver_name, bootstrap_with=self._formula)
        self._used = False

    def close(self) -> None:
        """Free the solver."""
        for tot in self._totalizers:
            tot.delete()
        self._totalizers = []
        self.solver.delete()

    @property
    def n_vars(self) -> int:
        """Number of variables."""
        return int(self.pool.top)
