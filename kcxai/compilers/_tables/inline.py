"""A walk's vector operations written inline, for one number of components: the same source, no call per operation.

A counting walk is written once, generic in its vectors (:data:`~kcxai.compilers._tables.vectors.V`): a
Python number when ``K = 1``, whose ``+``, ``-`` and ``*`` run in the interpreter's loop, and a
:class:`~kcxai.compilers._tables.vectors.WeightVector` otherwise, whose operators are methods: a Python
call per operation (what it costs: docs/results.md, "The K = 8 OBDD walk"). :func:`inline_vectors`
compiles the walk again from its own source with every ``a + b``, ``a - b`` and ``a * b`` written out as
the tuple of its ``K`` entries,

    ((_a := a)[0] * (_b := b)[0], _a[1] * _b[1], ..., _a[K-1] * _b[K-1])

(each operand evaluated once, in the order the operator evaluates it), and its answer returned as the
walk's vector type; it reads its module's globals as the walk does. The nodes' values inside the walk are
plain tuples (the stores of
:class:`~kcxai.compilers._tables.base.UnitValues` hold them; only walks read them).

The rule a walk follows to be compiled so: **every binary** ``+``, ``-`` **and** ``*`` **in it is an
operation on vectors** (index arithmetic goes outside, into the table's structure). The walks' tests
count with the inlined and the written walk and compare them with enumeration for several ``K``.
"""

from __future__ import annotations

import __future__

import ast
import functools
import inspect
import textwrap
import types
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = ["inline_vectors", "VectorRuleError"]

F = TypeVar("F", bound=Callable[..., Any])

_OPERATORS = (ast.Add, ast.Sub, ast.Mult)
_AS_VECTOR = "_as_vector"


class VectorRuleError(ValueError):
    """A function given to :func:`inline_vectors` has a ``+``, ``-`` or ``*`` that is visibly not an operation on
    vectors (an operand is a constant or a list display), or one the rewriting does not write out (an augmented
    assignment ``a += b``, a negation ``-a``)."""


class _Inline(ast.NodeTransformer):
    """Rewrites every binary ``+``, ``-``, ``*`` into the tuple of its ``k`` entries, and the outermost function's
    returned values into the vector type (by ``_as_vector``, a keyword-only parameter it gains)."""

    def __init__(self, k: int, name: str) -> None:
        self.k = k
        self.name = name
        self.n_ops = 0
        self.depth = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.decorator_list = []
        if not self.depth:
            node.args.kwonlyargs.append(ast.arg(_AS_VECTOR))
            node.args.kw_defaults.append(ast.Constant(None))  # (the default is set on the function made)
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_Return(self, node: ast.Return) -> ast.AST:
        self.generic_visit(node)
        if self.depth == 1 and node.value is not None:
            node.value = ast.Call(ast.Name(_AS_VECTOR, ast.Load()), [node.value], [])
        return node

    def _refuse(self, node: ast.expr | ast.stmt, what: str) -> None:
        raise VectorRuleError(f"{self.name}: {what}; line {node.lineno} has {ast.unparse(node)!r}")

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.op, _OPERATORS):  # (on plain tuples, += would concatenate)
            self._refuse(node, "write a += b as a = a + b, so that it is written out entry by entry")
        return self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.USub):  # (a plain tuple has no negation)
            self._refuse(node, "a vector cannot be negated entry by entry here; subtract it instead")
        return self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, _OPERATORS):
            return node
        for side in (node.left, node.right):
            if isinstance(side, (ast.Constant, ast.List, ast.ListComp, ast.JoinedStr)):
                self._refuse(node, "every binary +, - and * must be an operation on vectors")
        self.n_ops += 1
        a, b = f"_vector_a{self.n_ops}", f"_vector_b{self.n_ops}"

        def entry(i: int, left: ast.expr, right: ast.expr) -> ast.expr:
            return ast.BinOp(ast.Subscript(left, ast.Constant(i), ast.Load()), node.op,
                             ast.Subscript(right, ast.Constant(i), ast.Load()))

        first = entry(0, ast.NamedExpr(ast.Name(a, ast.Store()), node.left),
                      ast.NamedExpr(ast.Name(b, ast.Store()), node.right))
        rest = [entry(i, ast.Name(a, ast.Load()), ast.Name(b, ast.Load())) for i in range(1, self.k)]
        return ast.copy_location(ast.Tuple([first, *rest], ast.Load()), node)


