"""The d-DNNF language (``"ddnnf"``): the model's CNF compiled by d4, counted by kcxai.

Any model that describes itself to the function builders compiles: its class functions are written
as a circuit (:mod:`kcxai.compilers._cnf`: gates over the builder's operations, over one-hot value
variables with exactly-one clauses, and one selector variable per class tied to the class by the unit
clause ``OR_c (selector_c and root_c)``), d4 compiles the circuit to a decision-DNNF in a child process
held to the limits (:mod:`kcxai.compilers._d4`), and the d-DNNF is read back as text into a circuit on
which every query is an exact weighted count with Python integers, conditioning by weights, the
selectors choosing the classes counted (:mod:`kcxai.compilers._dnnf_count`). d4's own counts are only
used to check the compilation: kcxai's count of the d-DNNF must equal d4's and the number of points of
feature space.

d4's gate removal (a gate whose output no longer matters is dropped during the search) keeps the d-DNNFs
of trees small: 3,505 nodes for the 155-node allhyper tree, against 63,372 from the plain Tseitin CNF.
It also drops the gates a count would condition on, so the classes are selected by input variables (the
selectors), and no clause reads a gate's output: with class roots defined by clauses over gates, d4
miscounted (a 2-feature tree's circuit counted 7 models for 4 points, d4Solver 1.0.0). The selectors
were exact against brute force on 200 random models of every family (d4's counts under assumptions).

Forests and boosted trees go through their ``build`` too (the threshold construction of
:mod:`kcxai.models._threshold`), so their CNF grows with the threshold diagram: the ``obdd`` and ``sdd``
languages' own ensemble construction is much faster on them; ``ddnnf`` is there for breadth and for
comparing languages.

Options
-------
See :class:`~kcxai.compilers._ddnnf_options.DdnnfOptions`: ``remove_gates`` (d4's gate removal, on),
``max_clauses`` and ``max_variables`` (the CNF, before d4 starts), ``max_nodes`` (the d-DNNFs of all
classes, once read), ``max_seconds`` (the whole compilation; d4's process is killed at it) and ``max_memory`` (d4's
process's resident memory; the CNF's construction in this process is held to the same growth).

d4 (the ``d4Solver`` package, ``pip install "kcxai[d4]"``) only compiles in the child process (the
registry's availability check imports ``py_d4`` here, which prints nothing), and nothing d4 prints
reaches the user's standard output.

References
----------
J.-M. Lagniez and P. Marquis. An Improved Decision-DNNF Compiler. IJCAI 2017 (d4).
A. Darwiche and P. Marquis. A Knowledge Compilation Map. JAIR 17, 2002 (d-DNNF: conditioning and
model counting in polynomial time).
"""

from __future__ import annotations

import importlib.util
from typing import Any

from kcxai._errors import BackendError, MissingDependencyError
from kcxai.compilers._cnf import Cnf, CnfBuilder, model_cnf
from kcxai.compilers._d4 import Dnnf, run_d4
from kcxai.compilers._ddnnf_options import DdnnfOptions
from kcxai.compilers._dnnf_count import DnnfCircuit, DnnfOracle, dnnf_oracle
from kcxai.compilers._limits import Guard, LimitHit
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.models.classifier import Classifier

__all__ = ["compile", "DEFAULTS", "DdnnfOptions", "INSTALL", "describe_model"]

#: Default options.
DEFAULTS: dict[str, Any] = DdnnfOptions().as_kwargs()

#: How to install the backend.
INSTALL = 'pip install "kcxai[d4]"'


def describe_model(model: Classifier) -> str:
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


def compile(model: Classifier, **options: Any) -> CompiledModel:
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
        dnnf = run_d4(cnf, guard, what, remove_gates=opts.remove_gates)
        if opts.max_nodes is not None and dnnf.n_nodes > opts.max_nodes:
            raise LimitHit(
                f"Compiling {what} to 'ddnnf' exceeded max_nodes={opts.max_nodes:,}: d4's d-DNNF has "
                f"{dnnf.n_nodes:,} nodes ({guard.seconds:.1f} s). Raise 'max_nodes', or use another language "
                "('obdd', 'sdd').", "max_nodes")
        guard.phase = "preparing the d-DNNF for counting"
        circuit = DnnfCircuit(dnnf, cnf.indicators, cnf.selectors)
        guard.check()
    except LimitHit as e:
        raise _named(e, what) from None
    _check(circuit, dnnf, model)
    space = model.space
    info = dnnf.info
    details = {"nodes": dnnf.n_nodes, "edges": dnnf.n_edges, "remove_gates": opts.remove_gates,
               "cnf_variables": cnf.n_vars, "cnf_clauses": cnf.n_clauses, "cnf_literals": cnf.n_literals,
               "gates": len(cnf.gates), "decision_nodes": info["decision_nodes"], "cnf_seconds": cnf_seconds,
               "d4_seconds": info["seconds"], "d4_version": info["version"], "memory_bytes": info["peak_memory"]}
    stats = CompileStats(size=dnnf.n_nodes, size_unit="d-DNNF nodes", variables=cnf.n_vars,
                         compile_seconds=guard.seconds, details=details)
    return CompiledModel(model=model, oracle=dnnf_oracle(space, circuit), language="ddnnf", backend="d4",
                         stats=stats)


def _cnf(model: Classifier, opts: DdnnfOptions, guard: Guard, what: str) -> Cnf:
    guard.phase = "writing the model's functions as CNF"
    builder = CnfBuilder(model.space, "onehot", guard, opts.max_variables, what)
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


def _check(circuit: DnnfCircuit, dnnf: Dnnf, model: Classifier) -> None:
    """The compilation checked: kcxai's count of the d-DNNF is d4's and the number of points, and the classes'
    weights add up to the total weight under the distribution's first component."""
    space = model.space
    d4_count = int(dnnf.info["count"])
    ours = circuit.unit_count()
    if ours != d4_count or d4_count != space.size:
        raise BackendError(f"d4's d-DNNF of {describe_model(model)} has {d4_count} models by d4's count and "
                           f"{ours} by kcxai's, for {space.size} points of feature space")
    pw = space.distribution.components[0][1]
    oracle = DnnfOracle(space, circuit, pw)
    weight = oracle.class_count(oracle.masks((0,) * space.n_features, ()), range(oracle.n_classes))
    ok = weight == pw.total if pw.arith.exact else abs(weight - pw.total) <= 1e-9 * abs(pw.total)
    if not ok:
        raise RuntimeError(f"internal error: the class functions of {describe_model(model)} weigh {weight} "
                           f"in all, not {pw.total}")
