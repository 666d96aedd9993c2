"""The SDD language (``"sdd"``): sentential decision diagrams through PySDD.

The model's class functions are built in one PySDD manager over the Boolean
encoding of :mod:`kcxai.compilers._encoding`. The vtree keeps each feature's
variables together: every block is the set of leaves of one vtree node (a
balanced vtree over the block's variables), and the blocks are arranged by
the ``vtree`` option in the feature ``order``. Vtree search (PySDD's
minimisation) is off: it would split blocks, and it is slow. The SDD is then
read feature by feature (nodes inside a block become value sets) into a table
on which every query is an exact weighted count with Python integers
(:mod:`kcxai.compilers._tables.wmc`): PySDD's ``model_count`` / ``global_model_count``
(64-bit, wrapping silently) and its WMC (a C double) are never used.

Options
-------
order : "auto", "dfs", "index" or a sequence of features, default "auto"
    The order of the feature blocks in the vtree (see :mod:`kcxai.compilers._encoding`).
    ``"auto"`` takes the order CUDD's group sifting finds for the model's OBDD
    (:func:`kcxai.compilers.obdd.sifted_order`) when ``dd.cudd`` imports and that
    OBDD stays within the limits, else ``"dfs"``; ``stats["order_from_obdd"]``
    says which. (Sizes under both orders: ``docs/results.md``.)
vtree : "auto", "balanced", "right" or "left", default "auto"
    The shape of the vtree over the blocks: balanced, right-linear (an OBDD
    order of blocks) or left-linear. ``"auto"``: balanced, except right-linear
    for the ``"ensemble"`` construction.
construction : "auto", "ensemble" or "builder", default "auto"
    ``"ensemble"`` (the default for random forests and boosted trees): the
    ensemble's multi-valued diagram is built feature by feature
    (:mod:`kcxai.compilers._ensemble`), in the order the model's trees suggest
    (``order="auto"``), then converted node by node into PySDD over a vtree
    in that order. ``"builder"``: the model's ``build`` through PySDD's apply.
encoding : "auto", "order", "onehot" or "log", default "auto"
max_nodes : int or None, default 2,000,000
    Limit on the live SDD nodes while building, and on the exported diagram.
max_seconds : float or None, default 300
    Limit on the whole compilation's wall-clock time (choosing the order,
    building, export).
max_memory : int or None, default 4 GiB
    Limit on the growth of the process's resident memory, in bytes.

The limits are checked at every operation (see :mod:`kcxai.compilers._limits`);
one PySDD operation cannot be interrupted, so near ``max_nodes`` large applies are
taken in steps with the node count read between them (:mod:`kcxai.compilers._sdd_steps`). When sifting the OBDD for the
``"auto"`` order hits ``max_nodes``, the ``"dfs"`` order is used instead;
when it hits the time or memory limit, the compilation stops.
"""

from __future__ import annotations

import importlib
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from kcxai._errors import InvalidTypeError, MissingDependencyError
from kcxai.compilers._encoding import Encoding
from kcxai.compilers._ensemble import BuiltEnsemble, build_ensemble
from kcxai.compilers._limits import Guard, LimitHit, advice
from kcxai.compilers._options import VTREES, SddOptions
from kcxai.compilers._orders import feature_order
from kcxai.compilers._sdd_steps import SteppedApply
from kcxai.compilers._sdd_types import SddManager, SddNode, SddVtree
from kcxai.compilers._stats import SddStats
from kcxai.compilers._tables.wmc import (
    FALSE,
    TRUE,
    DiagramOracle,
    VtreeTable,
    check_partition,
    recursion,
)
from kcxai.compilers._tables.vtree import NodeData
from kcxai.compilers._threshold import class_functions, exclusive_branches
from kcxai.compilers.builder import DiagramBuilder
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.obdd import _sifted_order

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["compile", "DEFAULTS", "SddOptions", "SddStats", "SddBuilder", "VTREES"]

_T = TypeVar("_T")

#: Default options (see :class:`~kcxai.compilers._options.SddOptions`).
DEFAULTS: dict[str, Any] = SddOptions.defaults()


def vtree_text(blocks: Sequence[Sequence[int]], shape: str) -> str:
    """A ``.vtree`` file: ``shape`` over the blocks, each block balanced over its variables (1-based)."""
    lines: list[str] = []

    def leaf(v: int) -> int:
        lines.append(f"L {len(lines)} {v}")
        return len(lines) - 1

    def internal(a: int, b: int) -> int:
        lines.append(f"I {len(lines)} {a} {b}")
        return len(lines) - 1

    def build(items: Sequence[_T], how: str, make: Callable[[_T], int]) -> int:
        if len(items) == 1:
            return make(items[0])
        if how == "right":
            return internal(make(items[0]), build(items[1:], how, make))
        if how == "left":
            return internal(build(items[:-1], how, make), make(items[-1]))
        h = len(items) // 2
        return internal(build(items[:h], how, make), build(items[h:], how, make))

    build(list(blocks), shape, lambda blk: build(list(blk), "balanced", leaf))
    return f"vtree {len(lines)}\n" + "\n".join(lines) + "\n"


