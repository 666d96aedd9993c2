"""The d-DNNF language (``"ddnnf"``): the model's CNF compiled by d4, counted by kcxai.

Any model that describes itself to the function builders compiles: its class functions are written
as a CNF (:mod:`kcxai.compilers._cnf`: Tseitin gates over the builder's operations, with the validity
clauses of each feature's Boolean encoding), d4 compiles the CNF to a decision-DNNF in a child process
held to the limits (:mod:`kcxai.compilers._d4`), and the d-DNNF is read back as text into a circuit on
which every query is an exact weighted count with Python integers, conditioning by weights
(:mod:`kcxai.compilers._dnnf_count`). d4's own counts are only used to check the compilation: the
model count of the CNF must be the number of points of feature space, and kcxai's count of the d-DNNF
must equal d4's.

Forests and boosted trees go through their ``build`` too (the threshold construction of
:mod:`kcxai.models._threshold`), so their CNF grows with the threshold diagram: the ``obdd`` and ``sdd``
languages' own ensemble construction is much faster on them; ``ddnnf`` is there for breadth and for
comparing languages.

Options
-------
See :class:`~kcxai.compilers._ddnnf_options.DdnnfOptions`: ``encoding`` (one-hot by default),
``max_clauses`` and ``max_variables`` (the CNF, before d4 starts), ``max_nodes`` (the d-DNNF, once
read), ``max_seconds`` (the whole compilation; d4's process is killed at it) and ``max_memory`` (d4's
process's resident memory; the CNF's construction in this process is held to the same growth).

d4 (the ``d4Solver`` package, ``pip install "kcxai[d4]"``) only runs in the child process; this
process never imports it, and nothing d4 prints reaches the user's standard output.

References
----------
J.-M. Lagniez and P. Marquis. An Improved Decision-DNNF Compiler. IJCAI 2017 (d4).
A. Darwiche and P. Marquis. A Knowledge Compilation Map. JAIR 17, 2002 (d-DNNF: conditioning and
model counting in polynomial time).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from kcxai._errors import MissingDependencyError
from kcxai.compilers._cnf import Cnf, CnfBuilder, model_cnf
from kcxai.compilers._d4 import run_d4
from kcxai.compilers._ddnnf_options import DdnnfOptions
from kcxai.compilers._dnnf_count import DnnfCircuit, DnnfOracle, dnnf_oracle
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.compilers.compiled import CompiledModel, CompileStats

__all__ = ["compile", "DEFAULTS", "DdnnfOptions", "INSTALL", "describe_model"]

#: Default options.
DEFAULTS: dict[str, Any] = DdnnfOptions().as_kwargs()

#: How to install the backend.
INSTALL = 'pip install "kcxai[d4]"'


def describe_model(model: Any) -> str:
    """The model as messages name it.

    >>> import kcxai
    >>> describe_model(kcxai.datasets.running_example_tree())
    'DecisionTree (9 features, 2 classes)'
    """
    space = model.space
    return f"{type(model).__name__} ({space.n_features} features, {len(model.classes)} classes)"


def _require_d4() -> None:
    if importlib.util.find_spec("py_d4") is None:
        raise MissingDependencyError(
            "The 'ddnnf' language compiles with d4 (the 'd4Solver' package, imported as py_d4), which is not "
            f"installed. Install it with `{INSTALL}` (or `pip install d4Solver`).")


def compile(model: Any, **options: Any) -> CompiledModel:
    """Compile ``model`` to a d-DNNF with d4 (see the module docstring for the options).

    Raises
    ------
    MissingDependencyError
        If d4 (``d4Solver``) is not installed.
    CompilationLimitError
        When the CNF or the d-DNNF exceeds a limit; the message names the model, the language and the limit.
    BackendError
        If d4 fails.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> c = kcxai.compile_model(tree, "ddnnf")
    >>> c.language, c.backend, c.stats.size_unit
    ('ddnnf', 'd4', 'd-DNNF nodes')
    >>> e = kcxai.min_idrs(c, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path")
    >>> e.names, e.error, e.language
    (('x1', 'x9'), Fraction(7, 512), 'ddnnf')
    """
    opts = DdnnfOptions.from_kwargs(**options)
    _require_d4()
    what = describe_model(model)
    guard = Guard("ddnnf", None, opts.max_seconds, opts.max_memory,
                  ", or use another language ('obdd', 'sdd')")
    try:
        cnf = _cnf(model, opts, guard, what)
        cnf_seconds = guard.seconds
        dnnf = run_d4(cnf, guard, what)
        if opts.max_nodes is not None and dnnf.n_nodes > opts.max_nodes:
            raise LimitHit(
                f"Compiling {what} to 'ddnnf' exceeded max_nodes={opts.max_nodes:,}: d4's d-DNNF has "
                f"{dnnf.n_nodes:,} nodes ({guard.seconds:.1f} s). Raise 'max_nodes', or use another language "
                "('obdd', 'sdd').", "max_nodes")
        guard.phase = "preparing the d-DNNF for counting"
        circuit = DnnfCircuit(dnnf, cnf)
        guard.check()
    except LimitHit as e:
        raise _named(e, what) from None
    _check(circuit, dnnf.info, model, cnf)
    space = model.space
    details = {"nodes": dnnf.n_nodes, "edges": dnnf.n_edges, "encoding": opts.encoding,
               "cnf_variables": cnf.n_vars, "cnf_clauses": cnf.n_clauses, "cnf_literals": cnf.n_literals,
               "gates": len(cnf.gates), "decision_nodes": dnnf.info.get("decision_nodes"),
               "cnf_seconds": cnf_seconds, "d4_seconds": dnnf.info.get("seconds"),
               "d4_version": dnnf.info.get("version"), "memory_bytes": dnnf.info.get("peak_memory")}
    stats = CompileStats(size=dnnf.n_nodes, size_unit="d-DNNF nodes", variables=cnf.n_vars,
                         compile_seconds=guard.seconds, details=details)
    return CompiledModel(model=model, oracle=dnnf_oracle(space, circuit), language="ddnnf", backend="d4",
                         stats=stats)


def _cnf(model: Any, opts: DdnnfOptions, guard: Guard, what: str) -> Cnf:
    guard.phase = "writing the model's functions as CNF"
    builder = CnfBuilder(model.space, opts.encoding, guard, opts.max_variables, what)
    try:
        return model_cnf(model, builder, opts.max_clauses)
    except MemoryError:
        raise guard.out_of_memory("Python failed to allocate") from None


def _named(e: LimitHit, what: str) -> LimitHit:
    """``e`` with the model named in its message (the guard's messages name the language and the limit)."""
    if what in str(e):
        e.__traceback__ = None
        return e
    out = LimitHit(f"{what}: {e}", e.limit)
    out.progress = e.progress
    return out


def _check(circuit: DnnfCircuit, info: dict[str, Any], model: Any, cnf: Cnf) -> None:
    """The compilation checked: the CNF has one model per point, kcxai's count of the d-DNNF is d4's, and the class
    functions partition feature space under the distribution's first component."""
    space = model.space
    d4_count = int(info["count"])
    if d4_count != space.size:
        raise RuntimeError(f"internal error: the CNF of {describe_model(model)} has {d4_count} models for "
                           f"{space.size} points of feature space")
    ones = circuit.unit_count()
    if ones != d4_count:
        raise RuntimeError(f"internal error: kcxai counts {ones} models of d4's d-DNNF, d4 counts {d4_count}")
    pw = space.distribution.components[0][1]
    oracle = DnnfOracle(space, circuit, pw)
    full = oracle.masks((0,) * space.n_features, ())
    total = oracle.class_count(full, range(oracle.n_classes))
    ok = total == pw.total if pw.arith.exact else abs(total - pw.total) <= 1e-9 * abs(pw.total)
    if not ok:
        raise RuntimeError(f"internal error: the class functions of {describe_model(model)} weigh {total} "
                           f"in all, not {pw.total}")
