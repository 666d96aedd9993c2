"""The OBDD language (``"obdd"``): ordered binary decision diagrams through dd.

The model's class functions are built with dd (``dd.cudd``, CUDD's C
implementation, when it imports; else the pure-Python ``dd.autoref``; the
compiled model's ``backend`` says which) over the Boolean encoding of
:mod:`kcxai.compilers._encoding`, each feature's variables forming a
contiguous block. With CUDD the blocks are then reordered by CUDD's group
sifting (``reorder``). The diagram is finally read feature by feature into a
reduced ordered multi-valued diagram on which every query is an exact
weighted count (:mod:`kcxai.compilers._tables.wmc`): dd's own ``count`` is never used
(it counts over the support of a function, and ``dd.cudd`` returns floats).

Options
-------
order : "auto", "index" or a sequence of features, default "auto"
    The initial order of the feature blocks (see :mod:`kcxai.compilers._encoding`).
reorder : None, bool or "dynamic", default None
    ``"dynamic"``: let CUDD's group sifting reorder the blocks (each moves as a
    unit) while building, and once more at the end. ``True``: only at the end.
    ``False``: keep the initial order. ``None``: ``"dynamic"`` with CUDD,
    ``False`` with autoref (which cannot keep blocks together). (Sizes and times
    of the choices: ``docs/results.md``.)
encoding : "auto", "order", "onehot" or "log", default "auto"
backend : "auto", "cudd" or "autoref", default "auto"
construction : "auto", "ensemble" or "builder", default "auto"
    ``"ensemble"`` (the default for random forests and boosted trees, unless
    ``reorder`` or ``backend`` is set): the ensemble's reduced ordered
    multi-valued diagram is built feature by feature from its leaf scores
    (:mod:`kcxai.compilers._ensemble`) in the order the model's trees suggest
    (``order="auto"``) and is the counting table itself: dd is not used
    (``backend`` ``"kcxai"``); ``size`` is the OBDD of that diagram in the
    ``encoding``. ``"builder"``: the model's ``build`` through dd.
max_nodes : int or None, default 2,000,000
    Limit on the live BDD nodes while building, and on the exported diagram.
max_seconds : float or None, default 300
    Limit on the whole compilation's wall-clock time (order probe, building,
    sifting, export).
max_work : int or None, default None
    With the ``"ensemble"`` construction, a limit on its counted work (the same on every machine, under any
    load; see :class:`~kcxai.compilers._options.ObddOptions`); the compiled form's ``work`` stat is what it
    counted.
max_memory : int or None, default 4 GiB
    Limit on the growth of the process's resident memory, in bytes; CUDD is
    also given twice this as its own memory bound, so that one runaway CUDD
    operation fails cleanly (a :class:`~kcxai.CompilationLimitError`) instead
    of exhausting the machine.

The limits are checked at every operation (see :mod:`kcxai.compilers._limits`);
one CUDD operation, or one CUDD sifting, cannot be interrupted. So that no
sifting starts shortly before ``max_seconds``, after 90% of it CUDD's dynamic
sifting is switched off and the final sifting is skipped (the compiled
model's ``order`` is the order actually used).
"""

from __future__ import annotations

import gc
import importlib
from types import ModuleType
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from kcxai._errors import InvalidInputError, InvalidTypeError, MissingDependencyError
from kcxai.compilers._encoding import Encoding, value_masks
from kcxai.compilers._ensemble import build_ensemble, obdd_nodes
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, DEFAULT_MAX_SECONDS, Guard, LimitHit, advice
from kcxai.compilers._options import ObddOptions
from kcxai.compilers._orders import feature_order
from kcxai.compilers._stats import ObddStats
from kcxai.compilers._tables.wmc import FALSE, TRUE, DiagramOracle, LevelTable, check_partition, recursion
from kcxai.compilers._threshold import class_functions
from kcxai.compilers.builder import DiagramBuilder
from kcxai.compilers.compiled import CompiledModel, CompileStats

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["compile", "DEFAULTS", "ObddOptions", "ObddStats", "BddBuilder", "BddFunction", "BddManager",
           "sifted_order"]


class BddFunction(Protocol):
    """What kcxai uses of a dd ``Function`` (``dd.autoref`` and ``dd.cudd`` alike): the Boolean operators, an
    int identity (negative for a complemented edge), and the node's variable and children."""

    @property
    def var(self) -> str | None:
        """The node's variable (``None`` at the terminal)."""

    @property
    def low(self) -> "BddFunction":
        """The else-child (complement edges not applied: see :attr:`negated`)."""

    @property
    def high(self) -> "BddFunction":
        """The then-child."""

    @property
    def negated(self) -> bool:
        """Whether the edge to this node is complemented."""

    def __and__(self, other: "BddFunction") -> "BddFunction": ...

    def __or__(self, other: "BddFunction") -> "BddFunction": ...

    def __invert__(self) -> "BddFunction": ...

    def __int__(self) -> int: ...


