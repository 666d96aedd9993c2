"""Time, node and memory limits of one compilation, and the default limits.

Every diagram compilation (:mod:`kcxai.compilers.sdd`, :mod:`kcxai.compilers.obdd`) runs under
three limits, finite by default because explainers compile a model given to them with the default
options:

* ``max_seconds`` (default :data:`DEFAULT_MAX_SECONDS`): wall-clock seconds from the start of the
  compilation, including the feature-order probe, building, reordering and exporting;
* ``max_nodes`` (default :data:`DEFAULT_MAX_NODES`): live nodes of the backend while building
  (intermediate results included), and nodes of the exported diagram;
* ``max_memory`` (default :data:`DEFAULT_MAX_MEMORY`): growth of the process's resident memory
  (RSS, read from ``/proc/self/statm``) since the compilation started, in bytes. CUDD is also
  given twice this bound as its own, so that one CUDD operation fails cleanly instead of
  exhausting the machine.

``None`` switches a limit off. A :class:`Guard` checks the clock at every builder operation (a
``time.perf_counter()`` call, about 0.1 µs) and polls the node count and the resident memory
adaptively (:class:`_Poll`): rarely while far from the limit (at most about 5% of the time goes
to polling), more often as the growth measured so far approaches it. The SDD compiler reads its
node count (PySDD's ``live_count()``, O(1)) after every operation instead (:meth:`Guard.check_nodes`).
What cannot be interrupted: one PySDD or CUDD operation (apply, CUDD's sifting) and the model's
own Python code between two builder operations; a limit is overshot by at most one of them. So
that no CUDD sifting starts just before the time limit, the OBDD compiler switches sifting off
after 90% of ``max_seconds``, or earlier if less than 2.5 times the longest operation so far is
left (:attr:`Guard.late`).

What ``max_nodes`` guarantees for SDDs: one PySDD apply can create many times the live nodes
(measured: 158,584 new nodes from 15,842 live). Once the live nodes reach 5% of ``max_nodes``,
an apply whose larger operand has 256 or more elements, and whose operands' node counts multiply
to more than the nodes left below the limit, is taken in steps over the regions of that
operand's primes with the node count read after each step
(:mod:`kcxai.compilers._sdd_steps`; the result is the same node). The stop is then over
``max_nodes`` by at most one step, sized from the growth seen so far to about 3% of the limit;
this is a prediction, not a bound. Not split, so still overshooting by up to one whole apply:
applies below 5% of the limit, applies whose operands have fewer than 256 elements at the top
(right-linear vtrees: every node there has few elements; measured 2.8 times ``max_nodes=200000``
on a 7,000-node tree in the ``"index"`` order), negations (at most the operand's size), and
growth shared by all the regions. ``benchmarks/bench_limits.py`` prints the ratios before and after.

Hitting a limit raises :class:`LimitHit` (a :class:`~kcxai.CompilationLimitError`) that names the
limit, the phase and what was reached, and says what to do.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

from kcxai._errors import CompilationLimitError
from kcxai.oracle import has_paths

__all__ = ["DEFAULT_MAX_NODES", "DEFAULT_MAX_SECONDS", "DEFAULT_MAX_MEMORY", "Guard", "LimitHit",
           "resident_memory", "format_bytes", "advice"]

#: Default ``max_nodes``: live nodes while building, and nodes of the exported diagram.
DEFAULT_MAX_NODES = 2_000_000
#: Default ``max_seconds`` of one compilation.
DEFAULT_MAX_SECONDS = 300.0
#: Default ``max_memory``: growth of the resident memory during one compilation (4 GiB).
DEFAULT_MAX_MEMORY = 4 << 30

#: The fraction of ``max_seconds`` after which long uninterruptible steps (CUDD's sifting) are skipped.
LATE = 0.9

try:
    _PAGE = os.sysconf("SC_PAGE_SIZE")
except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
    _PAGE = 4096


def resident_memory() -> int:
    """The resident memory of this process in bytes (``/proc/self/statm``; else the peak from ``resource``).

    About 5 µs on Linux.

    Examples
    --------
    >>> resident_memory() > 0
    True
    """
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):  # pragma: no cover - no procfs: the peak is an upper bound
        import resource  # POSIX only: the fallback where /proc is missing
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak) if sys.platform == "darwin" else int(peak) * 1024


def format_bytes(n: float) -> str:
    """``n`` bytes in MiB or GiB, for messages.

    >>> format_bytes(3 << 29)
    '1.5 GiB'
    """
    return f"{n / 2**30:.1f} GiB" if abs(n) >= 2**30 else f"{n / 2**20:.0f} MiB"


class LimitHit(CompilationLimitError):
    """A compilation limit was hit; ``limit`` names it (``"max_seconds"``, ``"max_nodes"`` or ``"max_memory"``).

    ``progress`` holds what a construction that reports it had reached (the ensemble construction: its
    order and, per level, the states expanded and the diagram's nodes), else ``{}``.
    """

    def __init__(self, message: str, limit: str) -> None:
        super().__init__(message)
        self.limit = limit
        self.progress: dict[str, object] = {}


class _Poll:
    """When to measure something costly (a node count, the RSS) that must stay under ``limit``.

    After each measurement taking ``cost`` seconds, the next one is due after ``wait`` seconds with
    ``20 * cost >= wait >= 4 * cost``: at most 5% of the time polling while far from the limit,
    shrinking to 20% when the growth rate seen so far would reach the limit within ``wait``.
    """

    __slots__ = ("measure", "limit", "base", "due", "last", "t_last", "rate", "peak")

    def __init__(self, measure: Callable[[], int], limit: int, base: int = 0) -> None:
        self.measure = measure
        self.limit = limit
        self.base = base
        self.due = 0.0
        self.last = 0
        self.t_last = time.perf_counter()
        self.rate = 0.0
        self.peak = 0

    def take(self) -> int:
        """Measure now (relative to ``base``) and schedule the next measurement."""
        t0 = time.perf_counter()
        value = self.measure() - self.base
        t1 = time.perf_counter()
        cost = max(t1 - t0, 2e-7)
        if t1 > self.t_last:
            self.rate = max(0.5 * self.rate, (value - self.last) / (t1 - self.t_last))
        self.last, self.t_last = value, t1
        self.peak = max(self.peak, value)
        wait = 20 * cost
        if self.rate > 0:
            wait = min(wait, max(4 * cost, 0.5 * (self.limit - value) / self.rate))
        self.due = t1 + wait
        return value


class Guard:
    """The limits of one compilation (see the module docstring).

    Builders call :meth:`tick` once per operation (the guard looks at the clock, and at the node
    count and memory when their polls are due); exporters call :meth:`check` with the number of
    nodes exported so far.

    Parameters
    ----------
    language : str
        Named in the messages.
    max_nodes, max_seconds, max_memory : int, float, int or None
        The limits (``None``: no limit).
    advice : str
        What the user can do, appended to every message (see :func:`advice`).
    """

    __slots__ = ("language", "max_nodes", "max_seconds", "max_memory", "advice", "t0", "deadline", "calls",
                 "phase", "hook", "on_late", "late_at", "longest", "_last", "_nodes", "_memory", "_next", "_size")

    def __init__(self, language: str, max_nodes: int | None, max_seconds: float | None,
                 max_memory: int | None = None, advice: str = "") -> None:
        self.language = language
        self.max_nodes = max_nodes
        self.max_seconds = max_seconds
        self.max_memory = max_memory
        self.advice = advice
        self.t0 = time.perf_counter()
        self.deadline = math.inf if max_seconds is None else self.t0 + max_seconds
        self.calls = 0
        self.phase = "building the model's functions"
        self.hook: Callable[[], None] | None = None
        #: Called once when :attr:`late` (the OBDD switches CUDD's sifting off then).
        self.on_late: Callable[[], None] | None = None
        self.late_at = math.inf if max_seconds is None else self.t0 + LATE * max_seconds
        #: The longest time between two steps so far (one backend operation, with any sifting inside it).
        self.longest = 0.0
        self._last = self.t0
        self._size: Callable[[], int] | None = None
        self._nodes: _Poll | None = None
        self._memory = None if max_memory is None else _Poll(resident_memory, max_memory, resident_memory())
        self._next = 0.0

    @property
    def seconds(self) -> float:
        """Seconds since the compilation started."""
        return time.perf_counter() - self.t0

    @property
    def remaining_seconds(self) -> float:
        """Seconds left before ``max_seconds`` (``inf`` without a time limit)."""
        return self.deadline - time.perf_counter()

    def peak_memory(self) -> int:
        """The largest growth of the resident memory since the start seen by the polls and now, in bytes
        (0 without a memory limit)."""
        if self._memory is None:
            return 0
        self._memory.take()
        return self._memory.peak

    def set_size(self, size: Callable[[], int] | None) -> None:
        """The backend's live node count, polled against ``max_nodes`` (``None``: stop polling)."""
        self._size = size
        self._nodes = None if size is None or self.max_nodes is None else _Poll(size, self.max_nodes)
        self._next = 0.0

    def tick(self) -> None:
        """One builder operation."""
        self.calls += 1
        self.step()

    def step(self) -> None:
        """Check the clock, and the node count and memory if their polls are due."""
        now = time.perf_counter()
        gap = now - self._last
        self._last = now
        if gap > self.longest:
            self.longest = gap
        if now > self.late_at or self.deadline - now < 2.5 * self.longest:
            self.late_at = -math.inf
            if self.on_late is not None:
                self.on_late()
                self.on_late = None
        if now > self.deadline:
            self._time_out()
        if now >= self._next:
            self._poll(None)

    @property
    def late(self) -> bool:
        """Whether 90% of ``max_seconds`` have passed, or less than 2.5 times the longest step so far is left.

        Successive CUDD siftings inside one operation take about twice as long each (the diagram
        doubles between them), so a sifting is not started when a step that long would not fit.
        """
        return self.max_seconds is not None and (
            time.perf_counter() > self.t0 + LATE * self.max_seconds or self.remaining_seconds < 2.5 * self.longest)

    def check(self, nodes: int | None = None) -> None:
        """Check every limit now; ``nodes`` (e.g. of an exported diagram) replaces the backend's count."""
        if time.perf_counter() > self.deadline:
            self._time_out()
        self._poll(nodes, force=True)

    def _poll(self, nodes: int | None, force: bool = False) -> None:
        if self.hook is not None:
            self.hook()
        n, m = self._nodes, self._memory
        now = time.perf_counter()
        if nodes is not None:
            if self.max_nodes is not None and nodes > self.max_nodes:
                self._too_many(nodes)
        elif n is not None and (force or now >= n.due):
            got = n.take()
            if got > n.limit:
                self._too_many(got)
        if m is not None and (force or now >= m.due):
            used = m.take()
            if used > m.limit:
                raise LimitHit(
                    f"Compiling to {self.language!r} exceeded max_memory={format_bytes(m.limit)} while {self.phase}: "
                    f"resident memory grew by {format_bytes(used)} ({self.calls} operations, "
                    f"{self.seconds:.1f} s). Raise 'max_memory'{self.advice}.", "max_memory")
        # the hook (the SDD's garbage collection) runs at least every 50 ms
        self._next = min(n.due if n is not None else math.inf, m.due if m is not None else math.inf,
                         now + 0.05 if self.hook is not None else math.inf)

    def check_nodes(self) -> None:
        """Read the backend's node count now and raise if it is over ``max_nodes`` (inside one operation)."""
        if self.max_nodes is not None and self._size is not None:
            got = int(self._size())
            if got > self.max_nodes:
                self._too_many(got)

    def nodes_now(self) -> int:
        """The backend's live node count (0 if unknown)."""
        return int(self._size()) if self._size is not None else 0

    def _time_out(self) -> None:
        raise LimitHit(
            f"Compiling to {self.language!r} exceeded max_seconds={self.max_seconds:g} while {self.phase} "
            f"({self.seconds:.1f} s, {self.calls} operations, {self.nodes_now()} live nodes). "
            f"Raise 'max_seconds'{self.advice}.", "max_seconds")

    def _too_many(self, nodes: int) -> None:
        raise LimitHit(
            f"Compiling to {self.language!r} exceeded max_nodes={self.max_nodes} while {self.phase}: "
            f"{nodes} nodes after {self.calls} operations ({self.seconds:.1f} s). "
            f"Raise 'max_nodes'{self.advice}.", "max_nodes")

    def out_of_memory(self, what: str) -> LimitHit:
        """The error for a backend that ran out of the memory it was given (``what`` says which)."""
        limit = "none" if self.max_memory is None else format_bytes(self.max_memory)
        return LimitHit(
            f"Compiling to {self.language!r} ran out of memory while {self.phase} ({what}; max_memory={limit}, "
            f"{self.seconds:.1f} s, {self.calls} operations). Raise 'max_memory' if the machine has more"
            f"{self.advice}.", "max_memory")


def advice(model: object, language: str) -> str:
    """What to suggest when compiling ``model`` to ``language`` hits a limit (appended to the messages).

    >>> import kcxai
    >>> advice(kcxai.datasets.running_example_tree(), "sdd")
    ", try another 'order', or use another language ('obdd'; a decision tree answers natively with 'dt')"
    """
    parts = []
    if callable(getattr(model, "rounded", None)):
        parts.append("round the model's weights to a coarser step (model.rounded(step), e.g. 1/100)")
    parts.append("try another 'order'")
    others = [lang for lang in ("sdd", "obdd") if lang != language]
    # a decision tree (models are not imported here); has_paths does not read the paths (a tree builds them)
    tree = hasattr(model, "arrays") and has_paths(model)
    parts.append(f"use another language ({', '.join(repr(o) for o in others)}"
                 + ("; a decision tree answers natively with 'dt')" if tree else ")"))
    return ", " + ", ".join(parts[:-1]) + ", or " + parts[-1]
