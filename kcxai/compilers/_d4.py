"""d4 run in a child process under the compilation's limits, and its d-DNNF read back.

One d4 compilation is a single C++ call that cannot be interrupted, prints statistics on the C-level
standard output and may allocate without bound. So it runs in a child process
(:mod:`kcxai.compilers._d4_child`, started with this interpreter, its standard output sent to
``/dev/null``): the parent writes the CNF to a temporary file, polls the child every
:data:`POLL_SECONDS`, kills it when ``max_seconds`` has passed or its resident memory exceeds
``max_memory`` (a :class:`~kcxai.compilers._limits.LimitHit`), and otherwise reads back the d-DNNF as
text in d4's NNF format (:func:`parse_nnf`) and a small JSON record; nothing is unpickled. A child
that fails (an exit status other than 0, or a signal) is a :class:`~kcxai.BackendError` quoting the
end of its standard error.

d4's NNF format, one line each: ``o ID 0`` (an OR node), ``a ID 0`` (an AND node), ``t ID 0`` (true),
``f ID 0`` (false), and ``PARENT CHILD LIT ... 0``: an edge whose literals are conjoined with the
child. OR nodes are deterministic (their children's models are disjoint) and AND nodes decomposable
(their children share no variable); nothing is smoothed.

References
----------
J.-M. Lagniez and P. Marquis. An Improved Decision-DNNF Compiler. IJCAI 2017 (d4).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kcxai._errors import BackendError
from kcxai.compilers._cnf import Cnf
from kcxai.compilers._limits import Guard, LimitHit, format_bytes

__all__ = ["Dnnf", "run_d4", "parse_nnf", "POLL_SECONDS"]

#: How often the parent looks at the child's clock and memory, in seconds.
POLL_SECONDS = 0.02

_CHILD = Path(__file__).with_name("_d4_child.py")

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE = 4096


@dataclass(frozen=True)
class Dnnf:
    """A d-DNNF as read from d4.

    Attributes
    ----------
    kinds : list of str
        Per node (numbered from 0, children before parents): ``"o"``, ``"a"``, ``"t"`` or ``"f"``.
    edges : list of list of (int, tuple of int)
        Per node, its edges: (child node, literals conjoined with it).
    root : int
        The root node (the last).
    n_vars : int
        The CNF's variables (the d-DNNF is over ``1 .. n_vars``).
    info : dict
        What the child reported: ``nodes``, ``edges`` (d4's counts), ``count`` (d4's model count of the
        CNF, a decimal string), ``decision_nodes``, ``seconds``, ``version``; and ``peak_memory``, the
        child's largest resident memory seen, in bytes.
    """

    kinds: list[str]
    edges: list[list[tuple[int, tuple[int, ...]]]]
    root: int
    n_vars: int
    info: dict[str, Any]

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.kinds)

    @property
    def n_edges(self) -> int:
        """Number of edges."""
        return sum(map(len, self.edges))


def parse_nnf(text: str, n_vars: int) -> tuple[list[str], list[list[tuple[int, tuple[int, ...]]]], int]:
    """Nodes renumbered children first, their edges, and the root, from d4's NNF text.

    Raises
    ------
    BackendError
        On a line that is not of the format, an edge to an unknown node, a literal outside
        ``1 .. n_vars``, a cycle, or not exactly one root.

    Examples
    --------
    >>> parse_nnf("o 1 0\\nt 2 0\\n1 2 -1 0\\n1 2 1 3 0\\n", 3)
    (['t', 'o'], [[], [(0, (-1,)), (0, (1, 3))]], 1)
    """
    kind: dict[int, str] = {}
    out: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    children: set[int] = set()
    for number, line in enumerate(text.splitlines(), 1):
        head = line[:1]
        try:
            if head in ("o", "a", "t", "f"):
                parts = line.split()
                if len(parts) != 3 or parts[2] != "0":
                    raise ValueError
                kind[int(parts[1])] = head
                continue
            if not head or head == "c":
                continue
            nums = list(map(int, line.split()))
        except ValueError:
            raise BackendError(f"d4 wrote a line kcxai does not read, line {number}: {line[:80]!r}") from None
        lits = tuple(nums[2:-1])
        if len(nums) < 3 or nums[-1] != 0 or (lits and (max(lits) > n_vars or -min(lits) > n_vars or 0 in lits)):
            raise BackendError(f"d4 wrote an edge kcxai does not read, line {number}: {line[:80]!r}")
        got = out.get(nums[0])
        if got is None:
            out[nums[0]] = [(nums[1], lits)]
        else:
            got.append((nums[1], lits))
        children.add(nums[1])
    unknown = [p for p, es in out.items() for c, _ in es if p not in kind or c not in kind]
    roots = [n for n in kind if n not in children]
    if unknown or len(roots) != 1:
        raise BackendError(f"d4's d-DNNF is not a rooted graph of its nodes ({len(roots)} roots, "
                           f"{len(unknown)} edges from or to undeclared nodes)")
    order = _post_order(roots[0], out, len(kind))
    index = {n: i for i, n in enumerate(order)}
    kinds = [kind[n] for n in order]
    edges = [[(index[c], lits) for c, lits in out.get(n, [])] for n in order]
    return kinds, edges, len(order) - 1


def _post_order(root: int, out: dict[int, list[tuple[int, tuple[int, ...]]]], n: int) -> list[int]:
    """The nodes ``root`` reaches, children first (iterative: d-DNNFs are deep); raises on a cycle."""
    order: list[int] = []
    state: dict[int, int] = {}  # 1: on the stack, 2: done
    stack = [(root, 0)]
    while stack:
        node, i = stack.pop()
        es = out.get(node, [])
        if i == 0:
            if state.get(node) == 2:
                continue
            state[node] = 1
        if i < len(es):
            stack.append((node, i + 1))
            child = es[i][0]
            s = state.get(child)
            if s == 1:
                raise BackendError("d4's d-DNNF has a cycle")
            if s is None:
                stack.append((child, 0))
            continue
        state[node] = 2
        order.append(node)
    return order


def _resident(pid: int) -> int:
    """The resident memory of process ``pid``, in bytes (0 if it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):  # pragma: no cover - no procfs, or the child just ended
        return 0