class BddManager(Protocol):
    """What kcxai uses of a dd ``BDD`` manager (``dd.autoref.BDD`` or ``dd.cudd.BDD``)."""

    @property
    def true(self) -> BddFunction:
        """The constant true."""

    @property
    def false(self) -> BddFunction:
        """The constant false."""

    def declare(self, *names: str) -> None: ...

    def var(self, name: str) -> BddFunction: ...

    def level_of_var(self, name: str) -> int: ...

    def group(self, groups: dict[str, int]) -> object: ...

    def configure(self, **options: object) -> object: ...

    def reorder(self) -> object: ...

    def collect_garbage(self) -> object: ...

    def __len__(self) -> int: ...


#: The diagram as exported: per node, its edges ``(mask of values, child)`` (the two terminals have none).
Edges = list[tuple[tuple[int, int], ...]]

#: Default options (see :class:`~kcxai.compilers._options.ObddOptions`).
DEFAULTS: dict[str, Any] = ObddOptions.defaults()
#: CUDD's initial memory estimate: its default initial tables take 15 ms to allocate; they grow as needed.
_CUDD_ESTIMATE = 64 * 2**20


def _backend(name: str) -> tuple[ModuleType, str]:
    if name in ("auto", "cudd"):
        try:
            return importlib.import_module("dd.cudd"), "dd.cudd"
        except ImportError:
            if name == "cudd":
                raise MissingDependencyError(
                    "backend='cudd' needs dd's CUDD bindings (dd.cudd), which do not import here. "
                    "dd's Linux x86_64 wheels ship them (`pip install dd`); elsewhere use backend='autoref'."
                ) from None
    return importlib.import_module("dd.autoref"), "dd.autoref"


class BddBuilder(DiagramBuilder[BddFunction]):
    """A :class:`~kcxai.compilers.builder.FunctionBuilder` making dd BDD nodes.

    Functions are dd ``Function`` objects over the variables ``v0, v1, ...``
    of an :class:`~kcxai.compilers._encoding.Encoding`; they are right on
    valid assignments (the validity constraints are left out, see the
    encoding module).
    """

    def __init__(self, bdd: BddManager, enc: Encoding, guard: Guard | None = None) -> None:
        super().__init__(enc, guard)
        self.bdd = bdd
        self.vars = [bdd.var(f"v{i}") for i in range(enc.n_vars)]

    def true(self) -> BddFunction:
        return self.bdd.true

    def false(self) -> BddFunction:
        return self.bdd.false

    def literal(self, var: int, positive: bool) -> BddFunction:
        v = self.vars[var]
        return v if positive else ~v

    def identity(self, f: BddFunction) -> int:
        return int(f)

    def release(self) -> None:
        super().release()
        self.vars.clear()


def _regular_nodes(bdd: BddManager, roots: Sequence[BddFunction], backend: str) -> int:
    """Number of BDD nodes (terminal included) reachable from ``roots``, shared nodes once."""
    if backend == "dd.cudd":
        return int(importlib.import_module("dd.cudd").count_nodes(list(roots)))
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        u = stack.pop()
        k = abs(int(u))
        if k in seen:
            continue
        seen.add(k)
        if u.var is not None:
            stack.append(u.low)
            stack.append(u.high)
    return len(seen)


def _held(bdd: BddManager, backend: str) -> bool:
    """Whether some dd Function of ``bdd`` is still referenced."""
    if backend == "dd.cudd":
        return len(bdd) > 0
    bdd.collect_garbage()  # what dd.bdd.BDD.__del__ does before it checks
    try:
        refs: dict[int, int] = bdd._bdd._ref  # type: ignore[attr-defined]  # dd.autoref's inner manager
        return len(bdd) > 1 or refs[1] > 1  # the terminal keeps one reference of its own
    except (AttributeError, KeyError):  # pragma: no cover - another dd version
        return True


def _release(bdd: BddManager, backend: str) -> None:
    """Free the Functions the model's build left in reference cycles while the manager is alive.

    dd reports an error when a manager is freed before its Functions, which happens when both end
    up in the same batch of cyclic garbage (e.g. memo dicts in recursive closures of a model's
    ``build``). A young-generation collection is cheap; a full one only runs if still needed.
    """
    gc.collect(1)
    if _held(bdd, backend):
        gc.collect()


