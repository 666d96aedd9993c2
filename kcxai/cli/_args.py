"""Argument types of the ``kcxai`` command line: every option is checked when it is parsed.

Each function takes the option's text and returns its value, or raises
``argparse.ArgumentTypeError`` (argparse then prints one line and exits with
status 2). Numbers are read with bounded cost: ``--delta 1e-30000000`` is
refused at once instead of building a 30-million-digit integer.
"""

from __future__ import annotations

import argparse
import math
import os
import re
from fractions import Fraction

from kcxai._errors import KcxaiError, ModelFormatError
from kcxai._untrusted import parse_exact
from kcxai.explain._methods import DEFAULT_METHOD, DEFAULT_PRECISION, METHODS
from kcxai._params import DEFAULT_FIT_BUDGET, check_fit_budget

__all__ = ["positive_int", "nonnegative_int", "seed", "delta", "delta_float", "positive_seconds",
           "seconds_or_none", "unit_float", "output_dir", "fit_budget", "add_fit_budget_arg", "fit_budget_of"]

_INT = re.compile(r"[+-]?[0-9]{1,18}")
#: The largest seed: NumPy and scikit-learn take seeds below 2**32.
MAX_SEED = 2**32 - 1


def _int(text: str, expected: str) -> int:
    if _INT.fullmatch(text.strip()) is None:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text[:40]!r}")
    return int(text)


def positive_int(text: str) -> int:
    """An integer >= 1.

    >>> positive_int("3")
    3
    """
    v = _int(text, "a positive integer")
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    v = _int(text, "a non-negative integer")
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return v


def seed(text: str) -> int:
    """A random seed in [0, 2**32 - 1]."""
    v = _int(text, f"a seed, an integer in [0, {MAX_SEED}]")
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"expected a seed, an integer in [0, {MAX_SEED}], got {text!r}")
    return v


def delta(text: str) -> Fraction:
    """An exact error bound in [0, 1] from ``0.01``, ``1e-3`` or ``1/100``.

    >>> delta("1/100"), delta("1e-3")
    (Fraction(1, 100), Fraction(1, 1000))
    >>> delta("1e-30000000")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a number in [0, 1] such as 0.01 or 1/100 (at most 100 characters, exponent at most 1000), got '1e-30000000'
    """  # noqa: E501 (a doctest's one-line error message)
    shown = text if len(text) <= 40 else text[:30] + f"... ({len(text)} characters)"
    expected = "a number in [0, 1] such as 0.01 or 1/100 (at most 100 characters, exponent at most 1000)"
    if len(text) > 100:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown!r}")
    try:
        value = parse_exact(text.strip(), "--delta")
    except ModelFormatError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {shown!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {shown!r}")
    return value


def delta_float(text: str) -> float:
    """An error bound in [0, 1] as a float (checked as :func:`delta`)."""
    return float(delta(text))


def _finite(text: str, expected: str) -> float:
    try:
        v = float(text) if len(text) <= 100 else math.nan
    except ValueError:
        v = math.nan
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text[:40]!r}")
    return v


def positive_seconds(text: str) -> float:
    """A finite number of seconds > 0."""
    v = _finite(text, "a positive number of seconds")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return v


def seconds_or_none(text: str) -> float:
    """A finite number of seconds > 0, or ``none`` (no limit: returned as ``inf``).

    >>> seconds_or_none("2.5"), seconds_or_none("none")
    (2.5, inf)
    """
    if text.strip().lower() == "none":
        return math.inf
    v = _finite(text, "a positive number of seconds or 'none'")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds or 'none', got {text!r}")
    return v


def fit_budget(text: str) -> float:
    """``--fit-budget``: read as the :class:`~kcxai.Explainer`'s ``fit_budget``, under its one rule
    (:func:`kcxai._params.check_fit_budget`: a finite positive number of seconds of work).

    >>> fit_budget("2.5")
    2.5
    >>> fit_budget("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: 'fit_budget' must be a positive number of seconds. Got 0.0 instead.
    """
    try:
        value = float(text) if len(text) <= 100 else math.nan
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text[:40]!r}") from None
    try:
        return check_fit_budget(value)
    except KcxaiError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_fit_budget_arg(p: argparse.ArgumentParser) -> None:
    """``--fit-budget``: the :class:`~kcxai.Explainer`'s ``fit_budget``."""
    p.add_argument("--fit-budget", type=fit_budget, default=None, metavar="SECONDS",
                   help="the work a tree ensemble that does not compile exactly within the probe may spend on its "
                        "bounded form, in seconds of counted work (Explainer(fit_budget=...); default "
                        f"{DEFAULT_FIT_BUDGET:g}): counted, not timed, so the same budget gives the same answers on "
                        "any machine; a larger budget leaves less undecided")


def fit_budget_of(args: argparse.Namespace) -> float:
    """The :class:`~kcxai.Explainer`'s ``fit_budget`` given by ``--fit-budget`` (else its default)."""
    budget = getattr(args, "fit_budget", None)
    return DEFAULT_FIT_BUDGET if budget is None else float(budget)


def unit_float(text: str) -> float:
    """A finite number in [0, 1]."""
    v = _finite(text, "a number in [0, 1]")
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return v


def output_dir(text: str) -> str:
    """A directory that exists and is writable, or that can be created (its nearest existing parent is a
    writable directory). Nothing is created here."""
    if not text or "\0" in text:
        raise argparse.ArgumentTypeError(f"expected a directory path, got {text!r}")
    path = os.path.abspath(text)
    probe = path
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        what = "is a file, not a directory" if probe == path else f"cannot be created: {probe!r} is a file"
        raise argparse.ArgumentTypeError(f"{text!r} {what}")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not writable (no write permission on {probe!r})")
    return text


def add_method_args(p: argparse.ArgumentParser) -> None:
    """``--method``, ``--delta``, ``--precision`` and ``--max-seconds``, read from the method table."""
    p.add_argument("--method", "-m", default=None, choices=list(METHODS), metavar="METHOD",
                   help=f"the explanation: {', '.join(METHODS)}; default {DEFAULT_METHOD} (precision-bounded), "
                        "or min_idrs when only --delta is given")
    p.add_argument("--delta", "-d", type=delta, default=None,
                   help="upper bound on the error Pr(kappa(x) != c and x_S = v_S) of the error-bounded methods "
                        "(min_idrs, smallest_idrs, min_dual_idrs, ...), read exactly (0.01, 1/100); default 0")
    p.add_argument("--precision", "-p", type=delta, default=None,
                   help="lower bound on the precision Pr(kappa(x) = c | x_S = v_S) of the precision-bounded "
                        "methods (local_cdrs, min_cdrs, smallest_drs), read exactly; "
                        f"default {float(DEFAULT_PRECISION)}")
    p.add_argument("--max-seconds", type=seconds_or_none, default=None, metavar="SECONDS",
                   help="time limit of each explanation (default 60; 'none': no limit)")
    p.add_argument("--no-inflate", dest="inflate", action="store_false", default=None,
                   help="print each set with its features fixed to the row's cells (inflate=False); by default "
                        "AXps and precision-bounded sets are widened where the engine can (kcxai.inflate)")


def method_options(args: argparse.Namespace) -> dict[str, object]:
    """The options :func:`add_method_args` read that go to the method: ``max_seconds`` and ``inflate`` when given."""
    options: dict[str, object] = {}
    if args.max_seconds is not None:
        options["max_seconds"] = args.max_seconds
    if args.inflate is not None:
        options["inflate"] = args.inflate
    return options