@functools.cache  # (bounded: one entry per walk function and K up to UNROLLED_MAX)
def inline_vectors(function: F, k: int, vector: type) -> F:
    """``function`` compiled again from its source with its vector operations written out for ``k`` entries.

    Parameters
    ----------
    function : callable
        A walk (a plain function or a method taken from its class) whose every binary ``+``, ``-`` and ``*``
        is an operation on vectors (see the module).
    k : int
        The number of entries of every vector.
    vector : type
        The walk's vector type (a ``tuple`` subclass): the function's returned values are made of it
        (``None`` stays ``None``).

    Returns
    -------
    callable
        The same function with no call per vector operation; ``function`` itself where its source cannot be
        read (the answers are the same, only slower).

    Raises
    ------
    VectorRuleError
        If an operand of a ``+``, ``-`` or ``*`` is a constant or a list display.

    Examples
    --------
    >>> from kcxai.compilers._tables.vectors import vector_type
    >>> def axpy(a, x, y):
    ...     return a * x + y
    >>> V2 = vector_type(2)
    >>> fast = inline_vectors(axpy, 2, V2)
    >>> got = fast(V2((2, 3)), V2((5, 7)), V2((1, 1)))
    >>> got, type(got).__name__, got == axpy(V2((2, 3)), V2((5, 7)), V2((1, 1))), fast is axpy
    ((11, 22), 'WeightVector2', True, False)
    """
    if function.__code__.co_freevars:  # a closure: its cells cannot be given to the new code
        return function
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
        filename = inspect.getsourcefile(function) or "<inlined>"
    except (OSError, TypeError, SyntaxError):  # (no source shipped, or not this function's)
        return function
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or tree.body[0].name != function.__name__:
        return function  # (the file changed since it was imported)
    ast.increment_lineno(tree, function.__code__.co_firstlineno - 1)
    if not _same_code(_function_code(tree, filename), function.__code__):
        return function  # (the source read is not what runs: the file changed since it was imported)
    tree = ast.fix_missing_locations(_Inline(k, function.__qualname__).visit(tree))
    code = _function_code(tree, filename)
    new = tuple.__new__

    def as_vector(r: Any) -> Any:
        return None if r is None else new(vector, r)

    compiled = types.FunctionType(code, function.__globals__, function.__name__, function.__defaults__)
    compiled.__kwdefaults__ = {**(function.__kwdefaults__ or {}), _AS_VECTOR: as_vector}
    functools.update_wrapper(compiled, function)
    return cast(F, compiled)


def _function_code(tree: ast.Module, filename: str) -> types.CodeType:
    """The code object of the one function ``tree`` defines, compiled as the package's modules are."""
    module = compile(tree, filename, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True)
    return next(c for c in module.co_consts if isinstance(c, types.CodeType))


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects run the same instructions on the same constants and names (line numbers aside),
    their nested functions' included."""
    if (a.co_code, a.co_names, a.co_varnames) != (b.co_code, b.co_names, b.co_varnames):
        return False
    nested_a = [c for c in a.co_consts if isinstance(c, types.CodeType)]
    nested_b = [c for c in b.co_consts if isinstance(c, types.CodeType)]
    plain_a = [c for c in a.co_consts if not isinstance(c, types.CodeType)]
    plain_b = [c for c in b.co_consts if not isinstance(c, types.CodeType)]
    return plain_a == plain_b and len(nested_a) == len(nested_b) and all(map(_same_code, nested_a, nested_b))