def _block_order(bdd: BddManager, enc: Encoding) -> list[int]:
    """The features with variables, by the level of their block; checks blocks are contiguous."""
    firsts = []
    for f, vs in enumerate(enc.blocks):
        if not vs:
            continue
        levels = sorted(bdd.level_of_var(f"v{v}") for v in vs)
        if levels != list(range(levels[0], levels[0] + len(levels))):  # pragma: no cover - CUDD keeps groups
            raise RuntimeError(f"internal error: the variables of feature {f} are not contiguous after reordering")
        firsts.append((levels[0], f))
    return [f for _, f in sorted(firsts)]


def _export(bdd: BddManager, enc: Encoding, roots: Sequence[BddFunction],
            guard: Guard) -> tuple[list[int], Edges, list[int]]:
    """Read the BDD block by block into (feature, edges) node lists and class roots."""
    var_index = {f"v{i}": i for i in range(enc.n_vars)}
    var_feature = enc.var_feature
    true: BddFunction | None = bdd.true
    feature: list[int] = [-1, -1]
    edges: Edges = [(), ()]
    uniq: dict[tuple[int, tuple[tuple[int, int], ...]], int] = {}
    memo: dict[tuple[int, int], int] = {}
    objs: dict[int, BddFunction] = {}

    def key(u: BddFunction, p: int) -> tuple[int, int]:
        k = int(u)
        objs[k] = u
        return (k, p)

    def node(u: BddFunction, p: int) -> int:
        k = (int(u), p)
        got = memo.get(k)
        if got is not None:
            return got
        if u.var is None:
            r = TRUE if (u == true) != bool(p) else FALSE
            memo[k] = r
            return r
        f = var_feature[var_index[u.var]]

        def step(nd: tuple[int, int]) -> tuple[int, tuple[int, int], tuple[int, int]] | None:
            w = objs[nd[0]]
            if w.var is None:
                return None
            v = var_index[w.var]
            if var_feature[v] != f:
                return None
            q = nd[1] ^ int(w.negated)
            return v, key(w.low, q), key(w.high, q)

        exits = value_masks(enc, f, key(u, p), step)
        by_child: dict[int, int] = {}
        for (ek, ep), mask in exits.items():
            c = node(objs[ek], ep)
            by_child[c] = by_child.get(c, 0) | mask
        if len(by_child) == 1:
            r = next(iter(by_child))
        else:
            sig = (f, tuple(sorted((m, c) for c, m in by_child.items())))
            got = uniq.get(sig)
            if got is not None:
                r = got
            else:
                r = uniq[sig] = len(feature)
                feature.append(f)
                edges.append(sig[1])
                if len(feature) & 255 == 0:
                    guard.check(len(feature))
        memo[k] = r
        return r

    try:
        with recursion(len(enc.blocks) + 10):
            out = [node(u, 0) for u in roots]
    finally:
        # Drop every dd Function now and break the closures' reference cycle: a Function left
        # for the cyclic garbage collector may outlive its manager, which dd reports as an error.
        objs.clear()
        true = None
        node = None  # type: ignore[assignment]
    return feature, edges, out


def _is_cudd_failure(e: BaseException) -> bool:
    """Whether ``e`` is how dd.cudd reports a failed CUDD operation (CUDD returns NULL when it runs out of
    the memory it may use: dd's operators then raise ValueError or SystemError, ``apply`` RuntimeError)."""
    if isinstance(e, (SystemError, MemoryError)):
        return True
    text = str(e)
    return (isinstance(e, ValueError) and "NULL" in text) or (isinstance(e, RuntimeError) and "memory" in text)


def _build(model: Classifier, bdd: BddManager, builder: BddBuilder, guard: Guard,
           reorder: bool | str) -> list[BddFunction]:
    """Build the class functions and reorder."""
    fns = class_functions(model, builder)
    if not isinstance(fns, (list, tuple)) or len(fns) != len(model.classes):
        raise InvalidTypeError(
            f"{type(model).__name__}.build() must return one function per class ({len(model.classes)}). "
            f"Got {fns!r} instead.")
    guard.check()
    if reorder and not guard.late:
        guard.phase += " (CUDD's group sifting at the end)"
        bdd.reorder()
        guard.check()
    bdd.configure(reordering=False)
    return list(fns)


class _Built:
    """What :func:`_run` produced: the block order, and the exported diagram if asked for."""

    def __init__(self, enc: Encoding, backend: str, reorder: bool | str, levels: list[int]) -> None:
        self.enc, self.backend, self.reorder, self.levels = enc, backend, reorder, levels
        self.feature: list[int] = []
        self.edges: Edges = []
        self.roots: list[int] = []
        self.bdd_nodes = 0
        self.build_seconds = 0.0


