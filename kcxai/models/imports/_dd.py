"""Interchange with the ``dd`` package: BDDs read from dd functions and dd's JSON, and written back.

:class:`~kcxai.models.BddClassifier` stores a node table (no complement
edges); dd's diagrams have complement edges, pushed down here on import. The
class methods :meth:`~kcxai.models.BddClassifier.from_dd`,
:meth:`~kcxai.models.BddClassifier.from_dd_json` and
:meth:`~kcxai.models.BddClassifier.to_dd` call these functions; this module
does not import the class.

Examples
--------
>>> import dd.autoref
>>> bdd = dd.autoref.BDD()
>>> bdd.declare("x", "y")
>>> parts = bdd_from_dd(bdd.add_expr(r"x /\\ ~y"), None, None)
>>> parts.space.names, parts.nodes, parts.root
(('x', 'y'), [(1, 1, 0), (0, 0, 2)], 3)
>>> table_to_dd(parts.space.names, parts.nodes, parts.root, bdd) == bdd.add_expr(r"x /\\ ~y")
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from kcxai._errors import InvalidInputError, InvalidTypeError, MissingDependencyError, ModelFormatError
from kcxai.space import Feature, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.distribution import DistributionLike

__all__ = ["BddParts", "Node", "bdd_from_dd", "read_dd_json", "table_to_dd"]

#: A node of the table: ``(feature, low, high)``, children as references (0, 1 or a smaller node id).
Node = tuple[int, int, int]


class BddParts(NamedTuple):
    """The constructor arguments of a :class:`~kcxai.models.BddClassifier` read from dd (the classes aside)."""

    space: FeatureSpace
    nodes: list[Node]
    root: int


def _convert(bdd: Any, u: Any, index: dict[str, int], nodes: list[Node]) -> int:
    """Append ``u``'s nodes to ``nodes`` (complement edges pushed down) and return its reference.

    Iterative, and without closures over dd functions: a reference cycle holding
    dd functions can outlive their manager, which dd reports at shutdown.
    """
    unique: dict[Node, int] = {}
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
        refs: list[int] = []
        pending = False
        for child in (w.low, w.high):
            r = terminal(child, eff)
            if r is None:
                r = memo.get((int(child), eff))
            if r is None:
                stack.append((child, eff))
                pending = True
            else:
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


def bdd_from_dd(u: Any, variables: Sequence[str] | None, distribution: DistributionLike) -> BddParts:
    """The node table of a dd function, over ``variables`` (default: all of its manager's, by level).

    See :meth:`kcxai.models.BddClassifier.from_dd`.
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
    nodes: list[Node] = []
    root = _convert(bdd, u, index, nodes)
    return BddParts(space, nodes, root)


def read_dd_json(path: str | os.PathLike[str], root: int) -> tuple[Any, list[str]]:
    """Root number ``root`` of a file written by dd's ``BDD.dump`` and the file's variables in its order.

    See :meth:`kcxai.models.BddClassifier.from_dd_json`.
    """
    try:
        # dd loads (about 0.14 s) when a dd BDD is read or built, not with kcxai
        import dd.autoref
    except ImportError:  # pragma: no cover - dd is a core dependency
        raise MissingDependencyError("Reading dd's JSON needs the 'dd' package: pip install dd") from None
    if not os.fspath(path).lower().endswith(".json"):
        # dd's load() unpickles a file named *.p; kcxai never unpickles files.
        raise ModelFormatError(f"'path' must be a dd JSON file, named *.json. Got {os.fspath(path)!r}.")
    bdd = dd.autoref.BDD()
    try:
        with open(path, encoding="utf-8") as fh:
            levels = json.load(fh)["level_of_var"]
        roots = bdd.load(os.fspath(path))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ModelFormatError(f"{os.fspath(path)!r} is not a BDD in dd's JSON format: {e!r}") from None
    if not isinstance(roots, list):
        raise ModelFormatError(f"{os.fspath(path)!r} names its roots; kcxai reads a list of roots "
                               "(dump them with BDD.dump(path, [u, ...])).")
    variables = sorted(levels, key=levels.get)
    if isinstance(root, bool) or not isinstance(root, int) or not 0 <= root < len(roots):
        raise InvalidInputError(f"'root' must be an index into the {len(roots)} roots of the file. Got {root!r}.")
    return roots[root], variables


def table_to_dd(names: Sequence[str], nodes: Sequence[Node], root: int, bdd: Any = None) -> Any:
    """The function of reference ``root`` in a dd manager (a new ``dd.autoref.BDD`` by default)."""
    if bdd is None:
        # dd loads (about 0.14 s) when a dd BDD is read or built, not with kcxai
        import dd.autoref

        bdd = dd.autoref.BDD()
    bdd.declare(*names)
    fns = [bdd.false, bdd.true]
    for f, lo, hi in nodes:
        fns.append(bdd.ite(bdd.var(names[f]), fns[hi], fns[lo]))
    return fns[root]
