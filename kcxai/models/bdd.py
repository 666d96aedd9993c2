"""Binary classifiers given directly as a binary decision diagram (BDD) over Boolean features.

The diagram is stored as a node table (no complement edges): node ``k``
(``k >= 2``) tests a feature and goes to ``low`` when its value is number 0 and
to ``high`` when it is number 1; references ``0`` and ``1`` are the terminals,
meaning the first and the second class. Children have smaller ids than their
parents, so the table is acyclic by construction. A diagram imported from
``dd`` is an OBDD (its variables keep dd's order along every path); the table
itself only needs to be a decision diagram, and the compilers rebuild it in
their own variable order. Reading and writing dd's diagrams is in
:mod:`kcxai.models.imports._dd`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kcxai._errors import InvalidInputError, ModelFormatError
from kcxai._params import check
from kcxai._types import Label
from kcxai.models.classifier import Classifier
from kcxai.models.imports._dd import Node, bdd_from_dd, read_dd_json, table_to_dd
from kcxai.space import SPACE, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.functions import FunctionBuilder
    from kcxai.distribution import DistributionLike

__all__ = ["BddClassifier"]

#: A function handle of the builder a model describes itself with.
F = TypeVar("F")


class BddClassifier(Classifier):
    """A two-class classifier given as a binary decision diagram.

    Parameters
    ----------
    space : FeatureSpace
        Every feature has exactly two values; value number 0 is "false".
    classes : pair
        The labels of the false (0) and true (1) terminals.
    nodes : sequence of (feature, low, high)
        Node ``k + 2`` is ``nodes[k]``; ``low``/``high`` are references
        (``0``, ``1`` or an id smaller than the node's own).
    root : int
        The reference of the function.

    Examples
    --------
    >>> import dd.autoref
    >>> from kcxai.models import BddClassifier
    >>> bdd = dd.autoref.BDD()
    >>> bdd.declare("x", "y", "z")
    >>> u = bdd.add_expr(r"(x /\\ y) \\/ ~z")
    >>> clf = BddClassifier.from_dd(u, classes=["no", "yes"])
    >>> clf.predict([1, 1, 1]), clf.predict([0, 1, 1]), clf.predict([0, 0, 0])
    ('yes', 'no', 'yes')
    >>> clf.n_nodes
    3
    """

    model_type = "bdd"

    def __init__(self, space: FeatureSpace, classes: Sequence[object], nodes: Sequence[Sequence[int]],
                 root: int) -> None:
        check("space", space, SPACE)
        for feat in space.features:
            if feat.size != 2:
                raise InvalidInputError(
                    f"A BddClassifier needs Boolean features (two values each); feature {feat.name!r} has "
                    f"{feat.size}.")
        self.space = space
        self._init_classes(classes)
        if len(self.classes) != 2:
            raise InvalidInputError(f"A BddClassifier has two classes (false, true). Got {list(self.classes)}.")
        table: list[Node] = []
        for k, node in enumerate(nodes):
            nid = k + 2
            try:
                f, lo, hi = (int(x) for x in node)
            except (TypeError, ValueError):
                raise InvalidInputError(f"'nodes[{k}]' must be (feature, low, high). Got {node!r} instead.") from None
            if not 0 <= f < space.n_features:
                raise InvalidInputError(f"'nodes[{k}]': feature {f} is not a feature index.")
            for ref in (lo, hi):
                if not 0 <= ref < nid:
                    raise InvalidInputError(
                        f"'nodes[{k}]' (node {nid}) refers to {ref}: children must be 0, 1 or a smaller node id.")
            table.append((f, lo, hi))
        if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < len(table) + 2:
            raise InvalidInputError(f"'root' must be 0, 1 or a node id up to {len(table) + 1}. Got {root!r}.")
        self._nodes = tuple(table)
        self._root = root

    # -- dd --------------------------------------------------------------

    @classmethod
    def from_dd(cls, u: Any, *, variables: Sequence[str] | None = None, classes: Sequence[object] = (0, 1),
                distribution: DistributionLike = None) -> "BddClassifier":
        """Import a BDD built with ``dd`` (``dd.autoref`` or ``dd.cudd``).

        Parameters
        ----------
        u : dd Function
            The function of the second class.
        variables : sequence of str, optional
            The features, in order; default all variables declared in
            ``u``'s manager, by level. Must include ``u``'s support.
        classes : pair, default (0, 1)
        distribution : optional
            Passed to :class:`~kcxai.FeatureSpace`.
        """
        parts = bdd_from_dd(u, variables, distribution)
        return cls(parts.space, classes, parts.nodes, parts.root)

    @classmethod
    def from_dd_json(cls, path: str | os.PathLike[str], *, root: int = 0, classes: Sequence[object] = (0, 1),
                     distribution: DistributionLike = None) -> "BddClassifier":
        """Read a BDD written by dd's ``BDD.dump(path, roots)`` (JSON); ``root`` picks one of its roots.

        The features are the file's variables in the file's order (its ``level_of_var``).
        """
        u, variables = read_dd_json(path, root)
        return cls.from_dd(u, variables=variables, classes=classes, distribution=distribution)

    def to_dd(self, bdd: Any = None) -> Any:
        """The function of the second class in a dd manager (a new ``dd.autoref.BDD`` by default)."""
        return table_to_dd(self.space.names, self._nodes, self._root, bdd)

    # -- classifier --------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        """Number of internal nodes."""
        return len(self._nodes)

    @property
    def nodes(self) -> tuple[Node, ...]:
        """The node table: node ``k + 2`` is ``nodes[k] = (feature, low, high)``."""
        return self._nodes

    @property
    def root(self) -> int:
        """The reference of the function (0 and 1 are the terminals)."""
        return self._root

    def predict_point(self, point: Sequence[int]) -> int:
        r = self._root
        nodes = self._nodes
        while r >= 2:
            f, lo, hi = nodes[r - 2]
            r = hi if point[f] else lo
        return r

    def build(self, builder: "FunctionBuilder[F]") -> list[F]:
        """The diagram rebuilt node by node with ``switch``; class 0 is its negation."""
        fns: list[F] = [builder.false(), builder.true()]
        for f, lo, hi in self._nodes[: max(self._root - 1, 0)]:
            fns.append(builder.switch(f, [fns[lo], fns[hi]]))
        pos = fns[self._root]
        return [builder.neg(pos), pos]

    def with_distribution(self, distribution: DistributionLike) -> "BddClassifier":
        return BddClassifier(self.space.with_distribution(distribution), self.classes, self._nodes, self._root)

    def _body_to_dict(self) -> dict[str, Any]:
        return {"root": self._root, "nodes": [list(n) for n in self._nodes]}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "BddClassifier":
        nodes = body["nodes"]
        if not isinstance(nodes, list):
            raise ModelFormatError("A bdd model needs a 'nodes' list of [feature, low, high].")
        try:
            return cls(space, classes, nodes, body["root"])
        except InvalidInputError as e:
            raise ModelFormatError(f"Malformed bdd model: {e}") from None

    def __repr__(self) -> str:
        return f"BddClassifier({len(self._nodes)} nodes, {self.space.n_features} features)"
