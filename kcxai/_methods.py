"""The explanation methods an :class:`~kcxai.Explainer` runs, by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kcxai._errors import InvalidInputError, InvalidTypeError

__all__ = ["Method", "METHODS", "SEARCH_METHODS", "resolve_method", "check_options"]


@dataclass(frozen=True)
class Method:
    """One explanation method.

    Attributes
    ----------
    name : str
    function : callable
        ``function(compiled, instance, delta, **options) -> Explanation``.
    bounds : {"error", "precision"}
        What ``delta`` bounds.
    fixed_delta : int or None
        The only ``delta`` the method takes (``"axp"``, ``"cxp"``), or ``None``.
    searches : bool
        Whether the method is an exact search, worst-case exponential, that takes ``max_seconds``
        (the others make at most a quadratic number of counting queries).
    """

    name: str
    function: Callable[..., Any]
    bounds: str
    fixed_delta: int | None = None
    searches: bool = False


def _methods() -> dict[str, Method]:
    from kcxai import explain as ex

    return {
        "min_idrs": Method("min_idrs", ex.min_idrs, "error"),
        "axp": Method("axp", ex.min_idrs, "error", fixed_delta=0),
        "smallest_idrs": Method("smallest_idrs", ex.smallest_idrs, "error", searches=True),
        "min_dual_idrs": Method("min_dual_idrs", ex.min_dual_idrs, "error"),
        "cxp": Method("cxp", ex.min_dual_idrs, "error", fixed_delta=0),
        "local_cdrs": Method("local_cdrs", ex.local_cdrs, "precision"),
        "min_cdrs": Method("min_cdrs", ex.min_cdrs, "precision", searches=True),
        "smallest_drs": Method("smallest_drs", ex.smallest_drs, "precision", searches=True),
    }


#: Names accepted by ``Explainer.explain(method=...)``.
METHODS = ("min_idrs", "axp", "smallest_idrs", "min_dual_idrs", "cxp", "local_cdrs", "min_cdrs", "smallest_drs")
#: The methods that are exact searches and take ``max_seconds``.
SEARCH_METHODS = ("smallest_idrs", "min_cdrs", "smallest_drs")


def check_options(method: Method, options: dict[str, Any]) -> None:
    """Reject a ``max_seconds`` the method does not take, or a bad one, before any work.

    >>> check_options(_methods()["min_idrs"], {"max_seconds": 5})
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: 'max_seconds' limits the exact searches ['smallest_idrs', 'min_cdrs', 'smallest_drs']; method='min_idrs' makes one counting query per feature tried and takes no time limit.
    """
    if "max_seconds" not in options:
        return
    if not method.searches:
        raise InvalidInputError(
            f"'max_seconds' limits the exact searches {list(SEARCH_METHODS)}; method={method.name!r} makes one "
            "counting query per feature tried and takes no time limit.")
    from kcxai._deadline import check_max_seconds

    check_max_seconds(options["max_seconds"])


def resolve_method(method: Any, delta: Any) -> tuple[Method, Any]:
    """The method called ``method`` and the ``delta`` to pass it.

    ``delta=None`` means 0 for error bounds (an abductive explanation); precision-bounded methods
    need an explicit ``delta`` (for example 0.95).

    Examples
    --------
    >>> from kcxai._methods import resolve_method
    >>> m, d = resolve_method("axp", None)
    >>> m.function.__name__, d
    ('min_idrs', 0)
    """
    if not isinstance(method, str):
        raise InvalidTypeError(f"'method' must be a str, one of {list(METHODS)}. Got {method!r} instead.")
    table = _methods()
    if method not in table:
        raise InvalidInputError(f"Unknown method {method!r}; choose one of {list(METHODS)}.")
    m = table[method]
    if m.fixed_delta is not None:
        if delta not in (None, 0):
            raise InvalidInputError(f"method={method!r} is defined with delta = 0. Got delta={delta!r} instead.")
        return m, m.fixed_delta
    if delta is None:
        if m.bounds == "precision":
            raise InvalidInputError(
                f"method={method!r} bounds precision from below: give 'delta' (for example delta=0.95).")
        return m, 0
    return m, delta