def _manager(mod: ModuleType, backend: str, enc: Encoding, reorder: bool | str,
             max_memory: int | None) -> BddManager:
    bdd: BddManager
    if backend == "dd.cudd":
        estimate = _CUDD_ESTIMATE if max_memory is None else min(_CUDD_ESTIMATE, max_memory // 4)
        bdd = mod.BDD(memory_estimate=max(estimate, 2**20), initial_cache_size=2**14)
        bdd.configure(reordering=False)
        if max_memory is not None:
            # CUDD's own hard bound, so that one runaway operation fails cleanly. Not max_memory itself:
            # near its bound CUDD collects and sifts instead of growing its tables, and one operation
            # then ran 13 s instead of under 1 s (random DNF, 200 MiB); the RSS polls enforce max_memory.
            bdd.configure(max_memory=2 * max_memory)
    else:
        bdd = mod.BDD()
    if enc.n_vars:
        bdd.declare(*(f"v{i}" for i in range(enc.n_vars)))
    if reorder:
        for vs in enc.blocks:
            if len(vs) >= 2:
                bdd.group({f"v{vs[0]}": len(vs)})
        if reorder == "dynamic":
            bdd.configure(reordering=True)
    return bdd


def _run(model: Classifier, opts: ObddOptions, guard: Guard, export: bool, purpose: str = "") -> _Built:
    """Build (and export) the model's OBDD; frees every dd object before returning or raising a limit."""
    mod, backend = _backend(opts.backend)
    reorder = opts.reorder
    if reorder is None:
        reorder = "dynamic" if backend == "dd.cudd" else False
    if reorder and backend != "dd.cudd":
        raise InvalidInputError(
            f"'reorder'={reorder!r} needs the CUDD backend (group sifting keeps each feature's variables "
            "together); dd.autoref cannot. Use reorder=False.")
    order = feature_order(model, opts.order, guard)
    enc = Encoding(model.space, opts.encoding, order)
    bdd = _manager(mod, backend, enc, reorder, opts.max_memory)
    guard.phase = "building the model's functions" + purpose
    guard.set_size(bdd.__len__)
    if reorder == "dynamic":
        # one CUDD sifting cannot be interrupted (seconds on a 77,000-node tree): none starts late
        def stop_sifting() -> None:
            bdd.configure(reordering=False)

        guard.on_late = stop_sifting
    builder = BddBuilder(bdd, enc, guard)
    failure: LimitHit | None = None
    out = _Built(enc, backend, reorder, [])
    try:
        fns = _build(model, bdd, builder, guard, reorder)
        out.build_seconds = guard.seconds
        if export:
            guard.phase = "exporting the diagram"
            out.bdd_nodes = _regular_nodes(bdd, fns, backend)
            guard.check(out.bdd_nodes)
            out.levels = _block_order(bdd, enc)
            out.feature, out.edges, out.roots = _export(bdd, enc, fns, guard)
        else:
            out.levels = _block_order(bdd, enc)
        del fns
    except LimitHit as e:
        failure = e
    except (SystemError, MemoryError, ValueError, RuntimeError) as e:
        if not (backend == "dd.cudd" and _is_cudd_failure(e)) and not isinstance(e, MemoryError):
            raise
        failure = guard.out_of_memory(f"{'CUDD' if backend == 'dd.cudd' else 'Python'} failed to allocate: {e}")
    # Here the traceback (and the model's frames holding dd Functions) is gone: free them while the
    # manager is alive, then raise the limit without its old traceback.
    builder.release()
    guard.set_size(None)
    guard.on_late = None
    _release(bdd, backend)
    if failure is not None:
        failure.__traceback__ = failure.__context__ = failure.__cause__ = None
        raise failure
    return out


def _sifted_order(model: Classifier, encoding: str, guard: Guard) -> tuple[int, ...]:
    opts = ObddOptions(encoding=encoding, backend="cudd", reorder="dynamic", max_nodes=guard.max_nodes,
                       max_seconds=guard.max_seconds, max_memory=guard.max_memory)
    levels = _run(model, opts, guard, export=False, purpose=" as an OBDD, to sift its block order").levels
    return tuple(levels) + tuple(f for f in range(model.space.n_features) if f not in set(levels))


def sifted_order(model: Classifier, *, encoding: str = "auto", max_nodes: int | None = DEFAULT_MAX_NODES,
                 max_seconds: float | None = DEFAULT_MAX_SECONDS,
                 max_memory: int | None = DEFAULT_MAX_MEMORY) -> tuple[int, ...]:
    """The order of the feature blocks CUDD's group sifting finds for ``model``'s OBDD.

    Starts from the ``"auto"`` order and sifts while building (``reorder="dynamic"``). The SDD
    compiler uses it to arrange its vtree. Features without variables come last.

    Raises
    ------
    MissingDependencyError
        If ``dd.cudd`` does not import.
    CompilationLimitError
        If the OBDD exceeds the limits.

    Examples
    --------
    >>> import kcxai
    >>> order = sifted_order(kcxai.datasets.running_example_tree())
    >>> sorted(order) == list(range(9))
    True
    """
    opts = ObddOptions(encoding=encoding, backend="cudd", reorder="dynamic", max_nodes=max_nodes,
                       max_seconds=max_seconds, max_memory=max_memory)
    guard = Guard("obdd", opts.max_nodes, opts.max_seconds, opts.max_memory, advice(model, "obdd"))
    return _sifted_order(model, opts.encoding, guard)


def compile(model: Classifier, **options: Any) -> CompiledModel:
    """Compile ``model`` to an OBDD (see the module docstring for the options).

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> c = kcxai.compile_model(tree, "obdd")
    >>> c.language, c.backend in ("dd.cudd", "dd.autoref")
    ('obdd', True)
    >>> e = kcxai.min_idrs(c, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> e.names, e.error, e.language
    (('x1', 'x9'), Fraction(7, 512), 'obdd')
    """
    opts = ObddOptions.from_kwargs(**options)
    guard = Guard("obdd", opts.max_nodes, opts.max_seconds, opts.max_memory, advice(model, "obdd"))
    if opts.uses_ensemble(model):
        return _compile_ensemble(model, opts, guard)
    if opts.max_work is not None:
        raise InvalidInputError(f"'max_work' applies to tree ensembles (their diagram built feature by feature counts "
                                f"its work); {type(model).__name__} is built through dd. Leave it unset.")
    built = _run(model, opts, guard, export=True)
    space = model.space
    guard.phase = "building the counting table"
    table = LevelTable(space, built.levels, built.feature, built.edges, built.roots)
    oracle = DiagramOracle("obdd", space, table)
    check_partition(oracle, model)
    rest = tuple(f for f in range(space.n_features) if f not in set(built.levels))
    stats = ObddStats(
        size=built.bdd_nodes, nodes=built.bdd_nodes, edges=2 * max(built.bdd_nodes - 1, 0),
        variables=built.enc.n_vars, features=space.n_features, encoding=opts.encoding,
        order=tuple(space.names[f] for f in (*built.levels, *rest)),
        counting_nodes=table.n_nodes, counting_edges=table.n_edges, build_seconds=built.build_seconds,
        compile_seconds=guard.seconds, memory_bytes=guard.peak_memory(), construction="builder",
        sifting=bool(built.reorder), sifting_while_building=built.reorder == "dynamic")
    return CompiledModel(model=model, oracle=oracle, language="obdd",
                         backend=built.backend,
                         stats=CompileStats.from_mapping(stats.to_dict(), size_unit="OBDD nodes"))


def _compile_ensemble(model: Classifier, opts: ObddOptions, guard: Guard) -> CompiledModel:
    """The ``"ensemble"`` construction: the multi-valued diagram built feature by feature
    (:mod:`kcxai.compilers._ensemble`) is the counting table itself; no dd manager is involved."""
    space = model.space
    built = build_ensemble(model, opts, guard)
    enc = Encoding(space, opts.encoding, built.order)
    guard.phase = "building the counting table"
    table = built.table(space)
    del built.diagram
    guard.check()
    oracle = DiagramOracle("obdd", space, table)
    check_partition(oracle, model)
    guard.phase = "counting the diagram's OBDD nodes"
    nodes = obdd_nodes(table, enc, guard)
    stats = ObddStats(
        size=nodes, nodes=nodes, edges=2 * max(nodes - 1, 0), variables=enc.n_vars, features=space.n_features,
        encoding=opts.encoding, order=tuple(space.names[f] for f in built.order), counting_nodes=table.n_nodes,
        counting_edges=table.n_edges, build_seconds=built.seconds, compile_seconds=guard.seconds,
        memory_bytes=guard.peak_memory(), construction="ensemble", sifting=False, sifting_while_building=False)
    return CompiledModel(model=model, oracle=oracle, language="obdd",
                         backend="kcxai", stats=CompileStats.from_mapping(
                             {**stats.to_dict(), "states": built.states, "work": built.work},
                             size_unit="OBDD nodes"))
