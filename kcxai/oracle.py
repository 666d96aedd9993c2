"""The counting oracle: the one interface every explanation algorithm talks to.

Every probability the paper's definitions need is a ratio of weighted model
counts. For an instance ``v`` (a *point*: a tuple of value indices), a class
index ``c`` and a set ``S`` of fixed features, the oracle answers

    disagree_weight(v, c, S) = weight of { x : kappa(x) != c and x_S = v_S }

where the weight of a set of points is the sum of their weights under the
space's distribution (in exact spaces an ``int``, relative to
``space.total_weight``). Everything else follows without the classifier:

* ``error(S) = disagree_weight / total_weight`` (the paper's eq. idr),
* ``Pr(x_S = v_S) = space.consistent_weight(v, S) / total_weight``,
* ``precision(S) = 1 - disagree_weight / consistent_weight`` (eq. drs).

In a knowledge-compilation language this is "condition on ``v_S``, then count
the models of ``kappa != c``". An oracle also opens a :class:`OracleSession`,
which supports the deletion loop of Algorithm 1 incrementally: ask what the
weight would be if one feature were freed, and commit. Oracles that have
nothing better use :class:`GenericSession`.

Distributions. Counting is linear in the distribution, which an oracle sees
only as its *components* ``space.distribution.components``: pairs
``(c_k, P_k)`` of a coefficient and a product distribution
(:class:`~kcxai.distribution.ProductWeights`), the weight of a set being
``sum_k c_k P_k(set)``. A uniform or product distribution is one component; a
mixture of ``K`` products has ``K``. Every language counts all of them in one
walk of its structure, with a vector of ``K`` weights where a product has one
(:mod:`kcxai.compilers._tables.vectors`).

Capabilities beyond counting are small protocols checked with ``isinstance``:
:class:`PathOracle` (the oracle knows a decision tree's paths, so explainers
can start from a path and search over paths), :class:`BoxOracle` (the oracle
counts over *boxes*, a set of values per feature, not only the instance's own
cells: what widening an explanation's conditions and scoring a user's rule
need), :class:`ApproximateOracle` (counts are estimates holding with a
stated confidence; explanations from it are marked approximate) and
:class:`BatchOracle` (the oracle runs Algorithm 1 for many instances at once,
sharing the work that does not depend on the deletion loop: the batch runner
asks for it).

Not every engine counts. A :class:`BoundsOracle` (the ``bounded`` diagrams of
tree ensembles whose exact diagrams do not fit the budget) gives exact lower
and upper bounds on every ``disagree_weight``. A :class:`DecisionOracle` (the
SAT and branch-and-bound engines of tree ensembles) only decides *sufficiency*:
whether every point agreeing with ``v`` on ``S`` is classified ``c``, i.e.
whether ``disagree_weight(v, c, S) = 0`` (the delta = 0 case of the paper's
definitions). :func:`answers_of` tells what an oracle answers: ``"counts"``
(exact), ``"bounds"`` (exact bounds), ``"estimates"`` (certified sampling) or
``"decisions"`` (delta = 0 only); each explanation method declares which
answers it needs (:mod:`kcxai.explain._methods`).

A new language is one new module declaring a
:class:`~kcxai.compilers.Language`; the algorithms in :mod:`kcxai.explain`
never import a backend.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol, TypeGuard, Union, runtime_checkable

from kcxai.arithmetic import Bound, Probability, Weight
from kcxai.space import FeatureSpace
from kcxai._types import Point, Values

if TYPE_CHECKING:  # pragma: no cover
    from kcxai._deadline import Deadline
    from kcxai.distribution import ProductWeights
    from kcxai.models.tree import TreePath

__all__ = ["AnswersFor", "CountingOracle", "OracleSession", "SessionBase", "GenericSession", "Bound", "PathOracle",
           "ApproximateOracle", "DecisionOracle", "has_paths", "answers_of", "ANSWERS", "Point", "Decision",
           "describe_answers", "Box", "BoxOracle", "has_boxes", "full_box", "point_box", "box_weight", "BoundsOracle",
           "BoundsSession"]

#: A *box*: per feature, the bitmask of the value numbers it allows (bit ``k`` is value ``k``); the full
#: mask ``(1 << size) - 1`` leaves the feature free. The set of points ``{x : x_f in box[f] for all f}``.
Box = tuple[int, ...]

#: What an oracle can answer, from the most to the least informative: exact weights, exact lower and upper
#: bounds on them, certified estimates of them (each relevance decision right with a stated confidence), or
#: sufficiency decisions (delta = 0).
ANSWERS = ("counts", "bounds", "estimates", "decisions")


def describe_answers(answers: Iterable[str]) -> str:
    """Kinds of answers as a reader says them.

    >>> describe_answers(["counts", "estimates"])
    "exact counts or certified estimates ('sampling')"
    """
    said = {"counts": "exact counts", "bounds": "exact bounds ('bounded')",
            "estimates": "certified estimates ('sampling')", "decisions": "delta = 0 decisions ('sat', 'search')"}
    return " or ".join(said[a] for a in answers)


@runtime_checkable
class OracleSession(Protocol):
    """An oracle bound to one instance and class, with a current fixed set ``S``.

    Used by deletion loops: ``weight_if_freed(i)`` is
    ``disagree_weight(v, c, S \\ {i})`` without changing ``S``; ``free(i)``
    commits the removal. ``S`` only shrinks.
    """

    @property
    def fixed(self) -> frozenset[int]:
        """The current fixed set ``S``."""
        ...

    def weight(self) -> Weight:
        """``disagree_weight(v, c, S)`` for the current ``S``."""
        ...

    def weight_if_freed(self, feature: int) -> Weight:
        """``disagree_weight(v, c, S \\ {feature})``; ``S`` is unchanged."""
        ...

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        """Whether ``bound.holds(weight_if_freed(feature))``.

        The deletion loop only needs this decision; an oracle may decide it
        without the exact weight (e.g. by a float computation with a proven
        error bound), but the answer must be exactly right.
        """
        ...

    def free(self, feature: int) -> None:
        """Remove ``feature`` from ``S``."""
        ...


@runtime_checkable
class AnswersFor(Protocol):
    """What every oracle, counting, deciding or bounding, says of the model it answers for.

    Attributes
    ----------
    language : str
        The language or engine answering, by its name in the registry (``"dt"``, ``"sdd"``, ``"obdd"``,
        ``"sat"``, ``"bounded"``, ...). It is recorded in every explanation.
    space : FeatureSpace
        The feature space and distribution the weights refer to.
    n_classes : int
        Number of classes; class indices are ``0 .. n_classes - 1``.
    """

    language: str
    space: FeatureSpace
    n_classes: int

    def predict_point(self, point: Point) -> int:
        """The class index the model gives a point."""
        ...


@runtime_checkable
class CountingOracle(AnswersFor, Protocol):
    """Conditioning and (weighted) model counting on a compiled classifier (its attributes:
    :class:`AnswersFor`)."""

    def disagree_weight(self, point: Point, label: int, fixed: frozenset[int]) -> Weight:
        """Weight of ``{x : kappa(x) != label and x_fixed = point_fixed}``."""
        ...

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> OracleSession:
        """A deletion-loop session starting from ``fixed``."""
        ...


class SessionBase:
    """Default :meth:`OracleSession.holds_if_freed` from ``weight_if_freed``; sessions may subclass it."""

    __slots__ = ()

    def weight_if_freed(self, feature: int) -> Weight:  # pragma: no cover - abstract
        raise NotImplementedError

    def holds_if_freed(self, feature: int, bound: Bound) -> bool:
        return bound.holds(self.weight_if_freed(feature))


class GenericSession(SessionBase):
    """An :class:`OracleSession` that asks ``oracle.disagree_weight`` for every query."""

    __slots__ = ("_oracle", "_point", "_label", "_fixed")

    def __init__(self, oracle: CountingOracle, point: Point, label: int,
                 fixed: Iterable[int]) -> None:
        self._oracle = oracle
        self._point = point
        self._label = label
        self._fixed = frozenset(fixed)

    @property
    def fixed(self) -> frozenset[int]:
        return self._fixed

    def weight(self) -> Weight:
        return self._oracle.disagree_weight(self._point, self._label, self._fixed)

    def weight_if_freed(self, feature: int) -> Weight:
        return self._oracle.disagree_weight(self._point, self._label, self._fixed - {feature})

    def free(self, feature: int) -> None:
        self._fixed = self._fixed - {feature}


@runtime_checkable
class PathOracle(Protocol):
    """An oracle that answers from a decision tree's root-to-leaf paths.

    Explainers use it for ``start="path"`` and for the exact path search of the
    C-delta problems.
    """

    def path_of(self, point: Point) -> "TreePath":
        """The path ``point`` follows."""
        ...

    @property
    def paths(self) -> "tuple[TreePath, ...]":
        """The reachable paths."""
        ...


def has_paths(obj: object) -> "TypeGuard[PathOracle]":
    """Whether ``obj`` is a :class:`PathOracle`, found without reading its ``paths``.

    ``isinstance(obj, PathOracle)`` reads every attribute of the protocol on Python < 3.12
    (``hasattr``), and reading a tree's ``paths`` builds them all (quadratic in a deep chain).

    >>> from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split
    >>> tree = DecisionTree(FeatureSpace([Feature.categorical("x", [0, 1])]), [0, 1],
    ...                     Split("x", {0: Leaf(0), 1: Leaf(1)}))
    >>> has_paths(tree), has_paths(3)
    (True, False)
    """
    return callable(inspect.getattr_static(obj, "path_of", None)) and \
        inspect.getattr_static(obj, "paths", None) is not None


@runtime_checkable
class BoxOracle(CountingOracle, Protocol):
    """An oracle that counts over boxes: a set of values per feature (see :data:`Box`).

    The instance's own cells (``x_S = v_S``) are the box with ``box[f] = {v_f}``
    for ``f`` in ``S``; a widened rule ("age in (30, 52]", "workclass in
    {Private, Self-emp}") is any box. Both weights are exact (``int``) in exact
    spaces and refer to ``space.total_weight``.
    """

    def box_weights(self, box: Box, label: int) -> tuple[Weight, Weight]:
        """``(disagree, consistent)``: the weight of ``{x in box : kappa(x) != label}`` and of the box."""
        ...

    def box_weights_by_value(self, box: Box, label: int, feature: int) -> tuple[tuple[Weight, Weight], ...]:
        """Per value ``k`` of ``feature``, :meth:`box_weights` of the box with ``box[feature] = {k}``
        (whatever ``box[feature]`` is): what widening ``feature`` needs, in one query."""
        ...


def has_boxes(obj: object) -> "TypeGuard[BoxOracle]":
    """Whether ``obj`` is a :class:`BoxOracle` (an exact one: approximate oracles never are).

    >>> import kcxai
    >>> has_boxes(kcxai.compile_model(kcxai.datasets.running_example_tree(), "dt").oracle)
    True
    """
    return isinstance(obj, BoxOracle) and not isinstance(obj, ApproximateOracle)


def full_box(space: FeatureSpace) -> Box:
    """The box of the whole space (every feature free)."""
    return tuple((1 << f.size) - 1 for f in space.features)


def point_box(space: FeatureSpace, point: Sequence[int], fixed: Iterable[int]) -> Box:
    """The box ``x_S = v_S``: ``point``'s cell on the ``fixed`` features, the others free."""
    box = list(full_box(space))
    for f in fixed:
        box[f] = 1 << point[f]
    return tuple(box)


def box_weight(pw: "ProductWeights", box: Box) -> Weight:
    """The weight of a box under one product distribution: the product of its masks' weights."""
    w = pw.arith.one
    for f, mask in enumerate(box):
        w *= pw.mask_weight(f, mask)
    return w


@runtime_checkable
class ApproximateOracle(Protocol):
    """An oracle whose relevance decisions are statistical, not counted.

    Attributes
    ----------
    confidence : float
        Each decision ``holds_if_freed`` takes is right with at least this
        probability (a feature is kept when the evidence is not conclusive).
    """

    confidence: float


@runtime_checkable
class DecisionOracle(AnswersFor, Protocol):
    """An engine that decides sufficiency without counting (delta = 0 only).

    ``S`` is *sufficient* for ``(v, c)`` when every point ``x`` with
    ``x_S = v_S`` is classified ``c``: ``disagree_weight(v, c, S) = 0`` over
    every point of the space (the I-0-relevant sets, whose subset-minimal
    members are the abductive explanations). The deletion loops only need this
    decision at delta = 0, so an engine that decides it (a SAT solver, a branch
    and bound) explains models whose compiled forms do not fit in memory. Its attributes:
    :class:`AnswersFor` (``language``: ``"sat"``, ``"search"``, ...).
    """

    def decide(self, point: Point, label: int, fixed: frozenset[int], deadline: "Deadline | None") -> "Decision":
        """Whether ``fixed`` is sufficient for ``(point, label)``, with what the engine learnt.

        ``deadline`` (:class:`~kcxai._deadline.Deadline`) limits the call; hitting it raises
        :class:`~kcxai.SearchLimitError`.
        """
        ...


class BatchRow(NamedTuple):
    """One instance's result of :meth:`BatchOracle.min_idrs_batch`.

    Attributes
    ----------
    point : Point
        The instance encoded.
    label : int
        Its predicted class index.
    fixed : tuple of int
        The subset-minimal I-delta-relevant set found, sorted.
    weight : Weight
        Its exact disagreeing weight (``disagree_weight(point, label, fixed)``).
    calls : int
        The counting queries the per-instance loop (:func:`kcxai.min_idrs`) would have made.
    seconds : float
        The instance's share of the batch's time.
    """

    point: Point
    label: int
    fixed: tuple[int, ...]
    weight: Weight
    calls: int
    seconds: float


@runtime_checkable
class BatchOracle(Protocol):
    """An oracle that runs Algorithm 1 for many instances at once (the decision tree's own oracle).

    The batch runner (:mod:`kcxai._batch`) asks for it when a method declares it is Algorithm 1 in its
    default form (:attr:`kcxai.explain._methods.Method.batch`): the same sets and exact weights as the
    per-instance loop, features tried in index order, from every feature or from the instance's path.
    """

    def min_idrs_batch(self, instances: Sequence[Values], delta: Probability, start: str | None
                       ) -> "list[BatchRow | Exception] | None":
        """Per instance (in user values) its :class:`BatchRow`, or the error reading it raised; ``None``
        when the batch does not apply here (the caller then runs the loop per instance).

        ``delta`` is exact (a ``Fraction``); ``start`` is ``None`` (all features) or ``"path"``.
        """
        ...


def has_batch(obj: object) -> "TypeGuard[BatchOracle]":
    """Whether ``obj`` is a :class:`BatchOracle`.

    >>> import kcxai
    >>> has_batch(kcxai.compile_model(kcxai.datasets.running_example_tree(), "dt").oracle)
    True
    """
    return callable(inspect.getattr_static(obj, "min_idrs_batch", None))


@runtime_checkable
class BoxDecisionOracle(Protocol):
    """A decision engine that also decides the sufficiency of a box of value ranges (the branch and bound):
    what widening an abductive explanation of a tree ensemble needs."""

    def decide_box(self, box: Box, label: int, deadline: "Deadline | None", max_boxes: int | None = None
                   ) -> "BoxDecision":
        """Whether every point of ``box`` (each mask a run of consecutive values) is classified ``label``, and
        the boxes of the search that decided it; undecided (``sufficient`` ``None``) when the search would
        expand more than ``max_boxes`` (``None``: no bound)."""
        ...


class BoxDecision(NamedTuple):
    """What :meth:`BoxDecisionOracle.decide_box` answers."""

    #: Whether every point of the box gets the class; ``None``: undecided within ``max_boxes``.
    sufficient: bool | None
    #: The boxes the search expanded to answer.
    boxes: int


def has_box_decisions(obj: object) -> "TypeGuard[BoxDecisionOracle]":
    """Whether ``obj`` is a :class:`BoxDecisionOracle`."""
    return callable(inspect.getattr_static(obj, "decide_box", None))


@runtime_checkable
class BoundsSession(Protocol):
    """A bounds oracle bound to one instance and class, with a current fixed set ``S`` that only shrinks
    (the deletion loops' session, as :class:`OracleSession` for counts)."""

    @property
    def fixed(self) -> frozenset[int]:
        """The current fixed set ``S``."""
        ...

    def bounds(self) -> tuple[Weight, Weight]:
        """``(lower, upper)`` bounds on ``disagree_weight(v, c, S)``."""
        ...

    def bounds_if_freed(self, feature: int) -> tuple[Weight, Weight]:
        """The bounds for ``S \\ {feature}``; ``S`` is unchanged."""
        ...

    def free(self, feature: int) -> None:
        """Remove ``feature`` from ``S``."""
        ...


@runtime_checkable
class BoundsOracle(AnswersFor, Protocol):
    """Exact lower and upper bounds on every ``disagree_weight`` (the ``bounded`` language).

    ``lower <= disagree_weight(v, c, S) <= upper``, both exact (``int`` in exact spaces, relative to
    ``space.total_weight``): ``lower`` is the weight of the points of the cell proven to get another
    class, ``upper - lower`` the weight of those the compiled form leaves undecided. Where the whole
    interval lies on one side of a bound, the relevance decision is the exact one. Its attributes:
    :class:`AnswersFor`.
    """

    def disagree_bounds(self, point: Point, label: int, fixed: frozenset[int]) -> tuple[Weight, Weight]:
        """``(lower, upper)`` bounds on the weight of ``{x : kappa(x) != label and x_fixed = point_fixed}``."""
        ...

    def session(self, point: Point, label: int, fixed: frozenset[int]) -> BoundsSession:
        """A deletion-loop session starting from ``fixed``."""
        ...


class Decision(NamedTuple):
    """A sufficiency decision (:meth:`DecisionOracle.decide`).

    Attributes
    ----------
    sufficient : bool
        Whether every point agreeing with the instance on the fixed set gets its class.
    features : frozenset of int
        If sufficient: a sufficient subset of the fixed set (the features the proof used: a core).
        If not: the free features on which the point found (classified otherwise) differs from the
        instance; freeing only these already changes the class.
    """

    sufficient: bool
    features: frozenset[int]


#: What answers an explainer's queries: exact counts (and estimates), exact bounds, or sufficiency decisions.
Oracle = Union[CountingOracle, BoundsOracle, DecisionOracle]


def answers_of(oracle: object) -> str:
    """What ``oracle`` answers: ``"counts"``, ``"bounds"``, ``"estimates"`` or ``"decisions"`` (see
    :data:`ANSWERS`).

    >>> import kcxai
    >>> from kcxai.oracle import answers_of
    >>> tree = kcxai.datasets.running_example_tree()
    >>> [answers_of(kcxai.compile_model(tree, lang).oracle) for lang in ("dt", "sampling")]
    ['counts', 'estimates']
    """
    counts = callable(inspect.getattr_static(oracle, "disagree_weight", None))
    if callable(inspect.getattr_static(oracle, "decide", None)) and not counts:
        return "decisions"
    if callable(inspect.getattr_static(oracle, "disagree_bounds", None)) and not counts:
        return "bounds"
    if inspect.getattr_static(oracle, "confidence", None) is not None:
        return "estimates"
    return "counts"
