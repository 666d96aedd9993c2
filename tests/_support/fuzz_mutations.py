"""Seeded mutations of model files and command lines for the fuzz tests (``tests/test_fuzz_*.py``).

Everything is driven by a ``random.Random`` so that a failure is reproduced from its seed. The
mutations aim at what broke loaders before (issue 14): values of the wrong type, numbers too
large to convert or compute with (``1e10000000`` as an exact number, ints over 4,300 digits,
``1e400``), deep nesting, counts that promise more than the file holds, non-ASCII digits, bytes
that are not UTF-8, truncation.

The budget: ``KCXAI_FUZZ_EXAMPLES`` (hypothesis examples per test; each example makes several
mutants) and ``KCXAI_FUZZ_SECONDS`` (the most one input may take; a guard against inputs whose cost
explodes, far above the milliseconds a load takes).
"""

from __future__ import annotations

import copy
import json
import os
import random
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import kcxai

#: Hypothesis examples per fuzz test (CI: a few seconds per test); raise it for a long run.
EXAMPLES = int(os.environ.get("KCXAI_FUZZ_EXAMPLES", "25"))
#: Mutants made from each drawn seed input.
MUTANTS = int(os.environ.get("KCXAI_FUZZ_MUTANTS", "8"))
#: The most seconds one mutated input may take (loading plus a prediction; typically < 0.1 s alone, but a
#: shared CI machine can stall a process for a second or two).
SECONDS = float(os.environ.get("KCXAI_FUZZ_SECONDS", "5.0"))
#: With KCXAI_FUZZ_MEMORY=1, also the most MB of Python allocations one input may peak at (slower).
MEMORY_MB = 100.0 if os.environ.get("KCXAI_FUZZ_MEMORY") else None

# raw JSON text put where a value was
#: A small labelled tree in the ``.dt`` / ``.map`` format, a seed for the format fuzzers.
SMALL_DT = "5\n0\nI 0 1\nT 2 3 4\n2 T no\n3 T yes\n4 T no\n0 f0 0 2\n0 f0 1 1\n1 f1 0 3\n1 f1 1 4\n"
SMALL_MAP = "Categorical\n2\nf0 0 =Private\nf0 1 =Public\nf1 0 =Male\nf1 1 =Female\n"

NASTY_JSON = [
    "9" * 5000, "-" + "9" * 4400, "1e400", "-1e400", "NaN", "Infinity", "1e10000000", "4.9e-400",
    '"1e10000000"', '"1e-100000000"', '"1/0"', '"0/0"', '"\\u0663/\\u0664"', '"1e\\u0661\\u0660\\u0660\\u0660\\u0660"',
    '"\\u00b2"', '"' + "9" * 5000 + '"', '"1_000"', '" 3/4 "', '"-0"', '"1e1000"', '"1e-1000"',
    "-1", "0", "1", "2", "3", "1000000000", "99999999999999999999", "0.5", "-0.0", "true", "false", "null",
    '""', "[]", "{}", "[[]]", "[0]", "[0, 1]", "[[0, 1], 1]", "[[0, 2], 0]", '"x"', '"a"' * 1, '{"a": 1}',
    "[" * 3000 + "]" * 3000, "[" * 40 + "]" * 40, '"' + "a" * 20000 + '"',
]

# tokens put into .dt/.map lines and command-line values
NASTY_TOKENS = [
    "\u00b2", "f\u00b2", "f\u0663", "\u0663", "f-1", "f01", "f", "f99999999999999999999", "-1", "0", "1", "7",
    "99999999999999999999999", "9" * 5000, "100000000", "1e400", "nan", "inf", "-inf", "=x", "!=1", "=", "T", "I",
    "#", "", " ", ",", ";", "\t", "1/0", "1e-30000000", "1e10000000", "0x10", "1_0", "\x00", "\ufffd", "\u202e",
    "[", "{", "]", '"', "[1,", '{"x": ', "[" * 2000, "true", "null", "Categorical", "Numerical", "a" * 5000,
]


@dataclass
class Tally:
    """What a fuzz test tried: inputs, how many were accepted, rejected (KcxaiError), and the slowest."""

    name: str
    tries: int = 0
    accepted: int = 0
    rejected: int = 0
    slowest: float = 0.0
    slowest_input: str = ""
    peak_mb: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items(), key=lambda kv: -kv[1]))
        mem = f", peak {self.peak_mb:.1f} MB" if self.peak_mb else ""
        slow = f" ({self.slowest_input[:200]})" if os.environ.get("KCXAI_FUZZ_VERBOSE") else ""
        return (f"{self.name}: {self.tries} inputs, {self.accepted} accepted, {self.rejected} rejected with a "
                f"KcxaiError ({kinds}); slowest {self.slowest * 1000:.0f} ms{slow}{mem}")


def run_one(tally: Tally, what: str, fn: Callable[[], Any]) -> Any:
    """Run ``fn`` on one mutated input: only a KcxaiError may escape it, within the time (and memory) budget."""
    tally.tries += 1
    if MEMORY_MB is not None:
        tracemalloc.start()
    t0 = time.perf_counter()
    out = None
    try:
        out = fn()
        tally.accepted += 1
    except kcxai.KcxaiError as e:
        tally.rejected += 1
        tally.errors[type(e).__name__] = tally.errors.get(type(e).__name__, 0) + 1
        message = str(e)
        assert message and "\n" not in message and len(message) < 2000, (what, message[:300])
    except BaseException as e:
        raise AssertionError(f"{type(e).__name__} (not a KcxaiError) on {what}: {str(e)[:300]}") from e
    finally:
        seconds = time.perf_counter() - t0
        if MEMORY_MB is not None:
            peak = tracemalloc.get_traced_memory()[1] / 1e6
            tracemalloc.stop()
            tally.peak_mb = max(tally.peak_mb, peak)
            assert peak < MEMORY_MB, f"{peak:.0f} MB on {what}"
    if seconds > tally.slowest:
        tally.slowest, tally.slowest_input = seconds, what
    assert seconds < SECONDS, f"{seconds:.1f} s on {what}"
    return out