class SddBuilder(DiagramBuilder[SddNode]):
    """A :class:`~kcxai.compilers.builder.FunctionBuilder` making PySDD nodes.

    Functions are ``SddNode`` objects over the variables ``1 .. n`` (variable
    ``i`` of the :class:`~kcxai.compilers._encoding.Encoding` is SDD variable
    ``i + 1``); they are right on valid assignments.
    """

    def __init__(self, mgr: SddManager, enc: Encoding, guard: Guard | None = None) -> None:
        super().__init__(enc, guard)
        self.mgr = mgr
        #: Near ``max_nodes``, large applies are taken in steps with a node check between them.
        self.steps = None if guard is None or guard.max_nodes is None else SteppedApply(mgr, guard)

    def both(self, a: SddNode, b: SddNode) -> SddNode:
        return a & b if self.steps is None else self.steps.conj(a, b)

    def either(self, a: SddNode, b: SddNode) -> SddNode:
        return a | b if self.steps is None else self.steps.disj(a, b)

    def _tick(self) -> None:
        super()._tick()
        if self.steps is not None:  # live_count() is O(1): the node limit is read after every operation
            self.steps.guard.check_nodes()

    def true(self) -> SddNode:
        return self.mgr.true()

    def false(self) -> SddNode:
        return self.mgr.false()

    def literal(self, var: int, positive: bool) -> SddNode:
        return self.mgr.literal(var + 1 if positive else -(var + 1))

    def identity(self, f: SddNode) -> int:
        return int(f.id)


def _manager(enc: Encoding, order: Sequence[int], shape: str) -> SddManager:
    sdd = importlib.import_module("pysdd.sdd")
    blocks = [[v + 1 for v in enc.blocks[f]] for f in order if enc.blocks[f]]
    if not blocks:
        blocks = [[1]]  # a dummy variable: PySDD needs one; no feature uses it
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "blocks.vtree")
        with open(path, "w", encoding="ascii") as fh:
            fh.write(vtree_text(blocks, shape))
        vtree = sdd.Vtree.from_file(path.encode())
    mgr: SddManager = sdd.SddManager.from_vtree(vtree)
    mgr.auto_gc_and_minimize_off()
    return mgr


def _vtree_layout(mgr: SddManager, enc: Encoding) -> tuple[dict[int, int], dict[int, int], list[tuple[int, int, int]],
                                                    list[int], int]:
    """Read the manager's vtree: which vtree positions lie inside one block, and the vtree above the blocks.

    Returns ``inside`` (position -> feature, for positions within a block),
    ``vnode_at`` (position -> index of the vtree-above-blocks node),
    ``vnodes`` (per index: features mask, left, right; children first),
    ``vnode_of_feature`` and the root index.
    """
    n_feat = enc.space.n_features
    var_feature = enc.var_feature
    inside: dict[int, int] = {}
    vnode_at: dict[int, int] = {}
    vnodes: list[tuple[int, int, int]] = []
    vnode_of_feature = [-1] * n_feat

    def walk(v: SddVtree) -> tuple[int, int]:
        """(feature if the subtree is within one block else -1, features mask); fills the maps."""
        pos = v.position()
        if v.is_leaf():
            var = v.var() - 1
            f = var_feature[var] if var < len(var_feature) else -1
            if f >= 0:
                inside[pos] = f
                return f, 1 << f
            return -1, 0
        fl, ml = walk(v.left())
        fr, mr = walk(v.right())
        if fl >= 0 and fl == fr:
            inside[pos] = fl
            return fl, ml
        # an internal node above the blocks: its children that are whole blocks become vnodes
        kids = []
        for child, fc, mc in ((v.left(), fl, ml), (v.right(), fr, mr)):
            cpos = child.position()
            if fc >= 0:
                vnode_of_feature[fc] = len(vnodes)
                vnodes.append((mc, -1, -1))
                kids.append(len(vnodes) - 1)
            else:
                kids.append(vnode_at.get(cpos, -1))
        vnode_at[pos] = len(vnodes)
        vnodes.append((ml | mr, kids[0], kids[1]))
        return -1, ml | mr

    with recursion(2 * enc.n_vars + 10):
        f, m = walk(mgr.vtree())
    if f >= 0:  # the whole vtree is one block
        vnode_of_feature[f] = 0
        vnodes.append((m, -1, -1))
    if not vnodes:  # no feature has variables
        vnodes.append((0, -1, -1))
    root = len(vnodes) - 1
    return inside, vnode_at, vnodes, vnode_of_feature, root


