"""Exact "can the class change?" for tree ensembles by branch and bound over boxes of values.

The same question as :class:`~kcxai.engines._ensemble_cnf.EnsembleCnf` (is there a point with
``x_S = v_S`` that a rival class ``d`` beats the predicted class ``c`` at?), decided by search instead
of SAT: CDCL solvers are slow on sums of 30-60-bit integers (soft-voting forests, boosted trees).

For each rival ``d`` the margin ``score_c - score_d`` is a sum over trees of per-leaf values
(:mod:`kcxai.engines._box_rivals`); ``d`` wins where it is ``<= 0`` (``< 0`` when ``c`` wins ties). A
query first tries the points that differ from the instance on one free feature only
(:meth:`EnsembleBox.changes`: one sweep per feature), then searches boxes of the free features' values
(:mod:`kcxai.engines._box_search`) whose bounds are sums of each tree's lowest and highest values among
the leaves that meet the box (:mod:`kcxai.engines._box_leaves`).

A path may restrict a feature to a value set that is not a range (a one-hot encoder's
``workclass != Private``). For a feature of at most 64 values
(:data:`~kcxai.engines._box_leaves.MASK_BITS`) each leaf keeps its set exactly, as a bit mask, and a box
keeps a set of values for the feature instead of a range, split by the value set its leaves cut it by
most often; so boxes meet exactly the leaves whose paths they cross. Wider features keep their sets'
hulls, a relaxation that keeps the bounds true; a single point where two leaves of a tree still meet is
decided by the model itself.

Values are compared exactly: each pair's leaf values are scaled to integers and replaced by their rank
among the pair's distinct values (so "settled" and the minima are exact); the bounds are int64 sums when
the scaled values allow it, and otherwise float sums that prune only with a margin above their rounding
error, the decisions being exact Python-integer sums.

On a soft-voting forest of two classes and at most :data:`SAT_FIRST_LEAVES` leaves whose paths restrict
every feature to ranges (:func:`sat_first`), a query that the single-feature flips, the root boxes and
the descent from the instance leave open goes to a SAT solver first
(:class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`), within :data:`SAT_CONFLICTS` conflicts
(:data:`SAT_BOX_CONFLICTS` for a box of ranges): its proof's core becomes the engine's core (the deletion
drops the features it did not use, as with the SAT engine) and a region proven; its counterexample the
answer. The first point query out of conflicts leaves the rest of the explanation to the search (until
:meth:`EnsembleBox.restart`), so an explanation pays for at most one SAT call that decides nothing.

Regions proven by earlier queries of the same instance and class (the sets of fixed features found
sufficient) are carved out of later root boxes: when ``fixed + {i}`` contains a proven set, no
counterexample has ``x_i = v_i``. Counterexamples found by earlier queries guide later ones: the last
:attr:`EnsembleBox.EARLIER` of the instance and class, with the fixed features set back to the
instance's values, are checked by the model, then descended from, before SAT and the boxes; a box query
(widening) first looks for an earlier box query's counterexample inside its box. All of these last one
explanation: :meth:`EnsembleBox.restart` forgets them, so that an explanation's boxes and
counterexamples depend on its own queries only.

Everything that does not depend on the instance (every leaf's hull and value sets, every pair of
classes' scaled values) is built with the engine. Measurements: ``docs/results.md``.

References
----------
H. Chen, H. Zhang, S. Si, Y. Li, D. Boning and C.-J. Hsieh. Robustness Verification of Tree-based
Models. NeurIPS 2019 (bounds of a tree ensemble's output over a box from each tree's leaves).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np

from kcxai._deadline import Deadline
from kcxai._errors import ProblemTooLargeError
from kcxai._types import Point
from kcxai.engines._box_leaves import MASK_BITS, BoolArray, IntArray, LeafTable, needed_bytes
from kcxai.engines._box_rivals import Rival, rivals_of
from kcxai.engines._box_search import BoxBatch, BoxSearch, Interrupted, OutOfBoxes
from kcxai.engines._ensemble_cnf import EnsembleCnf, ensemble_view
from kcxai.models.classifier import Classifier
from kcxai.models.forest import RandomForest

__all__ = ["EnsembleBox", "Interrupted", "DEFAULT_MAX_MEMORY", "MASK_BITS"]

#: Default bound on the engine's arrays, in bytes.
DEFAULT_MAX_MEMORY = 2 << 30

#: Two-class soft-voting forests of at most this many leaves also get a SAT solver (:func:`sat_first`).
SAT_FIRST_LEAVES = 10_000
#: The conflicts a query's SAT call may take before the search decides instead.
SAT_CONFLICTS = 1_000
#: The same for a box of ranges (:meth:`EnsembleBox.changes_in_box`, widening: up to 1,400 measured on
#: breast_cancer's forest).
SAT_BOX_CONFLICTS = 20_000


def sat_first(model: Classifier, leaves: LeafTable) -> bool:
    """Whether the engine asks a SAT solver first, within :data:`SAT_CONFLICTS` conflicts: a soft-voting
    forest of two classes and at most :data:`SAT_FIRST_LEAVES` leaves whose paths restrict every feature
    to ranges (measured: ``docs/results.md``, "Soft voting")."""
    return (isinstance(model, RandomForest) and model.voting == "soft" and len(model.classes) == 2
            and len(leaves) <= SAT_FIRST_LEAVES and not len(leaves.set_features) and not len(leaves.hull_features))


class EnsembleBox:
    """Exact class-change queries on a tree ensemble by branch and bound (see the module docstring).

    Same query interface as :class:`~kcxai.engines._ensemble_cnf.EnsembleCnf`.

    Parameters
    ----------
    model : RandomForest or BoostedTrees
    deadline : Deadline, optional
        The time limit of the construction (checked once per tree and per pair of classes).
    max_memory : int or None, default :data:`DEFAULT_MAX_MEMORY`
        Bound on the bytes of the engine's arrays (``None``: none); past it
        :class:`~kcxai.ProblemTooLargeError`. A query's ``deadline`` is checked once per batch of boxes.
    ask_sat_first : bool, default True
        Whether to build and ask a SAT solver first where :func:`sat_first` says so. ``False``: the search
        alone (:class:`~kcxai.engines._portfolio.EnsemblePortfolio` runs its own solver beside it, so the
        forest is encoded once).

    Attributes
    ----------
    leaves : LeafTable
        Every reachable leaf's value sets.
    rivals : dict
        Per predicted class, its :class:`~kcxai.engines._box_rivals.Rival` s.
    nodes : int
        The boxes expanded by all the queries so far.
    """

    language = "search"
    #: How many earlier counterexamples of an explanation guide its later queries (:meth:`changes`).
    EARLIER = 4
    #: How many counterexamples of earlier box queries (per class, since the last restart) are looked for
    #: inside a new box first (:meth:`changes_in_box`).
    BOX_EARLIER = 16

    def __init__(self, model: Classifier, *, deadline: Deadline | None = None,
                 max_memory: int | None = DEFAULT_MAX_MEMORY, ask_sat_first: bool = True) -> None:
        self.model = model
        self.view = ensemble_view(model)
        self.space = model.space
        self.sizes: IntArray = np.asarray([f.size for f in self.space.features], dtype=np.int64)
        self.max_memory = max_memory
        self._check_memory(sum(len(t.leaves) for t in self.view.trees))
        self.leaves = LeafTable(self.view.trees, self.sizes, deadline)
        #: Number of reachable leaves of all the trees (one box each).
        self.n_leaves = len(self.leaves)
        self.rivals: dict[int, list[Rival]] = rivals_of(self.view, self.leaves.leaf_tree, deadline,
                                                        type(model).__name__)
        self._witness: Point | None = None
        self._meets: tuple[Point, BoolArray] | None = None
        self._flipped: tuple[tuple[Point, int], list[Point | None]] | None = None
        self._stop = threading.Event()
        self._proven: tuple[tuple[Point, int], set[frozenset[int]]] | None = None
        #: The counterexamples found since the last restart for one instance and class, newest first.
        self._earlier: tuple[tuple[Point, int], list[Point]] | None = None
        #: Per feature, its last range in :meth:`meets_box` and the leaves that meet it.
        self._meet_cols: dict[int, tuple[tuple[int, int], BoolArray]] = {}
        #: Per class, the counterexamples found by box queries since the last restart, newest first.
        self._box_earlier: dict[int, list[Point]] = {}
        self.nodes = 0
        #: The SAT solver asked first (:func:`sat_first`), or ``None``.
        self.sat: EnsembleCnf | None = (EnsembleCnf(model, deadline=deadline)
                                        if ask_sat_first and sat_first(model, self.leaves) else None)
        self._sat_on = True  # until a SAT call of this explanation runs out of conflicts
        self._core: set[int] | None = None  # the fixed features of the last proof's SAT core

    @property
    def set_features(self) -> IntArray:
        """The features whose leaf value sets are kept exactly (:attr:`LeafTable.set_features`)."""
        return self.leaves.set_features

    @property
    def hull_features(self) -> IntArray:
        """The features whose leaf value sets are kept by their hulls (:attr:`LeafTable.hull_features`)."""
        return self.leaves.hull_features

    def _check_memory(self, n_leaves: int) -> None:
        need = needed_bytes(n_leaves, len(self.sizes), len(self.view.base))
        if self.max_memory is not None and need > self.max_memory:
            raise ProblemTooLargeError(
                f"The search engine's arrays for this {type(self.model).__name__} ({len(self.view.trees)} trees, "
                f"{n_leaves:,} leaves) need about {need:,} bytes, more than max_memory={self.max_memory:,}. Pass a "
                "larger 'max_memory' (None: no limit), or use a model with fewer or shallower trees.")

    # -- queries ---------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop the running query (from another thread): it raises :class:`Interrupted`."""
        self._stop.set()

    def clear_interrupt(self) -> None:
        """Let the next query run (after :meth:`interrupt`)."""
        self._stop.clear()

    def meet_columns(self, point: Sequence[int]) -> BoolArray:
        """Per leaf and feature, whether the leaf's value set (its hull, for :attr:`hull_features`) holds
        ``point``'s value (kept for the last point)."""
        key = tuple(int(v) for v in point)
        if self._meets is None or self._meets[0] != key:
            self._meets = (key, self.leaves.meets_point(key))
        return self._meets[1]

    def flips(self, point: Sequence[int], label: int) -> list[Point | None]:
        """Per feature, a point that differs from ``point`` on that feature alone and gets another class than
        ``label`` (``None``: none found), kept for the last point.

        One sweep per feature and rival: with the other features at ``point``'s values, each tree's leaves
        that still meet them split the feature's values, so the margin at every value is a sum of steps
        (a cumulative sum; for a feature of value sets, a sum over the sets' bits); its lowest value is
        checked with the model itself."""
        key = (tuple(int(v) for v in point), label)
        if self._flipped is not None and self._flipped[0] == key:
            return self._flipped[1]
        n = len(self.sizes)
        cols = self.meet_columns(point)
        misses = n - cols.sum(axis=1)
        out: list[Point | None] = [None] * n
        for rival in self.rivals[label]:
            near = misses[rival.leaf_rows] <= 1  # leaves the point reaches, or would with one feature changed
            rows = rival.leaf_rows[near]
            values = rival.value_table[rival.leaf_rank[near]].astype(np.float64)
            on = misses[rows] == 0
            limit = rival.float_limit(rival.base)  # a margin above it (in the table's units) is no flip
            for i in range(n):
                if out[i] is not None or self.sizes[i] < 2:
                    continue
                sel = on | ~cols[rows, i]
                margins = self.leaves.sweep(i, rows[sel], values[sel])
                k = int(np.argmin(margins))
                if k == point[i] or margins[k] > limit:
                    continue  # no flip
                candidate = tuple(k if j == i else int(point[j]) for j in range(n))
                if self.model.predict_point(candidate) != label:  # decided exactly, whatever the sweep's floats
                    out[i] = candidate
        self._flipped = (key, out)
        return out

    def changes(self, point: Sequence[int], label: int, fixed: Iterable[int], deadline: Deadline | None = None) -> bool:
        """Whether some point with ``x_fixed = point_fixed`` is classified other than ``label``.

        First a point that differs from ``point`` on one free feature only (:meth:`flips`), then the search."""
        fixed = sorted(set(fixed))
        self._core = None
        earlier = self._earlier_now(point, label)
        flips = self.flips(point, label)
        for i in set(range(len(self.sizes))).difference(fixed):
            if flips[i] is not None:
                self._witness = flips[i]
                return True
        cols = self.meet_columns(point)
        meet = np.logical_and.reduce(cols[:, fixed], axis=1) if fixed else np.ones(len(cols), dtype=bool)
        proven = self._proven_now(point, label)
        fixed_set = frozenset(fixed)
        searches = [self.searcher(rival, point, fixed, meet, label, deadline) for rival in self.rivals[label]]
        roots = [search.start() for search in searches]  # each: open boxes, a counterexample, or None
        for search, root in zip(searches, roots):  # a descent from the instance for each rival
            found = search.guess_from_instance() if isinstance(root, BoxBatch) else root
            if found is not None and not isinstance(found, BoxBatch):
                return self._found(found, earlier)
        found = self._from_earlier(point, label, fixed, earlier, searches, roots)
        if found is not None:
            return self._found(found, earlier)
        if self.sat is not None and self._sat_on and any(isinstance(root, BoxBatch) for root in roots):
            answer = self.sat.changes_within(point, label, fixed, SAT_CONFLICTS, deadline)
            if answer is None:
                self._sat_on = False  # for the rest of this explanation: the search alone
            elif answer:
                return self._found(self.sat.model_point(), earlier)
            else:
                self._core = self.sat.core_features(point, fixed)
                proven.add(frozenset(self._core))
                self._witness = None
                return False
        free = [i for i in range(len(self.sizes)) if i not in fixed_set]
        # x_i = v_i holds no counterexample when fixed + {i} contains a set proven sufficient (sufficiency is monotone)
        carve = [k for k, i in enumerate(free) if any(p - fixed_set <= {i} for p in proven)]
        for search, root in zip(searches, roots):
            try:
                found = search.run_from(root, carve)
            finally:
                self.nodes += search.boxes
            if found is not None:
                return self._found(found, earlier)
        proven.add(fixed_set)
        self._witness = None
        return False

    def _found(self, witness: Point, earlier: list[Point], keep: int | None = None) -> bool:
        """Answer ``True`` with ``witness``, kept as the newest of ``earlier`` (at most ``keep``, default
        :attr:`EARLIER`)."""
        keep = self.EARLIER if keep is None else keep
        self._witness = witness
        if witness in earlier:
            earlier.remove(witness)
        earlier.insert(0, witness)
        del earlier[keep:]
        return True

    def _earlier_now(self, point: Sequence[int], label: int) -> list[Point]:
        """The counterexamples found for ``point`` and ``label`` since the last :meth:`restart`, newest first."""
        key = (tuple(int(v) for v in point), label)
        if self._earlier is None or self._earlier[0] != key:
            self._earlier = (key, [])
        return self._earlier[1]

    def _from_earlier(self, point: Sequence[int], label: int, fixed: list[int], earlier: list[Point],
                      searches: Sequence[BoxSearch], roots: Sequence[object]) -> Point | None:
        """A counterexample guessed from ``earlier`` ones (of this instance and class, since the last
        :meth:`restart`): each with the fixed features set back to the instance's values, checked by the
        model; else a descent from each, per rival whose root box is open."""
        if not earlier:
            return None
        starts = np.asarray(earlier, dtype=np.int64)
        starts[:, fixed] = np.asarray(point, dtype=np.int64)[fixed]
        for start in starts.tolist():  # one by one: predict_points builds tables of its own on first use (1.6 s
            if self.model.predict_point(start) != label:  # on adult's forest)
                return tuple(start)
        for search, root in zip(searches, roots):
            if isinstance(root, BoxBatch) and len(search.free):
                for start in starts:
                    found = search.guess(start[search.free])
                    if found is not None:
                        return found
        return None

    def _proven_now(self, point: Sequence[int], label: int) -> set[frozenset[int]]:
        """The sets of features proven sufficient for ``point`` and ``label`` since the last :meth:`restart`."""
        key = (tuple(int(v) for v in point), label)
        if self._proven is None or self._proven[0] != key:
            self._proven = (key, {frozenset(range(len(self.sizes)))})
        return self._proven[1]

    def changes_in_box(self, lo: Sequence[int], hi: Sequence[int], label: int,
                       deadline: Deadline | None = None, max_boxes: int | None = None) -> bool | None:
        """Whether some point with ``lo[f] <= x_f <= hi[f]`` (value numbers) for every feature is
        classified other than ``label``: the sufficiency of a box of ranges (what widening an
        explanation's conditions asks). First the counterexamples of earlier box queries (since the last
        :meth:`restart`: widening's bisection asks growing boxes), then the SAT solver where the engine asks
        one first, then the same search as :meth:`changes`, its root box the given ranges and its leaves
        those whose value sets meet them. With ``max_boxes``, the search expands at most that many boxes
        over all the rivals (the root boxes are evaluated whatever it is) and answers ``None`` (undecided)
        past them; the boxes it expanded are added to :attr:`nodes` either way."""
        earlier = self._box_earlier.setdefault(label, [])
        for witness in earlier:  # a counterexample of an earlier box query inside this box answers it
            if all(a <= v <= b for v, a, b in zip(witness, lo, hi)):
                return self._found(witness, earlier, self.BOX_EARLIER)
        if self.sat is not None:  # the SAT solver first, as for single points (undecided: the search)
            answer = self.sat.changes_within((), label, (), SAT_BOX_CONFLICTS, deadline, box=(lo, hi))
            if answer:
                return self._found(self.sat.model_point(), earlier, self.BOX_EARLIER)
            if answer is not None:
                self._witness = None
                return False
        low = np.asarray(lo, dtype=np.int64)
        high = np.asarray(hi, dtype=np.int64)
        fixed = [i for i in range(len(self.sizes)) if low[i] == high[i]]
        meet = self.meets_box(lo, hi)
        start = self.nodes
        for rival in self.rivals[label]:
            left = None if max_boxes is None else max_boxes - (self.nodes - start)
            try:
                found = self._search(rival, tuple(int(x) for x in low), fixed, meet, label, deadline,
                                     bounds=(low, high), max_boxes=left)
            except OutOfBoxes:
                self._witness = None
                return None
            if found is not None:
                return self._found(found, earlier, self.BOX_EARLIER)
        self._witness = None
        return False

    def meets_box(self, lo: Sequence[int], hi: Sequence[int]) -> BoolArray:
        """:meth:`LeafTable.meets_box`, its column of each feature kept for the feature's last range (widening's
        bisection changes one range between queries: one column computed instead of all). The columns hold a
        byte per leaf and feature, an eighth of the leaf tables; they depend on the box alone, so they outlive
        :meth:`restart` without changing any answer."""
        meet: BoolArray | None = None
        for f, (a, b) in enumerate(zip(lo, hi)):
            key = (int(a), int(b))
            kept = self._meet_cols.get(f)
            if kept is None or kept[0] != key:
                kept = self._meet_cols[f] = (key, self.leaves.meets_range(f, *key))
            meet = kept[1].copy() if meet is None else np.logical_and(meet, kept[1], out=meet)
        return meet if meet is not None else np.ones(self.n_leaves, dtype=bool)

    def _search(self, rival: Rival, point: Sequence[int], fixed: list[int], meet: BoolArray, label: int,
                deadline: Deadline | None, bounds: tuple[IntArray, IntArray] | None = None,
                carve: Sequence[int] = (), max_boxes: int | None = None) -> Point | None:
        search = self.searcher(rival, point, fixed, meet, label, deadline, max_boxes)
        try:
            return search.run(None if bounds is None else (bounds[0][search.free], bounds[1][search.free]), carve)
        finally:
            self.nodes += search.boxes

    def searcher(self, rival: Rival, point: Sequence[int], fixed: list[int], meet: BoolArray, label: int,
                 deadline: Deadline | None, max_boxes: int | None = None) -> BoxSearch:
        """The search of one query and rival over the leaves ``meet`` selects (at most ``max_boxes`` expanded)."""
        fixed_set = set(fixed)
        free = np.asarray([i for i in range(len(self.sizes)) if i not in fixed_set], dtype=np.int64)
        return BoxSearch(self.leaves, self.model, rival, point, free, meet[rival.leaf_rows], label, deadline,
                         self._stop, max_boxes)

    def core_features(self, point: Sequence[int], fixed: Iterable[int]) -> set[int]:
        """After a negative :meth:`changes`: the SAT solver's core when it answered, else all the fixed features."""
        return set(fixed) if self._core is None else self._core & set(fixed)

    def model_point(self) -> Point:
        """After a positive :meth:`changes`: the counterexample found."""
        if self._witness is None:
            raise RuntimeError("model_point() is only defined after changes() answered True")
        return self._witness

    def differs(self, point: Sequence[int], features: Iterable[int]) -> set[int]:
        """After a positive :meth:`changes`: the features among ``features`` where the counterexample differs."""
        found = self.model_point()
        return {i for i in features if found[i] != point[i]}

    def restart(self) -> None:
        """Forget what the last explanation's queries found (the :class:`DecisionEngine` protocol): the regions
        they proved (which carve later searches' root boxes) and their counterexamples (tried first by later
        queries and box queries), since both choose the counterexamples returned, which must depend on one
        explanation's own queries only; and restart the SAT solver asked first, asked again. The per-feature
        leaf columns (:meth:`meets_range`'s) stay: they depend on the model only."""
        self._proven = None
        self._earlier = None
        self._box_earlier = {}
        self._sat_on = True
        if self.sat is not None:
            self.sat.restart()

    def close(self) -> None:
        """Free the SAT solver asked first, if any."""
        if self.sat is not None:
            self.sat.close()
