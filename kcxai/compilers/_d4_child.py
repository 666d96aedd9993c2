"""The child process that runs d4: ``python _d4_child.py CNF_FILE NNF_FILE INFO_FILE``.

Run by path by :mod:`kcxai.compilers._d4` (so it imports nothing of kcxai, only ``py_d4`` and the
standard library): reads a DIMACS CNF, compiles it to a d-DNNF with d4, writes the d-DNNF in d4's NNF
text format to ``NNF_FILE`` and, last, a JSON object to ``INFO_FILE``: the d-DNNF's node and edge counts,
d4's model count of the whole CNF (a decimal string), its own compile time and the d4 version. The
parent reads ``INFO_FILE`` only once this process has exited with status 0. d4 prints statistics to
its standard output, which the parent sends to ``/dev/null``.
"""

import json
import os
import sys
import time

import py_d4


def main(argv: list[str]) -> int:
    cnf_path, nnf_path, info_path = argv[1:4]
    t0 = time.perf_counter()
    compiled = py_d4.Solver(cnf_path).compile()
    seconds = time.perf_counter() - t0
    with open(nnf_path, "w", encoding="ascii") as fh:
        fh.write(compiled.getNNFString())
    info = {"nodes": compiled.getNbNodes(), "edges": compiled.getNbEdges(), "count": compiled.count([]),
            "decision_nodes": compiled.getNbDecisionNodes(), "seconds": seconds, "version": _version()}
    tmp = info_path + ".part"
    with open(tmp, "w", encoding="ascii") as fh:
        json.dump(info, fh)
    os.replace(tmp, info_path)
    return 0


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("d4Solver")
    except Exception:  # pragma: no cover - metadata missing
        return "unknown"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
