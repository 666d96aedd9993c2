"""The child process that runs d4: ``python _d4_child.py CIRCUIT_FILE OUT_PREFIX REMOVE_GATES``.

Run by path by :mod:`kcxai.compilers._d4` (so it imports nothing of kcxai, only ``py_d4`` and the
standard library): reads a circuit (:meth:`kcxai.compilers._cnf.Cnf.circuit`: ``p N_VARS``, then one
``a OUT IN ... 0`` / ``o OUT IN ... 0`` gate or ``c LIT ... 0`` clause a line), compiles it to a
d-DNNF with d4 in its circuit mode, with gate removal if REMOVE_GATES is ``1`` (a gate whose output no
longer matters is dropped during the search: its variable is determined), writes the d-DNNF in d4's
NNF text format to ``OUT_PREFIX.nnf`` and, last, a JSON object to ``OUT_PREFIX.json``: the d-DNNF's node
and edge counts, d4's model count (a decimal string), its compile time and the d4 version. The parent reads
the JSON only once this process has exited with status 0. d4 prints statistics to its standard output,
which the parent sends to ``/dev/null``.
"""

import json
import os
import sys
import time
from importlib.metadata import PackageNotFoundError, version

import py_d4

_KINDS = {"a": py_d4.GateType.AND, "o": py_d4.GateType.OR, "c": py_d4.GateType.CLAUSE}


def read_circuit(path: str) -> tuple[list[py_d4.Gate], int]:
    """The gates and clauses of a circuit file, and its number of variables."""
    gates = []
    n_vars = 0
    with open(path, encoding="ascii") as fh:
        for line in fh:
            parts = line.split()
            if parts[0] == "p":
                n_vars = int(parts[1])
                continue
            nums = [int(x) for x in parts[1:-1]]
            gate = py_d4.Gate()
            gate.gateType = _KINDS[parts[0]]
            if parts[0] == "c":
                gate.inputs = nums
            else:
                gate.output = nums[0]
                gate.inputs = nums[1:]
            gates.append(gate)
    return gates, n_vars


def main(argv: list[str]) -> int:
    circuit_path, prefix, remove = argv[1:4]
    gates, n_vars = read_circuit(circuit_path)
    options = py_d4.dump_options_to_dict(py_d4.OptionDpllStyleMethod())
    options["spec"]["removeGates"] = remove == "1"
    t0 = time.perf_counter()
    compiled = py_d4.Solver(gates, n_vars, py_d4.load_options_from_dict(options)).compile()
    seconds = time.perf_counter() - t0
    with open(prefix + ".nnf", "w", encoding="ascii") as fh:
        fh.write(compiled.getNNFString())
    info = {"nodes": compiled.getNbNodes(), "edges": compiled.getNbEdges(), "count": compiled.count([]),
            "decision_nodes": compiled.getNbDecisionNodes(), "seconds": seconds, "version": _version()}
    tmp = prefix + ".json.part"
    with open(tmp, "w", encoding="ascii") as fh:
        json.dump(info, fh)
    os.replace(tmp, prefix + ".json")
    return 0


def _version() -> str:
    try:
        return version("d4Solver")
    except PackageNotFoundError:  # pragma: no cover - installed without metadata
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
