"""Random forests: decision trees over one feature space that vote.

Two votings, both exact:

* ``"soft"`` (scikit-learn's ``RandomForestClassifier``): each tree gives the
  class distribution stored at the leaf an instance reaches; the forest
  predicts the first class of highest *sum* (sklearn: mean) of these
  distributions. Leaf probabilities are exact rationals and sums are compared
  exactly. An imported scikit-learn forest's leaves are the ratios of their
  training counts, ``c / w`` (recovered from the float64 ``tree_.value``, see
  :func:`~kcxai.models.imports._sklearn.leaf_probabilities`; a leaf whose
  counts do not give its floats back, or whose denominator would make the
  forest's common denominator exceed ``2**48``, keeps the floats, taken
  exactly: the engines' integer encodings grow with that denominator's bits).
  scikit-learn sums the float64 roundings of these ratios and divides by the
  number of trees ``n``; the two can predict differently only at a point where
  the two best exact sums ``R_a, R_b`` are within ``g (R_a + R_b)`` of each
  other, ``g = (n+1) u / (1 - (n+1) u)`` with ``u = 2**-53`` (each float is
  the ratio rounded once, each of the ``n - 1`` additions and the division
  round once; :attr:`RandomForest.float_margin` bounds it for the whole
  forest). In practice the rows predicted otherwise are exact ties that
  scikit-learn's float sums break (measured by
  ``benchmarks/bench_soft_vote.py``; figures in ``docs/models.md``).
* ``"hard"``: each tree votes for its leaf's class; the forest predicts the
  first class with the most votes (``argmax`` of the vote counts, as
  ``VotingClassifier(voting="hard")`` does).

A forest describes its scores to the compilers as data
(:meth:`RandomForest.additive_trees`, a :class:`~kcxai.functions.AdditiveTrees`):
the diagram compilers build it feature by feature (:mod:`kcxai.compilers._ensemble`)
or tree by tree through the threshold compiler (:mod:`kcxai.compilers._threshold`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai._params import Options, check
from kcxai._types import Label
from kcxai.models.imports import _sklearn
from kcxai.models.classifier import Classifier
from kcxai.models._predict_batch import LeafScores, argmax_first, argmax_first_rows, signs
from kcxai._gc import gc_paused
from kcxai.functions import AdditiveTrees
from kcxai.models.imports._trees import EnsembleParts
from kcxai.models._numbers import Number, check_step, exact_number, round_to, rounding_margin
from kcxai.models._numbers import lcm_of_denominators as _lcm_of_denominators
from kcxai.models._numbers import parse_fraction as _parse_fraction
from kcxai.models._tree_data import TreeParts, leaf_reached
from kcxai.models.tree import DecisionTree
from kcxai.distribution import DistributionLike
from kcxai.space import SPACE, FeatureSpace

__all__ = ["RandomForest", "VOTINGS", "TreeLeaves", "leaf_of", "tree_over", "trees_of", "leaf_dicts"]

#: The votings a :class:`RandomForest` reproduces.
VOTINGS = ("soft", "hard")


def leaf_of(tree: DecisionTree, point: Sequence[int]) -> int:
    """The node id of the leaf a point reaches."""
    a = tree.arrays
    return leaf_reached(a.feature, a.branches, a.root, point)


def trees_of(parts: EnsembleParts) -> list[DecisionTree]:
    """The trees an ensemble importer returned as arrays."""
    leaves: Sequence[Sequence[int] | None] = parts.leaves or [None] * len(parts.trees)
    return [DecisionTree._from_parts(TreeParts(parts.space, parts.classes, a, leaves=lv))
            for a, lv in zip(parts.trees, leaves)]


def leaf_dicts(trees: Sequence[DecisionTree], node_values: Sequence[Sequence[Any]]) -> list[dict[int, Any]]:
    """Per tree, ``{reachable leaf: its value}`` from values indexed by node id (a sequence, or a numpy array
    whose rows are read at the leaves only and become lists)."""
    out = []
    for tree, vals in zip(trees, node_values):
        leaves = tree.leaves
        if isinstance(vals, np.ndarray):
            out.append(dict(zip(leaves, vals[np.asarray(leaves, dtype=np.int64)].tolist())))
        else:
            out.append({leaf: vals[leaf] for leaf in leaves})
    return out


def _exact(x: Any, memo: dict[Any, tuple[Fraction, bool]], what: str) -> tuple[Fraction, bool]:
    """:func:`exact_number` with a cache per distinct value (a forest repeats a few leaf scores many times)."""
    try:
        key = (type(x), x)
        hit = memo.get(key)
    except TypeError:  # unhashable: let exact_number say what is wrong
        return exact_number(x, what)
    if hit is None:
        hit = memo[key] = exact_number(x, what)
    return hit


class TreeLeaves:
    """A tree's reachable leaves numbered in ``tree.leaves`` order (the order of its scores): the outcome of a
    point is the number of the leaf it reaches."""

    __slots__ = ("arrays", "index")

    def __init__(self, tree: DecisionTree) -> None:
        self.arrays = tree.arrays
        self.index = {leaf: k for k, leaf in enumerate(tree.leaves)}

    def leaf(self, point: Sequence[int]) -> int:
        """The node id of the leaf ``point`` reaches."""
        a = self.arrays
        return leaf_reached(a.feature, a.branches, a.root, point)

    def outcome(self, point: Sequence[int]) -> int:
        """The number of the leaf ``point`` reaches."""
        return self.index[self.leaf(point)]


class RandomForest(Classifier):
    """Decision trees over one feature space combined by soft or hard voting.

    Parameters
    ----------
    space : FeatureSpace
        Shared by all trees.
    classes : sequence
        The class labels, shared by all trees.
    trees : sequence of DecisionTree
        Each over ``space`` (equal features) with the same classes.
    voting : {"hard", "soft"}, default "hard"
        ``"hard"``: majority of the trees' classes, ties to the first class.
        ``"soft"``: highest sum of the leaves' class scores (``leaf_scores``),
        ties to the first class; this is what scikit-learn's
        ``RandomForestClassifier.predict`` does.
    leaf_scores : sequence of mappings, optional
        For ``voting="soft"``: per tree, ``{leaf node id: scores}`` with one
        exact number (``int``, ``Fraction``, or a float taken exactly) per
        class, for every reachable leaf (``tree.leaves``).

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import RandomForest
    >>> space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in ("a", "b", "c")])
    >>> trees = [DecisionTree(space, [0, 1], Split(n, {0: Leaf(0), 1: Leaf(1)})) for n in ("a", "b", "c")]
    >>> forest = RandomForest(space, [0, 1], trees)
    >>> forest.predict([1, 1, 0]), forest.predict([0, 0, 1])
    (1, 0)
    """

    model_type = "random_forest"

    def __init__(self, space: FeatureSpace, classes: Sequence[object], trees: Sequence[DecisionTree], *,
                 voting: str = "hard", leaf_scores: Sequence[Mapping[int, Sequence[Any]]] | None = None) -> None:
        check("space", space, SPACE)
        self.space = space
        self._init_classes(classes)
        check("voting", voting, Options(VOTINGS))
        self.voting = voting
        self.trees = checked_trees(trees, space)
        for t, tree in enumerate(self.trees):
            if tree.classes != self.classes:
                raise InvalidInputError(
                    f"'trees[{t}]' has classes {list(tree.classes)}; the forest's are {list(self.classes)}.")
        self._blocks = [TreeLeaves(tree) for tree in self.trees]
        k = len(self.classes)
        floats = False
        terms: list[tuple[tuple[Fraction, ...], ...]] = []
        if voting == "hard":
            if leaf_scores is not None:
                raise InvalidInputError("'leaf_scores' is only used with voting='soft'.")
            one_hot = [tuple(Fraction(int(c == d)) for c in range(k)) for d in range(k)]
            for tree in self.trees:
                lab = tree.arrays.label
                terms.append(tuple(one_hot[lab[leaf]] for leaf in tree.leaves))
        else:
            if leaf_scores is None or isinstance(leaf_scores, Mapping) or len(leaf_scores) != len(self.trees):
                raise InvalidInputError(
                    f"voting='soft' needs 'leaf_scores': one mapping per tree ({len(self.trees)}).")
            memo: dict[Any, tuple[Fraction, bool]] = {}
            row_memo: dict[tuple[Any, ...], tuple[tuple[Fraction, ...], bool]] = {}
            for t, (tree, scores) in enumerate(zip(self.trees, leaf_scores)):
                if not isinstance(scores, Mapping):
                    raise InvalidTypeError(
                        f"'leaf_scores[{t}]' must map leaf node ids to class scores. Got {type(scores).__name__}.")
                rows = []
                for leaf in tree.leaves:
                    if leaf not in scores:
                        raise InvalidInputError(f"'leaf_scores[{t}]' has no scores for leaf node {leaf}.")
                    raw = tuple(scores[leaf])
                    try:
                        hit = row_memo.get(raw)
                    except TypeError:
                        hit = None
                    if hit is None:
                        if len(raw) != k:
                            raise InvalidInputError(
                                f"'leaf_scores[{t}][{leaf}]' must have one score per class ({k}). Got {len(raw)}.")
                        ex = [_exact(x, memo, f"'leaf_scores[{t}][{leaf}]' entries") for x in raw]
                        hit = (tuple(x for x, _ in ex), any(fl for _, fl in ex))
                        try:
                            row_memo[raw] = hit
                        except TypeError:
                            pass
                    floats |= hit[1]
                    rows.append(hit[0])
                terms.append(tuple(rows))
        self.weights_from_floats = floats
        self._set_terms(tuple(terms))

    #: ``None``, or ``(step, margin)`` when the leaf scores were rounded by :meth:`rounded`.
    rounding: tuple[Fraction, Fraction] | None = None

    #: Whether the forest stands for a library that sums float64 leaf probabilities (scikit-learn's soft vote):
    #: its predictions can then differ from the library's only within :attr:`float_margin`.
    float_sums: bool = False

    @property
    def float_margin(self) -> Fraction | None:
        """For a forest that stands for float64 sums (:attr:`float_sums`): an exact bound ``m`` such that the
        library's prediction can differ from this forest's only at points where the two best summed scores
        are within ``m`` of each other; ``None`` otherwise.

        ``m = g * T`` with ``g = (n+1) u / (1 - (n+1) u)``, ``u = 2**-53``, ``n`` the number of trees and ``T``
        the sum over trees of the largest summed row of a leaf (``n`` for probabilities): each leaf's float64
        is its rational rounded once (or the rational itself), and scikit-learn's ``n - 1`` additions and its
        division by ``n`` round once each, so a class's float mean is within ``g R / n`` of its exact sum
        ``R`` over ``n`` (nonnegative terms); the float order is the exact one when ``R_a - R_b > g (R_a + R_b)``.
        """
        if not self.float_sums or self.rounding is not None:
            return None
        u = Fraction(1, 2**53)
        k = len(self._terms) + 1
        g = k * u / (1 - k * u)
        return g * sum((max(sum(row) for row in t) for t in self._terms), Fraction(0))

    def _set_terms(self, terms: tuple[tuple[tuple[Fraction, ...], ...], ...]) -> None:
        self._terms = terms
        # keyed by object identity: leaf scores repeat a few shared Fraction objects, and hashing a
        # Fraction cost 1.6 s on a 20-tree adult forest
        rows = {id(row): row for t in terms for row in t}
        distinct = {id(x): x for row in rows.values() for x in row}
        scale = _lcm_of_denominators(distinct.values())
        scaled = {k: tuple(int(x * scale) for x in row) for k, row in rows.items()}
        self._iterms = tuple(tuple(scaled[id(row)] for row in t) for t in terms)
        self._batch: LeafScores | None = None  # predict_points' tables, built on first use

    def rounded(self, step: Number) -> "RandomForest":
        """A soft-voting copy with every leaf score rounded to the nearest multiple of ``step``.

        A *different classifier*, compiled exactly in its own right, for
        forests whose exact soft vote is too large to compile. Its
        :attr:`rounding` is ``(step, margin)``: predictions can differ from
        this forest's only where its two best summed scores are within
        ``margin``. See :meth:`kcxai.models.LinearClassifier.rounded`.
        """
        if self.voting != "soft":
            raise InvalidInputError("rounded() applies to soft voting; hard votes are already integers.")
        q = check_step(step)
        out = self._shallow_copy()
        terms = tuple(tuple(tuple(round_to(x, q) for x in row) for row in t) for t in self._terms)
        zeros = [Fraction(0)] * len(self.classes)
        margin = rounding_margin(self._terms, terms, zeros, zeros)
        out.rounding = (q, margin + (self.rounding[1] if self.rounding else 0))
        out._set_terms(terms)
        return out

    @property
    def exactness(self) -> str:
        """A sentence saying in what sense the model (and its compiled form) is exact."""
        if self.rounding is not None:
            step, margin = self.rounding
            return (f"leaf scores rounded to multiples of {step} by rounded(): a different classifier, compiled "
                    f"exactly; its predictions can differ from the unrounded forest's only where that forest's "
                    f"two best summed scores are within {margin} ({float(margin):.3g}) of each other")
        if self.voting == "hard":
            return "exact: votes are counted exactly"
        bound = self.float_margin
        if bound is not None:
            kept = ("; leaves whose counts do not give back their float64 values (fractional weights) or whose "
                    "denominators would make the forest's common denominator larger than 2**48 keep those floats, "
                    "taken exactly" if self.weights_from_floats else "")
            return (f"exact rationals: each leaf's class probabilities are the ratios of its training counts, "
                    f"recovered from scikit-learn's float64 values{kept}; sums are compared exactly. scikit-learn "
                    f"sums the float64 values and can predict another class only where the two best exact sums "
                    f"are within {bound} ({float(bound):.3g}) of each other")
        if self.weights_from_floats:
            return ("exact w.r.t. the given float leaf scores: each float is taken as the rational it stores and "
                    "sums are compared exactly; a float-arithmetic implementation may round near-ties differently")
        return "exact: all leaf scores are rationals and sums are compared exactly"

    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return len(self.trees)

    def leaf_scores(self, tree: int) -> dict[int, tuple[Fraction, ...]]:
        """The exact class scores of every reachable leaf of tree number ``tree`` (one-hot for hard voting)."""
        if not isinstance(tree, int) or not 0 <= tree < len(self.trees):
            raise InvalidInputError(f"'tree' must be a tree index in [0, {len(self.trees) - 1}]. Got {tree!r}.")
        return dict(zip(self.trees[tree].leaves, self._terms[tree]))

    def scores_point(self, point: Sequence[int]) -> tuple[Fraction, ...]:
        """The exact summed class scores (votes, or summed leaf probabilities) at a point."""
        s = [Fraction(0)] * len(self.classes)
        for blk, t in zip(self._blocks, self._terms):
            row = t[blk.outcome(point)]
            s = [a + b for a, b in zip(s, row)]
        return tuple(s)

    def predict_point(self, point: Sequence[int]) -> int:
        s = [0] * len(self.classes)
        for blk, t in zip(self._blocks, self._iterms):
            row = t[blk.outcome(point)]
            for c, x in enumerate(row):
                s[c] += x
        return argmax_first(s)

    def predict_points(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The class indices of many encoded points: the exact summed integer-scaled scores (or vote
        counts) of all trees, first class of the highest, as :meth:`predict_point` decides."""
        batch = self.__dict__.get("_batch")
        k = len(self.classes)
        if k == 1:
            return np.zeros(len(points), dtype=np.int64)
        if batch is None:
            # each class's score minus class 0's: the same order (ties included), one column fewer to sum
            memo: dict[int, tuple[int, ...]] = {}  # rows are shared objects (see _set_terms)
            diffs = [[memo.get(id(r)) or memo.setdefault(id(r), tuple(r[c] - r[0] for c in range(1, k))) for r in t]
                     for t in self._iterms]
            batch = self._batch = LeafScores([0] * (k - 1), [t.router for t in self.trees],
                                             [t.leaves for t in self.trees], [-1] * len(self.trees), diffs)
        s = batch.totals(np.asarray(points))
        if k == 2:
            return np.asarray(signs(s[:, 0]) > 0, dtype=np.int64)
        return argmax_first_rows(np.concatenate([np.zeros_like(s[:, :1]), s], axis=1))

    def additive_trees(self) -> AdditiveTrees:
        """The forest as a sum of leaf scores (one-hot votes for hard voting), ties to the first class: what the
        compilers build its class functions from (see the module docstring)."""
        k = len(self.classes)
        return AdditiveTrees(self.space, self.trees, self._terms, (Fraction(0),) * k, tuple(range(k)),
                             f"RandomForest ({self.voting} voting)")

    def with_distribution(self, distribution: DistributionLike) -> "RandomForest":
        space = self.space.with_distribution(distribution)
        scores = None if self.voting == "hard" else [self.leaf_scores(t) for t in range(len(self.trees))]
        out = RandomForest(space, self.classes, [tree_over(t, space) for t in self.trees], voting=self.voting,
                           leaf_scores=scores)
        out.weights_from_floats = self.weights_from_floats
        out.rounding = self.rounding
        out.float_sums = self.float_sums
        return out

    @classmethod
    def from_sklearn(cls, clf: Any, *, domains: Sequence[Any] | None = None,
                     feature_names: Sequence[str] | None = None, distribution: DistributionLike = None,
                     voting: str = "soft") -> "RandomForest":
        """Import a fitted scikit-learn ``RandomForestClassifier`` (or ``ExtraTreesClassifier``).

        ``voting="soft"`` (default) reproduces ``clf.predict`` (highest mean of
        the trees' leaf class probabilities: the exact ratios of the leaves'
        training counts, or their floats where those do not fit, see the module
        docstring; scikit-learn's float64 sums can differ only within
        :attr:`float_margin`); ``"hard"`` is the majority of the trees'
        predicted classes. ``domains`` as in
        :meth:`kcxai.DecisionTree.from_sklearn`; without it a feature's
        intervals are cut by the thresholds of all trees.
        """
        check("voting", voting, Options(VOTINGS))
        with gc_paused():
            parts = _sklearn.forest_parts(clf, domains=domains, feature_names=feature_names,
                                          distribution=distribution, soft=voting == "soft")
            return cls._of_sklearn_parts(parts)

    @classmethod
    def _of_sklearn_parts(cls, parts: EnsembleParts) -> "RandomForest":
        """The forest of a scikit-learn importer's parts: soft voting (:attr:`float_sums`) when they carry leaf
        probabilities (:func:`~kcxai.models.imports._sklearn.leaf_probabilities`), else hard voting."""
        trees = trees_of(parts)
        if parts.node_values is None:
            return cls(parts.space, parts.classes, trees, voting="hard")
        out = cls(parts.space, parts.classes, trees, voting="soft", leaf_scores=leaf_dicts(trees, parts.node_values))
        out.float_sums = True
        return out

    # -- JSON --------------------------------------------------------------

    @gc_paused()  # millions of small containers, none in a cycle: the collector would rescan them all
    def _body_to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"voting": self.voting, "trees": [t._body_to_dict() for t in self.trees]}
        if self.voting == "soft":
            body["leaf_scores"] = [[[leaf, [str(x) for x in row]] for leaf, row in zip(tree.leaves, t)]
                                   for tree, t in zip(self.trees, self._terms)]
            body["weights_from_floats"] = self.weights_from_floats
            if self.float_sums:
                body["float_sums"] = True
            if self.rounding is not None:
                body["rounding"] = [str(x) for x in self.rounding]
        return body

    @classmethod
    @gc_paused()
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "RandomForest":
        trees_json = body["trees"]
        if not isinstance(trees_json, list) or not trees_json:
            raise ModelFormatError("A random_forest model needs a non-empty 'trees' list.")
        trees = [DecisionTree._from_body(space, classes, t) for t in trees_json]
        voting = body.get("voting")
        if voting not in VOTINGS:
            raise ModelFormatError(f"A random_forest model needs 'voting' in {list(VOTINGS)}. Got {voting!r}.")
        scores = None
        if voting == "soft":
            raw = body["leaf_scores"]
            if not isinstance(raw, list):
                raise ModelFormatError("'leaf_scores' must be a list with one entry per tree.")
            scores = []
            for t in raw:
                tree_scores = {}
                for leaf, row in t:
                    if isinstance(leaf, bool) or not isinstance(leaf, int):
                        raise ModelFormatError(f"'leaf_scores' must list [leaf node id, scores]. Got {leaf!r}.")
                    tree_scores[leaf] = [_parse_fraction(x, "leaf_scores") for x in row]
                scores.append(tree_scores)
        out = cls(space, classes, trees, voting=voting, leaf_scores=scores)
        out.weights_from_floats = bool(body.get("weights_from_floats", False))
        out.float_sums = bool(body.get("float_sums", False))
        raw = body.get("rounding")
        if raw is not None:
            if not isinstance(raw, list) or len(raw) != 2:
                raise ModelFormatError(f"'rounding' must be [step, margin]. Got {raw!r}.")
            out.rounding = (_parse_fraction(raw[0], "rounding"), _parse_fraction(raw[1], "rounding"))
        return out

    def __repr__(self) -> str:
        return (f"RandomForest({len(self.trees)} trees, {self.voting} voting, {self.space.n_features} features, "
                f"{len(self.classes)} classes)")


def checked_trees(trees: object, space: FeatureSpace) -> tuple[DecisionTree, ...]:
    """An ensemble's trees, validated (a non-empty sequence of trees over the features of ``space``) and
    moved onto ``space`` (its distribution)."""
    if isinstance(trees, DecisionTree) or not isinstance(trees, Sequence) or not trees:
        raise InvalidTypeError(f"'trees' must be a non-empty sequence of DecisionTree. Got {trees!r} instead.")
    for t, tree in enumerate(trees):
        if not isinstance(tree, DecisionTree):
            raise InvalidTypeError(f"'trees[{t}]' must be a DecisionTree. Got {type(tree).__name__} instead.")
        if tree.space.features != space.features:
            raise InvalidInputError(f"'trees[{t}]' is over other features than 'space'.")
    return tuple(tree if tree.space == space else tree_over(tree, space) for tree in trees)


def tree_over(tree: DecisionTree, space: FeatureSpace) -> DecisionTree:
    """The same tree over another space with the same features (another distribution)."""
    a = tree.arrays
    return DecisionTree._from_arrays(space, tree.classes, list(a.feature), list(a.label), list(a.branches),
                                     root=a.root, validate=False, leaves=tree.leaves)