# -- JSON ----------------------------------------------------------------------------------------


def _slots(obj: Any) -> Iterator[tuple[Any, Any]]:
    """Every (container, key) of a JSON value, without recursion."""
    stack = [obj]
    while stack:
        x = stack.pop()
        keys = list(x) if isinstance(x, dict) else range(len(x)) if isinstance(x, list) else []
        for k in keys:
            yield x, k
            if isinstance(x[k], (dict, list)):
                stack.append(x[k])


def mutate_json(obj: Any, rng: random.Random) -> bytes:
    """The JSON text of ``obj`` after one to three structural mutations, sometimes also text mutations."""
    obj = copy.deepcopy(obj)
    raw: dict[str, str] = {}
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        slots = list(_slots(obj))
        if not slots:
            break
        parent, key = rng.choice(slots)
        op = rng.randrange(8)
        if op <= 1:
            mark = f"@@{len(raw)}@@"
            raw[json.dumps(mark)] = rng.choice(NASTY_JSON)
            parent[key] = mark
        elif op == 2:
            del parent[key]
        elif op == 3 and isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        elif op == 4 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
            parent[key] += rng.choice((-2, -1, 1, 2, 1000, 10**9))
        elif op == 5:
            parent[key] = [parent[key]]
        else:  # a value from elsewhere: type confusion with plausible shapes
            other, okey = rng.choice(slots)
            parent[key] = copy.deepcopy(other[okey])
    text = json.dumps(obj)
    for mark, token in raw.items():
        text = text.replace(mark, token, 1)
    data = text.encode("utf-8")
    if rng.random() < 0.2:
        data = mutate_bytes(data, rng)
    return data


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """Byte-level damage: a span deleted or duplicated, a token inserted, a byte changed, a truncation."""
    if not data:
        return rng.choice(NASTY_TOKENS).encode("utf-8")
    i = rng.randrange(len(data))
    j = min(len(data), i + rng.randint(1, 40))
    op = rng.randrange(6)
    if op == 0:
        return data[:i] + data[j:]
    if op == 1:
        return data[:j] + data[i:j] + data[j:]
    if op == 2:
        return data[:i] + rng.choice(NASTY_TOKENS).encode("utf-8") + data[i:]
    if op == 3:
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    if op == 4:
        return data[:i]
    return data[:i] + rng.choice((b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00")) + data[i:]


# -- .dt / .map ----------------------------------------------------------------------------------


def mutate_lines(text: str, rng: random.Random) -> bytes:
    """A line-based text after one to three mutations of lines and tokens, sometimes also of bytes."""
    lines = text.splitlines()
    for _ in range(rng.choice((1, 1, 2, 3))):
        if not lines:
            lines = [rng.choice(NASTY_TOKENS)]
            continue
        k = rng.randrange(len(lines))
        op = rng.randrange(7)
        if op == 0:
            del lines[k]
        elif op == 1:
            lines.insert(k, lines[k])
        elif op == 2:
            a = rng.randrange(len(lines))
            lines[k], lines[a] = lines[a], lines[k]
        elif op <= 4:
            toks = lines[k].split() or [""]
            t = rng.randrange(len(toks))
            tok = toks[t]
            if op == 3 or not tok.lstrip("-").isdigit() or len(tok) > 18:
                toks[t] = rng.choice(NASTY_TOKENS)
            else:
                toks[t] = str(int(tok) + rng.choice((-1, 1, 2, 100, 10**8)))
            lines[k] = " ".join(toks)
        elif op == 5:
            lines.insert(k, " ".join(rng.choice(NASTY_TOKENS) for _ in range(rng.randint(1, 4))))
        else:
            lines = lines[:k]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if rng.random() < 0.15:
        data = mutate_bytes(data, rng)
    return data


# -- command lines -------------------------------------------------------------------------------


def mutate_text_value(text: str, rng: random.Random) -> str:
    """A command-line value after a character-level mutation (kept valid UTF-8: argv is text)."""
    op = rng.randrange(5)
    if op == 0:
        return rng.choice(NASTY_TOKENS)
    if not text:
        return rng.choice(NASTY_TOKENS)
    i = rng.randrange(len(text) + 1)
    j = min(len(text), i + rng.randint(1, 8))
    if op == 1:
        return text[:i] + text[j:]
    if op == 2:
        return text[:i] + rng.choice(NASTY_TOKENS) + text[i:]
    if op == 3:
        return text[:i] + text[i:j] * rng.randint(2, 4) + text[j:]
    parts = text.split(",")
    parts[rng.randrange(len(parts))] = rng.choice(NASTY_TOKENS)
    return ",".join(parts)


def mutate_argv(argv: list[str], rng: random.Random) -> list[str]:
    """``argv`` with one or two values mutated, an argument dropped, duplicated or swapped."""
    argv = list(argv)
    for _ in range(rng.choice((1, 1, 2))):
        if not argv:
            break
        k = rng.randrange(len(argv))
        op = rng.randrange(6)
        if op <= 2:
            argv[k] = mutate_text_value(argv[k], rng)
        elif op == 3:
            del argv[k]
        elif op == 4:
            argv.insert(k, argv[k])
        else:
            a = rng.randrange(len(argv))
            argv[k], argv[a] = argv[a], argv[k]
    return argv
