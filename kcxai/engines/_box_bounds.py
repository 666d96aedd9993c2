"""Proven bounds on the weight a tree ensemble gives another class inside a box, by branch and bound over boxes.

For a model whose class scores are sums of tree leaf scores (an :class:`~kcxai.functions.AdditiveTrees`:
random forests, boosted trees), a *box* (:data:`kcxai.oracle.Box`: a set of values per feature) and a class
``c``, :class:`BoxBounds` bounds

    W = weight of { x in box : kappa(x) != c }

from below and above, exactly (Python ints in exact spaces, as ``space.total_weight``), and refines the
bounds until they are within a margin (:meth:`BoxBounds.bounds`) or decide a threshold
(:meth:`BoxBounds.decide`: is ``W <= t``?), or until a deadline, a number of boxes or a number of rows (leaves
met by the boxes evaluated). The instance's own cells ``x_S = v_S`` are the box with one value on each
feature of ``S``; a user's rule is any box. Every relevance test of the paper's definitions is such a
threshold: ``W <= delta * total`` (I-delta) or ``W <= (1 - p) * weight(box)`` (C-delta, precision ``p``).

The method. For each rival class ``d`` the margin ``score_c - score_d`` is a sum over trees. Over a box it lies
between the sum, over the trees, of the least and of the greatest margin of the tree's leaves that meet the
box (each pair's leaf margins scaled to exact integers, see :mod:`kcxai.engines._box_bounds_tables`). A box
where every rival's least margin still leaves ``c`` the winner (ties by the model's ``priority``) *agrees*
everywhere; a box where some rival's greatest margin beats ``c`` *disagrees* everywhere; otherwise it is split
in two on the free feature its undecided trees' leaves cut most inside it (each leaf weighed by its tree's
spread of margins in the box), at the weighted median of their boundaries (for features whose leaves hold
value sets that are not ranges, as a one-hot encoder's ``x != v``: by the set they cut most often), and each
child only looks at its parent's leaves. A tree all of whose leaves meeting a
box add the same margin is settled there: its margin joins the box's constant part. The weight of a box is the
product of its value sets' weights under each component of the distribution, summed with the mixture's
coefficients (exact). The lower bound is the weight of the boxes proven to disagree, the upper bound the box's
weight less that of the boxes proven to agree; open boxes wait, the heaviest split first, so that the
undecided weight falls fastest. A box left open although its trees are all settled (when a pair's integers
were rounded) or that is a single point (when a wide feature's leaf sets were relaxed to their hulls) is
decided by the model itself (``model.predict_points``). With no limit the search ends with no open box: the
bounds are equal, and exact.

A limit never raises: the result carries the interval reached and why the search stopped
(:attr:`WeightBounds.stopped`); the caller decides what to do with an undecided interval.

References
----------
A. H. Land and A. G. Doig, "An automatic method of solving discrete programming problems", Econometrica
28(3), 1960 (branch and bound).
H. Chen, H. Zhang, S. Si, Y. Li, D. Boning and C.-J. Hsieh, "Robustness verification of tree-based models",
NeurIPS 2019 (a tree ensemble's output bounded over a box from each tree's leaves that meet it).
J. Törnblom and S. Nadjm-Tehrani, "Formal verification of input-output mappings of tree ensembles", Science
of Computer Programming 194, 2020 (boxes of the input space refined until each is decided).
A. Izza, A. Ignatiev, N. Narodytska, M. C. Cooper and J. Marques-Silva, "Efficient explanations with
relevant sets", 2021 (the I-delta and C-delta tests these bounds decide).
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from kcxai._deadline import Deadline
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._params import NONE, POSITIVE_INT, Instance, Range, check
from kcxai.arithmetic import Probability, Weight
from kcxai.engines._box_bounds_search import Query, SearchEnd, component_weights, search
from kcxai.engines._box_bounds_tables import LeafTable, PairValues, pair_values
from kcxai.functions import AdditiveTrees
from kcxai.oracle import Box

__all__ = ["BoxBounds", "WeightBounds", "STOPS", "decides"]

#: Why a query stopped (:attr:`WeightBounds.stopped`): no box left open (the bounds are equal); the bounds
#: within the margin asked (:meth:`BoxBounds.bounds`); the threshold decided (:meth:`BoxBounds.decide`); the
#: box limit; the row limit; the deadline.
STOPS = ("exact", "margin", "decided", "max_boxes", "max_rows", "deadline")

_MARGIN = Range(numbers.Real, 0)
_THRESHOLD = Range(numbers.Real, description="a real number")
_MAX_BOXES = (NONE, POSITIVE_INT)
_DEADLINE = (NONE, Instance(Deadline, name="a Deadline"))


def decides(lower: Weight, upper: Weight, threshold: Weight | Probability) -> bool | None:
    """Whether ``W <= threshold`` for every ``W`` in ``[lower, upper]``: ``True`` (``upper <= threshold``),
    ``False`` (``lower > threshold``), or ``None`` when the threshold lies in ``[lower, upper)``.

    >>> decides(2, 3, 3), decides(2, 3, 1), decides(2, 3, 2)
    (True, False, None)
    """
    if upper <= threshold:
        return True
    if lower > threshold:
        return False
    return None


@dataclass(frozen=True)
class WeightBounds:
    """Proven bounds on ``W``, the weight of the points of a box the model classifies otherwise than ``label``.

    Weights are in the space's number system (``int`` in exact spaces) and refer to ``total_weight``, the
    weight of the whole space under its distribution: ``W / total_weight`` is the probability that a point
    drawn from the distribution falls in the box and is classified otherwise.

    Attributes
    ----------
    lower, upper : int or float
        ``lower <= W <= upper``: ``lower`` is the weight of the boxes proven to disagree, ``upper`` the box's
        weight less that of the boxes proven to agree.
    box_weight : int or float
        The weight of the box (``weight{x in box}``).
    total_weight : int or float
        The weight of the whole space.
    label : int
        The class index ``c``.
    distribution : str
        The distribution's kind (``"uniform"``, ``"product"``, ``"mixture"``).
    boxes : int
        Boxes evaluated.
    stopped : str
        Why the search stopped (one of :data:`STOPS`).
    seconds : float
        Wall-clock seconds the query took.
    rows : int
        Rows evaluated: per box evaluated, the leaves of its undecided trees that meet it (what the search's
        work is counted in, ``max_rows``).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> from kcxai.oracle import full_box
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    >>> trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)}))
    ...          for n in "ab"]
    >>> result = BoxBounds(RandomForest(space, [0, 1], trees)).bounds(full_box(space), 0)
    >>> result.lower, result.upper, result.box_weight, result.stopped
    (1, 1, 4, 'exact')
    >>> result.decides(1), result.decides(0)
    (True, False)
    """

    lower: Weight
    upper: Weight
    box_weight: Weight
    total_weight: Weight
    label: int
    distribution: str
    boxes: int
    stopped: str
    seconds: float
    rows: int = 0

    @property
    def undecided(self) -> Weight:
        """``upper - lower``: the weight of the boxes still open."""
        return self.upper - self.lower

    @property
    def is_exact(self) -> bool:
        """Whether the bounds are equal (no box was left open)."""
        return self.lower == self.upper

    def decides(self, threshold: Weight | Probability) -> bool | None:
        """Whether ``W <= threshold`` (a weight), as far as the bounds tell: ``True``, ``False``, or ``None``
        when the threshold lies in ``[lower, upper)`` (:func:`decides`)."""
        return decides(self.lower, self.upper, threshold)

    def probabilities(self) -> tuple[Probability, Probability]:
        """The bounds as probabilities of the whole space: ``lower / total_weight``, ``upper / total_weight``
        (``Fraction`` in exact spaces)."""
        if isinstance(self.total_weight, int):
            return Fraction(int(self.lower), self.total_weight), Fraction(int(self.upper), self.total_weight)
        return float(self.lower) / float(self.total_weight), float(self.upper) / float(self.total_weight)

    def to_dict(self) -> dict[str, Any]:
        """The fields and the bounds as probabilities (``lower_probability``, ``upper_probability``)."""
        low, high = self.probabilities()
        return {"lower": self.lower, "upper": self.upper, "box_weight": self.box_weight,
                "total_weight": self.total_weight, "lower_probability": low, "upper_probability": high,
                "label": self.label, "distribution": self.distribution, "boxes": self.boxes,
                "stopped": self.stopped, "seconds": self.seconds, "rows": self.rows}

    def __str__(self) -> str:
        low, high = self.probabilities()
        how = "exact" if self.is_exact else f"proven bounds, stopped: {self.stopped}"
        return (f"Pr(x in box and class != {self.label}) in [{float(low):.6g}, {float(high):.6g}] under the "
                f"{self.distribution} distribution (weights [{self.lower}, {self.upper}] of {self.total_weight}; "
                f"the box weighs {self.box_weight}); {how}, {self.boxes} boxes")


class BoxBounds:
    """Proven bounds on the weight of a box that a tree ensemble classifies otherwise (see the module docstring).

    Parameters
    ----------
    model : RandomForest, BoostedTrees or any classifier with ``additive_trees()``
        Its class scores are sums of leaf scores (:class:`~kcxai.functions.AdditiveTrees`); its
        ``predict_points`` (or ``predict_point``) decides single points. The weights are under its space's
        distribution (``model.with_distribution`` for another).

    Attributes
    ----------
    space : FeatureSpace
    n_classes : int
    table : LeafTable
        Every leaf's value sets.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> from kcxai.oracle import point_box
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1, 2]) for n in "ab"])
    >>> tree = lambda n: kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1),
    ...                                                                  2: kcxai.Leaf(1)}))
    >>> engine = BoxBounds(RandomForest(space, [0, 1], [tree("a"), tree("b")]))
    >>> box = point_box(space, (1, 1), fixed=[0])       # a = 1, b free
    >>> engine.bounds(box, 1).lower                      # b = 0 ties, and ties go to class 0
    1
    >>> engine.decide(box, 1, threshold=0).decides(0)
    False
    """

    language = "box_bounds"

    def __init__(self, model: Any) -> None:
        make = getattr(model, "additive_trees", None)
        if not callable(make):
            raise InvalidTypeError(
                "'model' must be a tree ensemble whose class scores are sums of leaf scores (a RandomForest, "
                f"BoostedTrees or a model with additive_trees()). Got {type(model).__name__} instead.")
        spec: AdditiveTrees = make()
        self.model = model
        self.space = spec.space
        self.n_classes = spec.n_classes
        self.table = LeafTable(spec)
        self._pairs: dict[tuple[int, int], PairValues] = {}
        for c in range(self.n_classes):
            for d in range(c + 1, self.n_classes):
                pv = pair_values(spec, c, d)
                self._pairs[(c, d)] = pv
                self._pairs[(d, c)] = pv.swapped(0 if spec.priority.index(d) < spec.priority.index(c) else 1)

    def pair(self, c: int, d: int) -> PairValues:
        """The leaf margins ``score_c - score_d`` (:class:`~kcxai.engines._box_bounds_tables.PairValues`)."""
        return self._pairs[(c, d)]

    def predict_points(self, points: np.ndarray) -> np.ndarray:
        """The model's class of each point (rows of value numbers)."""
        batch = getattr(self.model, "predict_points", None)
        if callable(batch):
            return np.asarray(batch(points), dtype=np.int64)
        return np.asarray([self.model.predict_point(tuple(int(v) for v in p)) for p in points], dtype=np.int64)

    def box_weight(self, box: Box) -> Weight:
        """The weight of ``box`` under the distribution (what a precision bound multiplies).

        >>> import kcxai
        >>> from kcxai.models import RandomForest
        >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1, 2])], distribution=[[1, 2, 3]])
        >>> tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("a", {0: kcxai.Leaf(0), (1, 2): kcxai.Leaf(1)}))
        >>> BoxBounds(RandomForest(space, [0, 1], [tree])).box_weight((0b110,)), space.total_weight
        (5, 6)
        """
        box = self._check_box(box)
        comps = self.space.distribution.components
        return sum((c * w for (c, _), w in zip(comps, component_weights(self.space, box))), self.space.arith.zero)

    def bounds(self, box: Box, label: int, *, margin: Weight | Probability = 0, deadline: Deadline | None = None,
               max_boxes: int | None = None, max_rows: int | None = None) -> WeightBounds:
        """Bounds on the weight of ``{x in box : kappa(x) != label}``, refined until ``upper - lower <= margin``.

        Parameters
        ----------
        box : tuple of int
            One value mask per feature (:data:`kcxai.oracle.Box`; :func:`kcxai.oracle.point_box` makes the
            instance's cells).
        label : int
            The class index ``c``.
        margin : non-negative number, default 0
            A weight (of ``space.total_weight``): stop once the bounds are this close (0: exact).
        deadline : Deadline, optional
            Stop once it has passed (the bounds reached are returned, never an error).
        max_boxes : positive int, optional
            Stop before evaluating more boxes than this (the first, the query's box, always is).
        max_rows : positive int, optional
            Stop once this many rows were evaluated (:attr:`WeightBounds.rows`; the last batch may pass it):
            work counted the same on every machine, and near the CPU time whatever the trees' sizes.

        Returns
        -------
        WeightBounds
        """
        check("margin", margin, _MARGIN)
        box, label = self._check_query(box, label, deadline, max_boxes, max_rows)
        return self._run(box, label, lambda lower, upper: upper - lower <= margin, "margin", deadline, max_boxes,
                         max_rows)

    def decide(self, box: Box, label: int, threshold: Weight | Probability, *, deadline: Deadline | None = None,
               max_boxes: int | None = None, max_rows: int | None = None) -> WeightBounds:
        """Bounds on the weight of ``{x in box : kappa(x) != label}``, refined until they decide whether it is at
        most ``threshold`` (:meth:`WeightBounds.decides`), the deadline or the box or row limit.

        ``threshold`` is a weight (of ``space.total_weight``): ``delta * space.total_weight`` for the I-delta
        test, ``(1 - precision) * self.box_weight(box)`` for a precision bound. Other parameters as
        :meth:`bounds`.
        """
        check("threshold", threshold, _THRESHOLD)
        box, label = self._check_query(box, label, deadline, max_boxes, max_rows)
        return self._run(box, label, lambda lower, upper: decides(lower, upper, threshold) is not None, "decided",
                         deadline, max_boxes, max_rows)

    def _run(self, box: Box, label: int, stop: Any, stopped: str, deadline: Deadline | None,
             max_boxes: int | None, max_rows: int | None) -> WeightBounds:
        started = time.perf_counter()
        q = Query(self, box, label)
        lower, upper, boxes, why, rows = search(q, stop, deadline, max_boxes, max_rows)
        if why == SearchEnd.STOPPED:
            why = stopped
        return WeightBounds(lower, upper, q.total_weight, self.space.total_weight, label,
                            self.space.distribution.kind, boxes, why, time.perf_counter() - started, rows)

    # -- arguments -------------------------------------------------------------

    def _check_query(self, box: Any, label: Any, deadline: Any, max_boxes: Any, max_rows: Any) -> tuple[Box, int]:
        check("deadline", deadline, _DEADLINE)
        check("max_boxes", max_boxes, _MAX_BOXES)
        check("max_rows", max_rows, _MAX_BOXES)
        check("label", label, Range(numbers.Integral, 0, self.n_classes - 1))
        return self._check_box(box), int(label)

    def _check_box(self, box: Any) -> Box:
        """``box`` as a tuple of ints, or the error naming it."""
        sizes = self.space.domain_sizes
        if isinstance(box, (str, bytes)) or not isinstance(box, Sequence) or \
                not all(isinstance(m, numbers.Integral) and not isinstance(m, bool) for m in box):
            raise InvalidTypeError(
                f"'box' must be a sequence of value masks (ints), one per feature. Got {box!r} instead.")
        if len(box) != len(sizes):
            raise InvalidInputError(
                f"'box' must have one value mask per feature ({len(sizes)}). Got {len(box)} instead.")
        for f, (m, size) in enumerate(zip(box, sizes)):
            if not 0 < int(m) < 1 << size:
                raise InvalidInputError(
                    f"'box' must allow at least one value of each feature and no value past its domain: feature "
                    f"{self.space.names[f]!r} has {size} values (masks 1 .. {(1 << size) - 1}). Got {m!r} instead.")
        return tuple(int(m) for m in box)
