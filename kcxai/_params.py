"""Argument rules declared once: what an argument may be, and the one error when it is not.

A rule is one of a few kinds: :class:`Instance` (an instance of given types, under a readable name),
:class:`Range` (an int or a real number in an interval, open or closed at each end; ``bool`` is never a
number here, NaN is in no interval), :class:`Options` (one of given values) and :data:`NONE` (the value
``None``). An argument's rules are a tuple of them: the value must satisfy one.

:func:`check` checks one argument; :func:`validate_params` declares a table of them on a function and
checks the call's arguments before the body runs. Both raise the package's errors with one message form,
naming the argument, what was expected and what was got::

    'space' must be a FeatureSpace. Got dict instead.
    'n_jobs' must be a non-zero int (-1: all cores). Got 0 instead.

:class:`~kcxai.InvalidTypeError` when no rule takes the value's type at all (a string where an int is
expected), :class:`~kcxai.InvalidInputError` when one does but the value is outside it (``-1`` where a
positive int is expected, an unknown option).

In the manner of scikit-learn's ``_parameter_constraints`` (``Interval``, ``StrOptions``), written here
against kcxai's own error classes.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, Union, cast

from kcxai._errors import InvalidInputError, InvalidTypeError

__all__ = ["Instance", "Range", "Options", "NONE", "Rule", "Rules", "check", "validate_params", "check_fit_budget",
           "POSITIVE_SECONDS", "check_seconds",
           "DEFAULT_FIT_BUDGET", "POSITIVE_INT", "NON_NEGATIVE_INT", "INT", "BOOL", "PROBABILITY", "OPEN_PROBABILITY"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Instance:
    """An instance of one of ``types``, named ``name`` in messages (``"a FeatureSpace"``).

    A refused value is reported by its type's name (``Got dict instead.``), as the text of an arbitrary
    object says little, unless ``by_type=False`` (``BOOL`` reports ``Got 'yes' instead.``).

    >>> Instance(str, name="a string").accepts("a"), Instance(str, name="a string").accepts(1)
    (True, False)
    """

    __slots__ = ("types", "description", "by_type")

    def __init__(self, *types: type, name: str, by_type: bool = True) -> None:
        self.types = types
        self.description = name
        self.by_type = by_type

    def typed(self, value: Any) -> bool:
        return isinstance(value, self.types)

    def accepts(self, value: Any) -> bool:
        return self.typed(value)


#: Ends of an interval that belong to it.
CLOSED = ("both", "left", "right", "neither")


class Range:
    """An ``int`` (``kind=int``, or ``numbers.Integral`` to take numpy ints too) or a real number
    (``kind=numbers.Real``) in ``[low, high]``, each end closed or open as ``closed`` says
    (``"both"``, ``"left"``, ``"right"``, ``"neither"``); ``None`` leaves that side unbounded.

    ``bool`` is refused (``True`` is not the number 1 here), and so is NaN.

    >>> r = Range(numbers.Real, 0, 1, closed="neither")
    >>> r.description, r.accepts(0.5), r.accepts(1), r.accepts(True), r.accepts(float("nan"))
    ('a number strictly between 0 and 1', True, False, False, False)
    >>> Range(int, 1).description, Range(int, 0).description, Range(int, 1, 9).description
    ('a positive int', 'a non-negative int', 'an int in [1, 9]')
    """

    __slots__ = ("kind", "low", "high", "closed", "description")
    by_type = False

    def __init__(self, kind: type, low: float | None = None, high: float | None = None, *,
                 closed: str = "both", description: str | None = None) -> None:
        if closed not in CLOSED:
            raise ValueError(f"closed must be one of {list(CLOSED)}, not {closed!r}")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        self.description = description or self._describe()

    def typed(self, value: Any) -> bool:
        return isinstance(value, self.kind) and not isinstance(value, bool)

    def accepts(self, value: Any) -> bool:
        if not self.typed(value) or value != value:  # NaN is in no interval
            return False
        lo_closed, hi_closed = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.low is not None and not (self.low <= value if lo_closed else self.low < value):
            return False
        return self.high is None or bool(value <= self.high if hi_closed else value < self.high)

    def _describe(self) -> str:
        integral = issubclass(self.kind, numbers.Integral)
        noun = "int" if integral else "number"
        low, high, left = self.low, self.high, self.closed in ("both", "left")
        if high is None:
            if low is None:
                return "an int" if integral else "a real number"
            if low == 0 or (integral and low == 1 and left):
                return f"a {'non-negative' if left and low == 0 else 'positive'} {noun}"
            return f"a{'n' if integral else ''} {noun} {'>=' if left else '>'} {low}"
        if self.closed == "neither" and not integral and low is not None:
            return f"a number strictly between {low} and {high}"
        lo = "-inf" if low is None else low
        brackets = ("[" if left and low is not None else "(", "]" if self.closed in ("both", "right") else ")")
        return f"a{'n' if integral else ''} {noun} in {brackets[0]}{lo}, {high}{brackets[1]}"


class Options:
    """One of ``values`` (compared by ``==`` for strings, by identity otherwise: ``True`` is not ``1``).

    >>> Options(("a", "b")).description, Options(("a", "b")).accepts("b"), Options((True,)).accepts(1)
    ("one of ['a', 'b']", True, False)
    """

    __slots__ = ("values", "description")
    by_type = False

    def __init__(self, values: Sequence[Any], *, description: str | None = None) -> None:
        self.values = tuple(values)
        self.description = description or f"one of {list(self.values)}"

    def typed(self, value: Any) -> bool:
        return True  # any value is of an option's "type": a miss is a wrong value

    def accepts(self, value: Any) -> bool:
        return any(value is v or (isinstance(value, str) and isinstance(v, str) and value == v)
                   for v in self.values)


class _NoneRule:
    """The value ``None``."""

    __slots__ = ()
    by_type = False
    description = "None"

    def typed(self, value: Any) -> bool:
        return value is None

    def accepts(self, value: Any) -> bool:
        return value is None


#: The rule taking ``None`` (an optional argument left out).
NONE = _NoneRule()

Rule = Union[Instance, Range, Options, _NoneRule]
#: What a table declares for an argument: one rule or several, of which the value must satisfy one.
Rules = Union[Rule, Sequence[Rule]]

#: Common rules.
POSITIVE_INT = Range(int, 1)
NON_NEGATIVE_INT = Range(int, 0)
INT = Range(numbers.Integral)
BOOL = Instance(bool, name="True or False", by_type=False)
#: A probability: a real number in [0, 1] (int, Fraction or float).
PROBABILITY = Range(numbers.Real, 0, 1, description="a real number in [0, 1]")
#: A confidence: a real number strictly between 0 and 1.
OPEN_PROBABILITY = Range(numbers.Real, 0, 1, closed="neither")


def _as_tuple(rules: Rules) -> tuple[Rule, ...]:
    return tuple(rules) if isinstance(rules, Sequence) else (rules,)


def check(name: str, value: T, rules: Rules) -> T:
    """``value`` if it satisfies one of ``rules``, else the error naming ``name``.

    Raises
    ------
    InvalidTypeError
        No rule takes the value's type.
    InvalidInputError
        A rule takes its type, none its value.

    Examples
    --------
    >>> check("top", 3, POSITIVE_INT)
    3
    >>> check("top", 0, POSITIVE_INT)
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: 'top' must be a positive int. Got 0 instead.
    >>> check("top", "3", (NONE, POSITIVE_INT))
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidTypeError: 'top' must be None or a positive int. Got '3' instead.
    """
    table = _as_tuple(rules)
    if any(r.accepts(value) for r in table):
        return value
    raise refusal(name, value, table)


def refusal(name: str, value: Any, rules: Rules) -> InvalidInputError | InvalidTypeError:
    """The error for ``value`` refused by ``rules`` (not raised: the caller raises it)."""
    table = _as_tuple(rules)
    expected = " or ".join(r.description for r in table)
    got = type(value).__name__ if all(r.by_type for r in table) else repr(value)
    message = f"'{name}' must be {expected}. Got {got} instead."
    if any(r.typed(value) for r in table):
        return InvalidInputError(message)
    return InvalidTypeError(message)


def validate_params(**table: Rules) -> Callable[[F], F]:
    """Declare the rules of a function's arguments; each call checks them before the body runs.

    Only the arguments named in the table are checked, whether passed or left at their default (a
    default is checked too, so a table and a signature cannot disagree unseen).

    Examples
    --------
    >>> @validate_params(top=POSITIVE_INT, how=Options(("bar", "text")))
    ... def show(data, *, top=10, how="bar"):
    ...     return top, how
    >>> show([], top=3)
    (3, 'bar')
    >>> show([], how="pie")
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: 'how' must be one of ['bar', 'text']. Got 'pie' instead.
    """
    rules = {name: _as_tuple(r) for name, r in table.items()}

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        unknown = set(rules) - set(signature.parameters)
        if unknown:
            raise TypeError(f"validate_params: {func.__qualname__} has no argument {sorted(unknown)}")

        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return func(*args, **kwargs)  # Python's own message for a call that does not fit
            for name, rs in rules.items():
                value = bound.arguments.get(name, signature.parameters[name].default)
                if not any(r.accepts(value) for r in rs):
                    raise refusal(name, value, rs)
            return func(*args, **kwargs)

        checked.__signature__ = signature  # type: ignore[attr-defined]
        return checked  # type: ignore[return-value]

    return decorate


#: The default ``fit_budget`` of the :class:`~kcxai.Explainer`, in seconds of counted work (see its docstring).
DEFAULT_FIT_BUDGET = 30.0

#: A budget in seconds (of work, or of the clock): the fit budget, the exact probe's.
POSITIVE_SECONDS = Range(numbers.Real, 0, closed="neither", description="a positive number of seconds")


def check_seconds(name: str, value: object) -> float:
    """``value`` as a float, or a :class:`~kcxai.KcxaiError` naming ``name``: a finite positive number of seconds
    (the rule of every budget: the fit budget, the probe's).

    >>> check_seconds("max_seconds", 3)
    3.0
    >>> check_seconds("max_seconds", float("inf"))
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: 'max_seconds' must be a finite positive number of seconds. Got inf.
    """
    check(name, value, POSITIVE_SECONDS)
    seconds = float(cast(float, value))
    if not math.isfinite(seconds):
        raise InvalidInputError(f"'{name}' must be a finite positive number of seconds. Got {value!r}.")
    return seconds


def check_fit_budget(fit_budget: object) -> float:
    """``fit_budget`` as a float, or a :class:`~kcxai.KcxaiError` naming it (the one rule of the Explainer's
    ``fit_budget`` and the command line's ``--fit-budget``): a finite positive number of seconds of work.

    >>> check_fit_budget(2)
    2.0
    >>> check_fit_budget(0)
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: 'fit_budget' must be a positive number of seconds. Got 0 instead.
    """
    return check_seconds("fit_budget", fit_budget)
