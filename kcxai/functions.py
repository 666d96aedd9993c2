"""What a model describes itself with: the :class:`FunctionBuilder` protocol, or its scores as data.

A model says "kappa(x) = c" once, as Boolean functions built from literals
``x_f in E`` (its ``build(builder)``), and every compiler (:mod:`kcxai.compilers`)
implements this protocol on its own backend. The protocol lives here, below both,
so that models depend on it and never on a compiler.

A model whose class scores add up describes them as data instead, and the
compilers build its class functions:

* :class:`AdditiveScores` (``additive_scores()``): one term per feature and value
  (linear classifiers, naive Bayes); the threshold compiler
  (:mod:`kcxai.compilers._threshold`) builds the functions through the builder;
* :class:`AdditiveTrees` (``additive_trees()``): sums of tree leaf scores (random
  forests, boosted trees); the diagram compilers build their diagram feature by
  feature (:mod:`kcxai.compilers._ensemble`), or through the builder with the
  threshold compiler (``construction="builder"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol, TypeVar, runtime_checkable

from kcxai.space import FeatureSpace

__all__ = ["FunctionBuilder", "AdditiveScores", "AdditiveTrees", "TreeNodes", "TreeStructure"]

F = TypeVar("F")


@runtime_checkable
class FunctionBuilder(Protocol[F]):
    """Boolean functions over the points of ``space``: what a model may use to describe itself.

    Functions are opaque handles of the backend (SDD nodes, BDD nodes, bitsets,
    ...); a model combines them only through these methods. A function need only
    be right on the points of feature space (valid encodings of values).

    Attributes
    ----------
    space : FeatureSpace
        The feature space the functions are over.
    """

    space: FeatureSpace

    def true(self) -> F:
        """The function true on every point."""
        ...

    def false(self) -> F:
        """The function true on no point."""
        ...

    def value_in(self, feature: int, mask: int) -> F:
        """``x_feature in E`` where bit ``k`` of ``mask`` is value number ``k``."""
        ...

    def conj(self, a: F, b: F) -> F:
        """``a and b``."""
        ...

    def disj(self, a: F, b: F) -> F:
        """``a or b``."""
        ...

    def neg(self, a: F) -> F:
        """``not a`` (within feature space: valid points only)."""
        ...

    def switch(self, feature: int, cases: Sequence[F]) -> F:
        """``OR_k (x_feature = k and cases[k])``: branch on a feature's value."""
        ...


class TreeNodes(Protocol):
    """A decision tree's node arrays, as a description reads them (:class:`kcxai.models.tree.TreeArrays`)."""

    @property
    def feature(self) -> Sequence[int]:
        """The feature tested at each node, ``-1`` at a leaf."""
        ...

    @property
    def branches(self) -> Sequence[Sequence[tuple[int, int]]]:
        """Per node, its edges ``(mask of values, child)``."""
        ...

    @property
    def root(self) -> int:
        """The root's node id."""
        ...


class TreeStructure(Protocol):
    """What a description reads of a decision tree: its node arrays and its reachable leaves."""

    @property
    def arrays(self) -> TreeNodes:
        """The node arrays."""
        ...

    @property
    def leaves(self) -> Sequence[int]:
        """The node ids of the reachable leaves, in the order of the tree's scores."""
        ...


@dataclass(frozen=True)
class AdditiveScores:
    """A classifier whose class scores add one term per feature: ``kappa(x)`` is the class of highest
    ``base[c] + sum_f terms[f][x_f][c]`` (with ``product=True``: ``base[c] * prod_f terms[f][x_f][c]``, all
    positive), ties won by the class listed first in ``priority``.

    Linear classifiers and naive Bayes describe themselves so (their ``additive_scores()``); the numbers
    are exact rationals.

    Attributes
    ----------
    space : FeatureSpace
    terms : tuple
        Per feature, per value, one ``Fraction`` per class.
    base : tuple of Fraction
        The class scores before any feature (intercepts, priors).
    priority : tuple of int
        Every class index once: among classes of equal highest score, the first listed here wins.
    product : bool
        Whether the terms multiply (positive probabilities) instead of adding up.
    name : str
        What the model is, for messages.

    Examples
    --------
    >>> from fractions import Fraction
    >>> import kcxai
    >>> from kcxai.models import LinearClassifier
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    >>> spec = LinearClassifier.from_coefficients(space, [1, 2], Fraction(-3, 2)).additive_scores()
    >>> spec.terms[1]  # feature b: per value, the two classes' terms
    ((Fraction(0, 1), Fraction(0, 1)), (Fraction(0, 1), Fraction(2, 1)))
    >>> spec.base, spec.priority, spec.product
    ((Fraction(0, 1), Fraction(-3, 2)), (0, 1), False)
    """

    space: FeatureSpace
    terms: tuple[tuple[tuple[Fraction, ...], ...], ...]
    base: tuple[Fraction, ...]
    priority: tuple[int, ...]
    product: bool = False
    name: str = "additive scores"

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.base)


@dataclass(frozen=True)
class AdditiveTrees:
    """A classifier whose class scores are sums of tree leaf scores: ``kappa(x)`` is the class of highest
    ``base[c] + sum_t scores[t][leaf_t(x)][c]``, ties won by the class listed first in ``priority``.

    Soft and hard voting forests and boosted trees describe themselves so (their ``additive_trees()``);
    the scores are exact rationals.

    Attributes
    ----------
    space : FeatureSpace
    trees : tuple of DecisionTree
        Each over ``space``; only their structure (``paths`` and ``leaves``) is read.
    scores : tuple
        Per tree, per reachable leaf (in ``tree.leaves`` order), one ``Fraction`` per class.
    base : tuple of Fraction
        The class scores before any tree.
    priority : tuple of int
        Every class index once: among classes of equal highest score, the first listed here wins
        (``(0, 1, ..., K-1)`` for "the first class", as numpy's ``argmax``).
    name : str
        What the model is, for messages (e.g. ``"RandomForest (soft voting)"``).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.models import RandomForest
    >>> space = kcxai.FeatureSpace([kcxai.Feature.categorical(n, [0, 1]) for n in "ab"])
    >>> trees = [kcxai.DecisionTree(space, [0, 1], kcxai.Split(n, {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)}))
    ...          for n in "ab"]
    >>> spec = RandomForest(space, [0, 1], trees).additive_trees()
    >>> spec.scores[0], spec.base, spec.priority
    (((Fraction(0, 1), Fraction(1, 1)), (Fraction(1, 1), Fraction(0, 1))), (Fraction(0, 1), Fraction(0, 1)), (0, 1))
    """

    space: FeatureSpace
    trees: tuple[Any, ...]  # the DecisionTrees (typed loosely: this module sits below kcxai.models)
    scores: tuple[tuple[tuple[Fraction, ...], ...], ...]
    base: tuple[Fraction, ...]
    priority: tuple[int, ...]
    name: str = "tree ensemble"

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return len(self.base)