def _export(roots: Sequence[SddNode], enc: Encoding, inside: dict[int, int], vnode_at: dict[int, int],
            guard: Guard) -> tuple[list[int], list[NodeData], list[int], int, int]:
    """Read the SDD into table nodes; also returns the SDD's decision nodes and elements (shared)."""
    space = enc.space
    var_feature, var_true = enc.var_feature, enc.var_true
    kind: list[int] = [0, 0]
    data: list[NodeData] = [None, None]
    leaves: dict[tuple[int, int], int] = {}
    memo: dict[int, int] = {}
    masks: dict[int, int] = {}
    counted: set[int] = set()
    n_elements = 0

    def full(f: int) -> int:
        return (1 << space.features[f].size) - 1

    def lit_mask(lit: int) -> tuple[int, int]:
        v = abs(lit) - 1
        f = var_feature[v]
        return f, var_true[v] if lit > 0 else full(f) & ~var_true[v]

    def mask(n: SddNode, f: int) -> int:
        if n.is_true():
            return full(f)
        if n.is_false():
            return 0
        if n.is_literal():
            return lit_mask(n.literal)[1]
        got = masks.get(n.id)
        if got is None:
            got = 0
            for p, s in n.elements():
                got |= mask(p, f) & mask(s, f)
            masks[n.id] = got
        return got

    def leaf(f: int, m: int) -> int:
        if m == 0:
            return FALSE
        if m == full(f):
            return TRUE
        got = leaves.get((f, m))
        if got is None:
            got = leaves[(f, m)] = len(kind)
            kind.append(1)
            data.append((f, m))
        return got

    def count_sdd(n: SddNode) -> None:
        nonlocal n_elements
        stack = [n]
        while stack:
            u = stack.pop()
            if not u.is_decision() or u.id in counted:
                continue
            counted.add(u.id)
            els = u.elements()
            n_elements += len(els)
            for p, s in els:
                stack.append(p)
                stack.append(s)

    def conv(n: SddNode) -> int:
        if n.is_false():
            return FALSE
        if n.is_true():
            return TRUE
        if n.is_literal():
            return leaf(*lit_mask(n.literal))
        got = memo.get(n.id)
        if got is not None:
            return got
        pos = n.vtree().position()
        f = inside.get(pos, -1)
        if f >= 0:
            r = leaf(f, mask(n, f))
        else:
            els = []
            for p, s in n.elements():
                cp = conv(p)
                if cp == FALSE:
                    continue
                cs = conv(s)
                if cs == FALSE:
                    continue
                els.append((cp, cs))
            if not els:
                r = FALSE
            else:
                r = len(kind)
                kind.append(2)
                data.append((vnode_at[pos], tuple(els)))
                if r & 255 == 0:
                    guard.check(r)
        memo[n.id] = r
        return r

    with recursion(4 * enc.n_vars + 10):
        out = [conv(r) for r in roots]
    for r in roots:
        count_sdd(r)
    return kind, data, out, len(counted), n_elements


def _order(model: Classifier, opts: SddOptions, guard: Guard) -> tuple[tuple[int, ...], str]:
    """The block order: for ``"auto"``, CUDD's sifted OBDD order when dd.cudd imports and that OBDD stays
    within ``max_nodes``, else ``"dfs"``. The time and memory limits are the SDD compilation's own."""
    if opts.order != "auto":
        return feature_order(model, opts.order, guard), "given"
    guard.phase = "choosing the block order (sifting the model's OBDD)"
    try:
        return _sifted_order(model, opts.encoding, guard), "obdd-sifting"
    except MissingDependencyError:
        pass
    except LimitHit as e:
        if e.limit != "max_nodes":
            raise
    return feature_order(model, "dfs", guard), "dfs"


def _collector(mgr: SddManager) -> Callable[[], None]:
    def collect() -> None:  # PySDD frees nothing by itself; dead nodes come from dropped intermediates
        if mgr.dead_count() > 2 * mgr.live_count() + 100_000:
            mgr.garbage_collect()

    return collect


