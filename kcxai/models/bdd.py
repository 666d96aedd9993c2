"""Binary classifiers given directly as a binary decision diagram (BDD) over Boolean features.

The diagram is stored as a node table (no complement edges): node ``k``
(``k >= 2``) tests a feature and goes to ``low`` when its value is number 0 and
to ``high`` when it is number 1; references ``0`` and ``1`` are the terminals,
meaning the first and the second class. Children have smaller ids than their
parents, so the table is acyclic by construction. A diagram imported from
``dd`` is an OBDD (its variables keep dd's order along every path); the table
itself only needs to be a decision diagram, and the compilers rebuild it in
their own variable order.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidInputError, InvalidTypeError, KcxaiError, MissingDependencyError, ModelFormatError
from kcxai.models._base import Classifier
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers._builder import FunctionBuilder

__all__ = ["BddClassifier"]


def _convert(bdd: Any, u: Any, index: dict[str, int], nodes: list[tuple[int, int, int]]) -> int:
    """Append ``u``'s nodes to ``nodes`` (complement edges pushed down) and return its reference.

    Iterative, and without closures over dd functions: a reference cycle holding
    dd functions can outlive their manager, which dd reports at shutdown.
    """
    unique: dict[tuple[int, int, int], int] = {}
    memo: dict[tuple[int, bool], int] = {}

    def terminal(w: Any, neg: bool) -> int | None:
        if w == bdd.true:
            return 0 if neg else 1
        if w == bdd.false:
            return 1 if neg else 0
        return None

    t = terminal(u, False)
    if t is not None:
        return t
    stack: list[tuple[Any, bool]] = [(u, False)]
    while stack:
        w, neg = stack[-1]
        key = (int(w), neg)
        if key in memo:
            stack.pop()
            continue
        eff = neg ^ bool(w.negated)  # dd's low/high are the regular node's children
        refs = []
        pending = False
        for child in (w.low, w.high):
            r = terminal(child, eff)
            if r is None:
                r = memo.get((int(child), eff))
                if r is None:
                    stack.append((child, eff))
                    pending = True
            refs.append(r)
        if pending:
            continue
        stack.pop()
        lo, hi = refs
        if lo == hi:
            ref = lo
        else:
            node = (index[w.var], lo, hi)
            ref = unique.get(node, -1)
            if ref < 0:
                nodes.append(node)
                ref = unique[node] = len(nodes) + 1
        memo[key] = ref
    del stack, w
    return memo[(int(u), False)]


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

    def __init__(self, space: FeatureSpace, classes: Sequence[Any], nodes: Sequence[Sequence[int]], root: int) -> None:
        if not isinstance(space, FeatureSpace):
            raise InvalidTypeError(f"'space' must be a FeatureSpace. Got {type(space).__name__} instead.")
        for f in space.features:
            if f.size != 2:
                raise InvalidInputError(
                    f"A BddClassifier needs Boolean features (two values each); feature {f.name!r} has {f.size}.")
        self.space = space
        self._init_classes(classes)
        if len(self.classes) != 2:
            raise InvalidInputError(f"A BddClassifier has two classes (false, true). Got {list(self.classes)}.")
        table: list[tuple[int, int, int]] = []
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
    def from_dd(cls, u: Any, *, variables: Sequence[str] | None = None, classes: Sequence[Any] = (0, 1),
                distribution: Any = None) -> "BddClassifier":
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
        bdd = getattr(u, "bdd", None)
        if bdd is None or not hasattr(u, "negated"):
            raise InvalidTypeError(f"'u' must be a dd BDD function (dd.autoref or dd.cudd). Got {type(u).__name__}.")
        if variables is None:
            levels = bdd.var_levels
            names = sorted(levels, key=levels.get)
        else:
            if isinstance(variables, str):
                raise InvalidTypeError("'variables' must be a sequence of variable names, not one str.")
            names = [str(v) for v in variables]
        support = bdd.support(u)
        missing = sorted(set(support) - set(names))
        if missing:
            raise InvalidInputError(f"'variables' must include the support of 'u'; missing {missing}.")
        index = {n: i for i, n in enumerate(names)}
        space = FeatureSpace([Feature.categorical(n, [0, 1]) for n in names], distribution=distribution)
        nodes: list[tuple[int, int, int]] = []
        root = _convert(bdd, u, index, nodes)
        return cls(space, classes, nodes, root)

    @classmethod
    def from_dd_json(cls, path: str | os.PathLike[str], *, root: int = 0, classes: Sequence[Any] = (0, 1),
                     distribution: Any = None) -> "BddClassifier":
        """Read a BDD written by dd's ``BDD.dump(path, roots)`` (JSON); ``root`` picks one of its roots.

        The features are the file's variables in the file's order (its ``level_of_var``).
        """
        try:
            import dd.autoref
        except ImportError:  # pragma: no cover - dd is a core dependency
            raise MissingDependencyError("Reading dd's JSON needs the 'dd' package: pip install dd") from None
        from kcxai._files import read_text
        from kcxai._untrusted import loads

        bdd = dd.autoref.BDD()
        try:
            levels = loads(read_text(path, what="dd JSON file"), repr(os.fspath(path)))["level_of_var"]
            if not isinstance(levels, dict) or not all(isinstance(v, int) for v in levels.values()):
                raise ValueError("'level_of_var' must map variable names to levels")
            roots = bdd.load(os.fspath(path))
        except OSError as e:  # read_text names the path already; dd's own reading does not
            from kcxai._files import file_error

            raise (e if isinstance(e, KcxaiError) else file_error(e, path)) from None
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ModelFormatError(f"{os.fspath(path)!r} is not a BDD in dd's JSON format: {e!r}") from None
        variables = sorted(levels, key=levels.get)
        if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < len(roots):
            raise InvalidInputError(f"'root' must be an index into the {len(roots)} roots of the file. Got {root!r}.")
        return cls.from_dd(roots[root], variables=variables, classes=classes, distribution=distribution)

    def to_dd(self, bdd: Any = None) -> Any:
        """The function of the second class in a dd manager (a new ``dd.autoref.BDD`` by default)."""
        if bdd is None:
            import dd.autoref

            bdd = dd.autoref.BDD()
        names = self.space.names
        bdd.declare(*names)
        fns = [bdd.false, bdd.true]
        for f, lo, hi in self._nodes:
            fns.append(bdd.ite(bdd.var(names[f]), fns[hi], fns[lo]))
        return fns[self._root]

    # -- classifier --------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        """Number of internal nodes."""
        return len(self._nodes)

    @property
    def nodes(self) -> tuple[tuple[int, int, int], ...]:
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

    def build(self, builder: "FunctionBuilder[Any]") -> list[Any]:
        """The diagram rebuilt node by node with ``switch``; class 0 is its negation."""
        fns: list[Any] = [builder.false(), builder.true()]
        for f, lo, hi in self._nodes[: max(self._root - 1, 0)]:
            fns.append(builder.switch(f, [fns[lo], fns[hi]]))
        pos = fns[self._root]
        return [builder.neg(pos), pos]

    def with_distribution(self, distribution: Any) -> "BddClassifier":
        return BddClassifier(self.space.with_distribution(distribution), self.classes, self._nodes, self._root)

    def _body_to_dict(self) -> dict[str, Any]:
        return {"root": self._root, "nodes": [list(n) for n in self._nodes]}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Any], body: dict[str, Any]) -> "BddClassifier":
        nodes = body["nodes"]
        if not isinstance(nodes, list):
            raise ModelFormatError("A bdd model needs a 'nodes' list of [feature, low, high].")
        try:
            return cls(space, classes, nodes, body["root"])
        except InvalidInputError as e:
            raise ModelFormatError(f"Malformed bdd model: {e}") from None

    def __repr__(self) -> str:
        return f"BddClassifier({len(self._nodes)} nodes, {self.space.n_features} features)"
