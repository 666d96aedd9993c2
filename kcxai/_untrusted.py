"""Reading untrusted text with bounded cost: JSON and exact numbers.

Every check here runs before anything is allocated or computed from the value
it guards, so a short file cannot cost much time or memory:

- JSON nesting is at most :data:`MAX_DEPTH` levels (kcxai's own files use 8);
- a JSON integer has at most :data:`MAX_INT_DIGITS` digits, a JSON float must be
  finite (``1e400`` and ``NaN`` are rejected, not read as ``inf``/``nan``);
- an exact number written as text (``"3/4"``, ``"1e-3"``) has at most
  :data:`MAX_NUMBER_CHARS` characters and a decimal exponent of at most
  :data:`MAX_EXPONENT` in absolute value (``Fraction("1e100000000")`` would
  otherwise build a 100-million-digit integer).

Errors are :class:`~kcxai.ModelFormatError` naming the place (``file:line:column``
for JSON text, the field for numbers).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Any

from kcxai._errors import ModelFormatError
from kcxai._gc import gc_paused

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "MAX_NUMBER_CHARS", "MAX_EXPONENT", "loads", "parse_exact",
           "check_depth", "shorten"]

#: Deepest JSON nesting accepted (lists and objects inside each other).
MAX_DEPTH = 32
#: Most digits in a JSON integer.
MAX_INT_DIGITS = 1000
#: Longest exact number written as text.
MAX_NUMBER_CHARS = 1000
#: Largest decimal exponent (``e...``) in an exact number written as text.
MAX_EXPONENT = 1000


class _BadNumber(Exception):
    def __init__(self, token: str, why: str) -> None:
        super().__init__(why)
        self.token = token
        self.why = why


def _parse_int(s: str) -> int:
    if len(s) - s.startswith("-") > MAX_INT_DIGITS:
        raise _BadNumber(s, f"an integer with {len(s)} digits (at most {MAX_INT_DIGITS} are accepted)")
    return int(s)


def _parse_float(s: str) -> float:
    x = float(s)
    if x in (float("inf"), float("-inf")):
        raise _BadNumber(s, f"the number {shorten(s, 40)} is beyond the range of a float")
    return x


def _parse_constant(s: str) -> Any:
    raise _BadNumber(s, f"{s} is not a number JSON allows (kcxai models hold finite numbers only)")


def _place(text: str, token: str) -> str:
    """``line:column`` of the first stand-alone occurrence of ``token`` in ``text`` (no regex is built
    from the token: compiling a 100,000-character pattern takes a second)."""
    pos = text.find(token)
    while pos >= 0:
        before, after = text[pos - 1:pos], text[pos + len(token):pos + len(token) + 1]
        if not (before.isalnum() or before in (".", '"', "+", "-", "_")) and \
                not (after.isalnum() or after in (".", "_")):
            break
        pos = text.find(token, pos + 1)
    pos = max(pos, 0) if pos >= 0 else max(text.find(token), 0)
    line = text.count("\n", 0, pos) + 1
    return f"{line}:{pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def shorten(s: str, limit: int = 200) -> str:
    """``s`` cut to about ``limit`` characters, with the cut marked (for error messages)."""
    return s if len(s) <= limit else f"{s[: limit - 30]}... ({len(s)} characters)"


def check_depth(obj: Any, where: str) -> None:
    """Raise :class:`ModelFormatError` if ``obj`` nests lists/dicts deeper than :data:`MAX_DEPTH`.

    >>> check_depth(-9223372036854775808, "m.json")  # a bare number nests nothing (its type is checked later)
    """
    if not isinstance(obj, (list, dict)):
        return
    stack = [(obj, 1)]
    while stack:
        x, d = stack.pop()
        if d > MAX_DEPTH:
            raise ModelFormatError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels.")
        items = x.values() if isinstance(x, dict) else x
        stack.extend((v, d + 1) for v in items if isinstance(v, (list, dict)))


def loads(text: str, where: str) -> Any:
    """Parse JSON ``text`` (read from ``where``) within the bounds above.

    Examples
    --------
    >>> from kcxai._untrusted import loads
    >>> loads('{"w": [1, 2.5]}', "m.json")
    {'w': [1, 2.5]}
    >>> loads('{"w": [1,\\n 1e400]}', "m.json")
    Traceback (most recent call last):
    ...
    kcxai._errors.ModelFormatError: m.json:2:2: the number 1e400 is beyond the range of a float.
    """
    try:
        with gc_paused():  # the parsed JSON holds no cycles
            obj = json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)
    except json.JSONDecodeError as e:
        raise ModelFormatError(f"{where} is not valid JSON: {e}") from None
    except _BadNumber as e:
        raise ModelFormatError(f"{where}:{_place(text, e.token)}: {e.why}.") from None
    except RecursionError:
        raise ModelFormatError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels.") from None
    check_depth(obj, where)
    return obj


_EXPONENT = re.compile(r"[eE]([+-]?[\d_]*)")  # \d: Fraction reads any Unicode decimal digit


def parse_exact(s: Any, where: str) -> Fraction:
    """An exact number from a JSON value: an ``int`` or a string like ``"3/4"``, ``"-0.25"``, ``"1e-3"``.

    Examples
    --------
    >>> from kcxai._untrusted import parse_exact
    >>> parse_exact("3/4", "'weights'"), parse_exact("1e-3", "'weights'"), parse_exact(2, "'weights'")
    (Fraction(3, 4), Fraction(1, 1000), Fraction(2, 1))
    >>> parse_exact("1e10000000", "'weights'")
    Traceback (most recent call last):
    ...
    kcxai._errors.ModelFormatError: 'weights' must be an exact number like '3/4' with an exponent of at most 1000. Got '1e10000000'.
    """  # noqa: E501 (a doctest's one-line error message)
    if isinstance(s, bool) or not isinstance(s, (str, int)):
        raise ModelFormatError(
            f"{where} must be an exact number written as a string like '3/4'. Got {shorten(repr(s), 80)}.")
    if isinstance(s, int):
        return Fraction(s)
    if len(s) > MAX_NUMBER_CHARS:
        raise ModelFormatError(
            f"{where} must be an exact number of at most {MAX_NUMBER_CHARS} characters. Got {len(s)} characters.")
    m = _EXPONENT.search(s)
    if m is not None:
        digits = m.group(1).replace("_", "").lstrip("+-")
        if digits.isdecimal() and int(digits) > MAX_EXPONENT:
            raise ModelFormatError(
                f"{where} must be an exact number like '3/4' with an exponent of at most {MAX_EXPONENT}. "
                f"Got {shorten(repr(s), 80)}.")
    try:
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        raise ModelFormatError(f"{where} must be an exact number like '3/4'. Got {shorten(repr(s), 80)}.") from None