def compile(model: Classifier, **options: Any) -> CompiledModel:
    """Compile ``model`` to an SDD (see the module docstring for the options).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> c = kcxai.compile_model(tree, "sdd")
    >>> c.language, c.backend
    ('sdd', 'pysdd')
    >>> e = kcxai.min_idrs(c, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> e.names, e.error, e.language
    (('x1', 'x9'), Fraction(7, 512), 'sdd')
    """
    opts = SddOptions.from_kwargs(**options)
    guard = Guard("sdd", opts.max_nodes, opts.max_seconds, opts.max_memory, advice(model, "sdd"))
    if opts.uses_ensemble(model):
        return _compile_ensemble(model, opts, guard)
    order, order_source = _order(model, opts, guard)
    guard.check()
    guard.phase = "building the model's functions"
    enc = Encoding(model.space, opts.encoding, order)
    mgr = _manager(enc, order, opts.shape(False))
    builder = _builder(mgr, enc, guard)
    try:
        fns = class_functions(model, builder)
    except MemoryError:
        raise guard.out_of_memory("Python failed to allocate") from None
    if not isinstance(fns, (list, tuple)) or len(fns) != len(model.classes):
        raise InvalidTypeError(
            f"{type(model).__name__}.build() must return one function per class ({len(model.classes)}). "
            f"Got {fns!r} instead.")
    return _finish(model, opts, guard, mgr, enc, fns, order_source == "obdd-sifting", "builder", {})


def _builder(mgr: SddManager, enc: Encoding, guard: Guard) -> SddBuilder:
    """An :class:`SddBuilder` on ``mgr`` whose node count and garbage collection the guard watches."""
    guard.set_size(mgr.live_count)
    guard.hook = _collector(mgr)
    return SddBuilder(mgr, enc, guard)


def _compile_ensemble(model: Classifier, opts: SddOptions, guard: Guard) -> CompiledModel:
    """The ``"ensemble"`` construction: the tree ensemble's multi-valued diagram is built feature by feature
    (:mod:`kcxai.compilers._ensemble`), then converted node by node into PySDD over a vtree in its order."""
    built = build_ensemble(model, opts, guard)
    guard.phase = "converting the ensemble's diagram to an SDD"
    enc = Encoding(model.space, opts.encoding, built.order)
    mgr = _manager(enc, built.order, opts.shape(True))
    builder = _builder(mgr, enc, guard)
    try:
        fns = _from_diagram(builder, built)
    except MemoryError:
        raise guard.out_of_memory("Python failed to allocate") from None
    extra = {"states": built.states, "diagram_nodes": built.diagram.reachable(built.roots),
             "diagram_seconds": built.seconds}
    return _finish(model, opts, guard, mgr, enc, fns, False, "ensemble", extra)


def _from_diagram(builder: SddBuilder, built: BuiltEnsemble) -> list[SddNode]:
    """One SDD per class from the multi-valued diagram, children first (each node an if-then-else chain
    over its edges, :func:`~kcxai.compilers._threshold.exclusive_branches`)."""
    diagram = built.diagram
    sdd: dict[int, SddNode] = {FALSE: builder.false(), TRUE: builder.true()}
    for u in diagram._post(built.roots):
        f = diagram.order[diagram.level[u]]
        sdd[u] = exclusive_branches(builder, f, [(m, sdd[c]) for m, c in diagram.edges[u]])
    return [builder.neg(sdd[r]) if neg else sdd[r] for r, neg in zip(built.roots, built.negated)]


def _finish(model: Classifier, opts: SddOptions, guard: Guard, mgr: SddManager, enc: Encoding, fns: Sequence[SddNode],
            order_from_obdd: bool, construction: str, extra: dict[str, Any]) -> CompiledModel:
    """Export the class SDDs into the counting table, check it, and report."""
    space = model.space
    guard.check()
    build_seconds = guard.seconds
    guard.phase = "exporting the diagram"
    guard.hook = None
    guard.set_size(None)
    inside, vnode_at, vnodes, vnode_of_feature, root = _vtree_layout(mgr, enc)
    kind, data, roots, sdd_nodes, sdd_elements = _export(fns, enc, inside, vnode_at, guard)
    guard.check(sdd_nodes)
    guard.phase = "building the counting table"
    table = VtreeTable(space, vnodes, vnode_of_feature, kind, data, roots, root)
    oracle = DiagramOracle("sdd", space, table)
    check_partition(oracle, model)
    stats = SddStats(
        size=sdd_nodes, nodes=sdd_nodes, edges=sdd_elements, variables=enc.n_vars, features=space.n_features,
        encoding=opts.encoding, order=tuple(space.names[f] for f in enc.order), counting_nodes=table.n_nodes,
        counting_edges=table.n_edges, build_seconds=build_seconds, compile_seconds=guard.seconds,
        memory_bytes=guard.peak_memory(), construction=construction, vtree=opts.shape(construction == "ensemble"),
        order_from_obdd=order_from_obdd)
    return CompiledModel(model=model, oracle=oracle, language="sdd", backend="pysdd",
                         stats=CompileStats.from_mapping({**stats.to_dict(), **extra}, size_unit="SDD nodes"))