def run_d4(cnf: Cnf, guard: Guard, what: str, *, remove_gates: bool = True) -> Dnnf:
    """Compile ``cnf``'s circuit with d4 in a child process under ``guard``'s limits.

    Parameters
    ----------
    cnf : Cnf
    guard : Guard
        ``max_seconds`` counts from the guard's start (the CNF's construction included);
        ``max_memory`` bounds the child's resident memory.
    what : str
        The model, for messages.
    remove_gates : bool
        d4's gate removal (see :mod:`kcxai.compilers._d4_child`).

    Raises
    ------
    LimitHit
        ``"max_seconds"`` or ``"max_memory"``: the child was killed.
    BackendError
        The child failed, or wrote what kcxai does not read.
    """
    with tempfile.TemporaryDirectory(prefix="kcxai-d4-") as tmp:
        circuit_path, prefix, err_path = (os.path.join(tmp, n) for n in ("f.circ", "out", "err"))
        guard.phase = "writing the circuit for d4"
        with open(circuit_path, "w", encoding="ascii") as fh:
            fh.write(cnf.circuit())
        guard.check()
        guard.phase = "compiling the circuit with d4"
        with open(err_path, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, str(_CHILD), circuit_path, prefix, "1" if remove_gates else "0"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, close_fds=True)
            try:
                peak = _watch(proc, guard, what, cnf)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
        if proc.returncode != 0:
            tail = Path(err_path).read_bytes()[-2000:].decode("utf-8", "replace").strip()
            how = f"exit status {proc.returncode}" if proc.returncode > 0 else f"signal {-proc.returncode}"
            raise BackendError(
                f"d4 failed compiling the circuit of {what} for 'ddnnf' ({cnf.n_vars:,} variables, "
                f"{cnf.n_clauses:,} clauses; {how}): {tail[-800:] or 'no message'}")
        guard.phase = "reading d4's d-DNNF"
        info = json.loads(Path(prefix + ".json").read_text(encoding="ascii"))
        info["peak_memory"] = peak
        kinds, edges, top = parse_nnf(Path(prefix + ".nnf").read_text(encoding="ascii"), cnf.n_vars)
    guard.check()
    return Dnnf(kinds, edges, top, cnf.n_vars, info)


def _watch(proc: "subprocess.Popen[bytes]", guard: Guard, what: str, cnf: Cnf) -> int:
    """Wait for the child, killing it at a limit; returns its largest resident memory seen."""
    peak = 0
    size = f"{cnf.n_vars:,} variables, {cnf.n_clauses:,} clauses"
    while proc.poll() is None:
        if guard.remaining_seconds <= 0:
            proc.kill()
            raise LimitHit(
                f"Compiling {what} to 'ddnnf' exceeded max_seconds={guard.max_seconds:g} while d4 compiled its circuit "
                f"({size}; {guard.seconds:.1f} s). Raise 'max_seconds', or use another language ('obdd', 'sdd').",
                "max_seconds")
        rss = _resident(proc.pid)
        peak = max(peak, rss)
        if guard.max_memory is not None and rss > guard.max_memory:
            proc.kill()
            raise LimitHit(
                f"Compiling {what} to 'ddnnf' exceeded max_memory={format_bytes(guard.max_memory)} while d4 "
                f"compiled its circuit ({size}; d4's process reached {format_bytes(rss)} after {guard.seconds:.1f} s). "
                "Raise 'max_memory', or use another language ('obdd', 'sdd').", "max_memory")
        try:
            proc.wait(timeout=min(POLL_SECONDS, max(guard.remaining_seconds, 0.001)))
        except subprocess.TimeoutExpired:
            pass
    return peak
