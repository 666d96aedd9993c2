"""Boosted trees: additive ensembles of regression trees (gradient boosting, XGBoost, LightGBM).

Each class ``c`` (of ``K > 2``) has the score ``init[c] + sum`` of the leaf
values of the trees that belong to it; the model predicts the first class of
highest score. With two classes there is one score, the margin
``init + sum of all leaves``, and the second class is predicted when the margin
is positive (``ties="first"``: XGBoost, LightGBM, ``HistGradientBoosting``) or
non-negative (``ties="last"``: scikit-learn's ``GradientBoostingClassifier``,
which predicts ``raw >= 0``).

Leaf values and the initial scores are exact rationals: the libraries store
float32 (XGBoost) or float64 values, and each float is the rational it stores,
so margins are summed and compared exactly. A library sums floats, so it may
round a margin within a few ulps of zero (or of another class's score)
differently; :attr:`exactness` says so.

The model describes its scores to the compilers as data
(:meth:`BoostedTrees.additive_trees`), as :class:`~kcxai.models.RandomForest` does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError, InvalidTypeError, ModelFormatError
from kcxai._params import Options, check
from kcxai._types import Label
from kcxai.models.imports import _boosted as _import_boosted
from kcxai.models.classifier import Classifier
from kcxai.models._predict_batch import LeafScores, argmax_first_rows, signs
from kcxai._gc import gc_paused
from kcxai.functions import AdditiveTrees
from kcxai.models.forest import TreeLeaves, checked_trees, leaf_dicts, tree_over, trees_of
from kcxai.models._numbers import exact_number
from kcxai.models._numbers import lcm_of_denominators as _lcm_of_denominators
from kcxai.models._numbers import parse_fraction as _parse_fraction
from kcxai.models.tree import DecisionTree
from kcxai.space import SPACE, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike
    from kcxai._types import InstanceLike

__all__ = ["BoostedTrees", "TIES"]

#: How a two-class model breaks a zero margin: ``"first"`` class (margin > 0 for the second) or ``"last"``.
TIES = ("first", "last")


class BoostedTrees(Classifier):
    """Regression trees whose leaf values add up to class scores.

    Parameters
    ----------
    space : FeatureSpace
        Shared by all trees.
    classes : sequence
        The class labels (at least two).
    trees : sequence of DecisionTree
        Each over ``space``; only their structure is used (importers label every leaf with class 0).
    leaf_values : sequence of mappings
        Per tree, ``{leaf node id: value}`` for every reachable leaf: an exact
        number (``int``, ``Fraction``, or a float taken exactly).
    tree_class : sequence of int, optional
        The class whose score each tree adds to (``K > 2`` classes). Omit it with two
        classes: every tree adds to the margin.
    init : sequence, optional
        The initial score of each class (``K > 2``), or ``[margin]`` with two
        classes. Default zero.
    ties : {"first", "last"}, default "first"
        Two classes only: the class predicted at margin zero.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> from kcxai.models import BoostedTrees
    >>> space = FeatureSpace([Feature.numeric("x", [0.5]), Feature.categorical("y", [0, 1])])
    >>> t1 = DecisionTree(space, ["no", "yes"], Split.threshold("x", 0.5, Leaf("no"), Leaf("no")))
    >>> t2 = DecisionTree(space, ["no", "yes"], Split("y", {0: Leaf("no"), 1: Leaf("no")}))
    >>> model = BoostedTrees(space, ["no", "yes"], [t1, t2], [{1: -1.5, 2: 1}, {1: 0.25, 2: 0.75}], init=[0.5])
    >>> model.margin([0.7, 1]), model.predict([0.7, 1]), model.predict([0.2, 0])
    (Fraction(9, 4), 'yes', 'no')
    """

    model_type = "boosted_trees"

    def __init__(self, space: FeatureSpace, classes: Sequence[object], trees: Sequence[DecisionTree],
                 leaf_values: Sequence[Mapping[int, Any]], *, tree_class: Sequence[int] | None = None,
                 init: Sequence[Any] | None = None, ties: str = "first") -> None:
        check("space", space, SPACE)
        self.space = space
        self._init_classes(classes)
        k = len(self.classes)
        if k < 2:
            raise InvalidInputError(f"'classes' must have at least two labels. Got {list(self.classes)}.")
        check("ties", ties, Options(TIES))
        if ties == "last" and k > 2:
            raise InvalidInputError("ties='last' applies to two classes; with more, ties go to the first class.")
        self.ties = ties
        self.trees = checked_trees(trees, space)
        n_scores = 1 if k == 2 else k
        if tree_class is None:
            if k > 2:
                raise InvalidInputError(f"'tree_class' is required with {k} classes: the class of each tree.")
            tree_class = [0] * len(self.trees)
        tree_class = list(tree_class)
        if len(tree_class) != len(self.trees):
            raise InvalidInputError(
                f"'tree_class' must have one class index per tree ({len(self.trees)}). Got {len(tree_class)}.")
        for t, c in enumerate(tree_class):
            if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < n_scores:
                raise InvalidInputError(f"'tree_class[{t}]' must be an integer in [0, {n_scores - 1}]. Got {c!r}.")
        self.tree_class = tuple(tree_class)
        floats = False
        memo: dict[Any, tuple[Fraction, bool]] = {}

        def exact(x: Any, what: str) -> Fraction:
            nonlocal floats
            try:
                key = (type(x), x)
                hit = memo.get(key)
            except TypeError:
                hit = None
                key = None
            if hit is None:
                hit = exact_number(x, what)
                if key is not None:
                    memo[key] = hit
            floats |= hit[1]
            return hit[0]

        if init is None:
            init = [0] * n_scores
        if isinstance(init, (str, bytes)) or not isinstance(init, Sequence) or len(init) != n_scores:
            raise InvalidInputError(
                f"'init' must give {n_scores} initial score(s) ({'the margin' if k == 2 else 'one per class'}). "
                f"Got {init!r}.")
        self.init = tuple(exact(x, "'init' entries") for x in init)
        if isinstance(leaf_values, Mapping) or not isinstance(leaf_values, Sequence) \
                or len(leaf_values) != len(self.trees):
            raise InvalidInputError(f"'leaf_values' must be one mapping per tree ({len(self.trees)}).")
        values: list[tuple[Fraction, ...]] = []
        for t, (tree, lv) in enumerate(zip(self.trees, leaf_values)):
            if not isinstance(lv, Mapping):
                raise InvalidTypeError(f"'leaf_values[{t}]' must map leaf node ids to values. Got {type(lv).__name__}.")
            row = []
            for leaf in tree.leaves:
                if leaf not in lv:
                    raise InvalidInputError(f"'leaf_values[{t}]' has no value for leaf node {leaf}.")
                row.append(exact(lv[leaf], f"'leaf_values[{t}][{leaf}]'"))
            values.append(tuple(row))
        self._values = tuple(values)  # per tree, per reachable leaf (tree.leaves order)
        self.values_from_floats = floats
        self._blocks = [TreeLeaves(tree) for tree in self.trees]
        scale = _lcm_of_denominators({*self.init, *(v for row in values for v in row)})
        self._scale = scale
        self._iinit = tuple(int(x * scale) for x in self.init)
        self._ivalues = tuple(tuple(int(v * scale) for v in row) for row in values)
        self._batch: LeafScores | None = None  # predict_points' tables, built on first use

    # -- facts ---------------------------------------------------------------

    @property
    def n_trees(self) -> int:
        """Number of trees."""
        return len(self.trees)

    @property
    def n_scores(self) -> int:
        """Number of scores: 1 (the margin) with two classes, else one per class."""
        return len(self.init)

    def leaf_values(self, tree: int) -> dict[int, Fraction]:
        """The exact value of every reachable leaf of tree number ``tree``."""
        if isinstance(tree, bool) or not isinstance(tree, int) or not 0 <= tree < len(self.trees):
            raise InvalidInputError(f"'tree' must be a tree index in [0, {len(self.trees) - 1}]. Got {tree!r}.")
        return dict(zip(self.trees[tree].leaves, self._values[tree]))

    def leaf_scores(self, tree: int) -> dict[int, tuple[Fraction, ...]]:
        """Per reachable leaf of tree ``tree``, what it adds to each class's score (see :meth:`class_scores`)."""
        c = self.tree_class[tree]
        k = len(self.classes)
        out = {}
        for leaf, v in self.leaf_values(tree).items():
            row = [Fraction(0)] * k
            row[1 if k == 2 else c] = v
            out[leaf] = tuple(row)
        return out

    @property
    def base_scores(self) -> tuple[Fraction, ...]:
        """The per-class scores before any tree: ``(0, init)`` with two classes, else ``init``."""
        return (Fraction(0), self.init[0]) if len(self.classes) == 2 else self.init

    @property
    def exactness(self) -> str:
        """A sentence saying in what sense the model (and its compiled form) is exact."""
        if self.values_from_floats:
            return ("exact w.r.t. the given float leaf values: each float is taken as the rational it stores and "
                    "scores are summed and compared exactly; the library's float sums may round scores within a "
                    "few ulps of a tie differently")
        return "exact: all leaf values are rationals and scores are summed and compared exactly"

    # -- prediction ------------------------------------------------------------

    def _iscores(self, point: Sequence[int]) -> list[int]:
        s = list(self._iinit)
        for blk, vals, c in zip(self._blocks, self._ivalues, self.tree_class):
            s[c] += vals[blk.outcome(point)]
        return s

    def scores_point(self, point: Sequence[int]) -> tuple[Fraction, ...]:
        """The exact scores at a point: ``(margin,)`` with two classes, else one per class."""
        return tuple(Fraction(x, self._scale) for x in self._iscores(point))

    def margin(self, instance: InstanceLike) -> Fraction:
        """The exact margin of a two-class model at an instance (user values)."""
        if len(self.classes) != 2:
            raise InvalidInputError(f"margin() is for two classes; this model has {len(self.classes)}: use scores().")
        return self.scores_point(self.space.encode(instance))[0]

    def scores(self, instance: InstanceLike) -> tuple[Fraction, ...]:
        """The exact class scores at an instance (user values): ``(margin,)`` with two classes."""
        return self.scores_point(self.space.encode(instance))

    def predict_point(self, point: Sequence[int]) -> int:
        s = self._iscores(point)
        if len(self.classes) == 2:
            return int(s[0] > 0 or (s[0] == 0 and self.ties == "last"))
        best = 0
        for c in range(1, len(s)):
            if s[c] > s[best]:
                best = c
        return best

    def predict_points(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The class indices of many encoded points: the exact integer-scaled scores of all trees
        (``int64``, split into limbs when they could overflow), decided as :meth:`predict_point`."""
        batch = self.__dict__.get("_batch")
        if batch is None:
            batch = self._batch = LeafScores(self._iinit, [t.router for t in self.trees],
                                             [t.leaves for t in self.trees], self.tree_class, self._ivalues)
        s = batch.totals(np.asarray(points))
        if len(self.classes) == 2:
            sign = signs(s[:, 0])
            return np.asarray((sign >= 0) if self.ties == "last" else (sign > 0), dtype=np.int64)
        return argmax_first_rows(s)

    def additive_trees(self) -> AdditiveTrees:
        """The model as a sum of leaf scores (:meth:`leaf_scores`, :attr:`base_scores`), ties broken as
        :attr:`ties` says: what the compilers build its class functions from."""
        k = len(self.classes)
        slot = [1 if k == 2 else c for c in self.tree_class]
        zero = Fraction(0)
        scores = tuple(tuple(tuple(v if j == slot[t] else zero for j in range(k)) for v in vals)
                       for t, vals in enumerate(self._values))
        priority = (1, 0) if self.ties == "last" else tuple(range(k))
        return AdditiveTrees(self.space, self.trees, scores, self.base_scores, priority, "BoostedTrees")

    def with_distribution(self, distribution: DistributionLike) -> "BoostedTrees":
        space = self.space.with_distribution(distribution)
        out = BoostedTrees(space, self.classes, [tree_over(t, space) for t in self.trees],
                           [self.leaf_values(t) for t in range(len(self.trees))],
                           tree_class=self.tree_class if len(self.classes) > 2 else None, init=self.init,
                           ties=self.ties)
        out.values_from_floats = self.values_from_floats
        return out

    @classmethod
    def from_sklearn(cls, clf: Any, *, domains: Sequence[Any] | None = None,
                     feature_names: Sequence[str] | None = None,
                     distribution: DistributionLike = None) -> "BoostedTrees":
        """Import a fitted boosted classifier: scikit-learn's ``GradientBoostingClassifier`` or
        ``HistGradientBoostingClassifier``, ``xgboost.XGBClassifier`` or ``lightgbm.LGBMClassifier``.

        Predictions equal the library's (see the module docstring of
        ``kcxai.models.imports._boosted`` for how each library decides); ``domains``
        as in :meth:`kcxai.DecisionTree.from_sklearn`.

        Examples
        --------
        >>> from sklearn.ensemble import GradientBoostingClassifier
        >>> from kcxai.models import BoostedTrees
        >>> X, y = [[0, 1], [1, 1], [2, 0], [3, 0]], [0, 0, 1, 1]
        >>> gb = GradientBoostingClassifier(n_estimators=3, max_depth=1).fit(X, y)
        >>> model = BoostedTrees.from_sklearn(gb)
        >>> model.n_trees, [model.predict(x) for x in X] == list(gb.predict(X))
        (3, True)
        """
        with gc_paused():
            parts = _import_boosted.boosted_parts(clf, domains=domains, feature_names=feature_names,
                                                  distribution=distribution)
            trees = trees_of(parts)
            return cls(parts.space, parts.classes, trees, leaf_dicts(trees, parts.node_values or []),
                       tree_class=parts.tree_class, init=parts.init, ties=parts.ties)

    # -- JSON --------------------------------------------------------------------

    @gc_paused()  # millions of small containers, none in a cycle: the collector would rescan them all
    def _body_to_dict(self) -> dict[str, Any]:
        return {
            "trees": [t._body_to_dict() for t in self.trees],
            "leaf_values": [[[leaf, str(v)] for leaf, v in zip(tree.leaves, vals)]
                            for tree, vals in zip(self.trees, self._values)],
            "tree_class": list(self.tree_class),
            "init": [str(x) for x in self.init],
            "ties": self.ties,
            "values_from_floats": self.values_from_floats,
        }

    @classmethod
    @gc_paused()
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "BoostedTrees":
        trees_json = body["trees"]
        if not isinstance(trees_json, list) or not trees_json:
            raise ModelFormatError("A boosted_trees model needs a non-empty 'trees' list.")
        trees = [DecisionTree._from_body(space, classes, t) for t in trees_json]
        raw = body["leaf_values"]
        if not isinstance(raw, list):
            raise ModelFormatError("'leaf_values' must be a list with one entry per tree.")
        values = []
        for t in raw:
            lv = {}
            for item in t:
                if not isinstance(item, list) or len(item) != 2 or isinstance(item[0], bool) \
                        or not isinstance(item[0], int):
                    raise ModelFormatError(f"'leaf_values' must list [leaf node id, value]. Got {item!r}.")
                lv[item[0]] = _parse_fraction(item[1], "leaf_values")
            values.append(lv)
        init = [_parse_fraction(x, "init") for x in body["init"]]
        tree_class = body.get("tree_class")
        out = cls(space, classes, trees, values, tree_class=tree_class if len(classes) > 2 else None, init=init,
                  ties=body.get("ties", "first"))
        out.values_from_floats = bool(body.get("values_from_floats", False))
        return out

    def __repr__(self) -> str:
        return (f"BoostedTrees({len(self.trees)} trees, {self.space.n_features} features, "
                f"{len(self.classes)} classes)")
