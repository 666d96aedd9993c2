"""The explanation methods, declared once: what each computes, what its bound means, what answers it needs.

Every door reads this table: the functional explainers check their oracle against it, the
:class:`~kcxai.Explainer` and the command line pick an engine from it (with the language registry,
:data:`kcxai.engines.LANGUAGES`, which says what each language answers).

A method is given one bound, named after what it bounds (one meaning per name):

* ``delta``: an upper bound on the error ``Pr(kappa(x) != c and x_S = v_S)`` (the paper's
  I-delta-relevant sets, their dual sets, and at ``delta = 0`` AXps and CXps);
* ``precision``: a lower bound on ``Pr(kappa(x) = c | x_S = v_S)`` (the paper's C-delta-relevant
  sets, Anchor's precision).

What answers a method can use depends on the bound: exact counts always; sufficiency decisions
(:class:`~kcxai.oracle.DecisionOracle`, the ensemble engines) when ``delta = 0`` or
``precision = 1``; certified estimates (the ``sampling`` language) for the deletion loops
(``min_idrs``, ``local_cdrs``) at other bounds.

Every door runs a method the same way (:func:`kcxai.explain._query.explain_with`): the public
function (``kcxai.min_idrs``, ...), its alias for tree ensembles (``kcxai.ensemble_axp`` is ``axp``,
``ensemble_cxp`` is ``cxp``, ``smallest_ensemble_axp`` / ``_cxp`` are ``smallest_axp`` /
``smallest_cxp``), the :class:`~kcxai.Explainer`, the batch runner and the command line. Its errors
and its result name the method.

The default order of a deletion loop (``order=None``) is one rule, whichever name calls the method
(:data:`DEFAULT_ORDER`): a loop that drops features from a set that keeps the prediction
(``min_idrs`` / ``axp``, ``local_cdrs``, ``min_cdrs``) tries them by index over exact counts and
estimates (the paper's order), and fewer values first over sufficiency decisions
(:func:`~kcxai.explain._progression.deletion_order`: the features the trees cut most stay fixed while
the others are decided); every other loop tries features by index. The measurements behind the rule,
and the models on which index order is faster, are in ``docs/results.md`` ("One door").
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import cast

from kcxai._deadline import check_max_seconds
from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._types import ProbabilityLike
from kcxai.explain.explanation import Explanation

__all__ = ["Method", "METHODS", "BOUNDS", "DEFAULT_PRECISION", "DEFAULT_METHOD", "DEFAULT_ORDER", "get_method",
           "resolve_method", "check_options"]

#: The two bounds, by argument name, with what they bound.
BOUNDS = {
    "delta": "an upper bound on the error Pr(kappa(x) != c and x_S = v_S)",
    "precision": "a lower bound on the precision Pr(kappa(x) = c | x_S = v_S)",
}

#: The precision asked of precision-bounded methods when none is given (the Explainer's and the CLI's default).
DEFAULT_PRECISION = Fraction(95, 100)

#: The default order of a deletion loop dropping features from a relevant set, by the kind of answer that
#: decides it (see the module docstring): ``"index"``, or ``"fewest values"`` first (ties by index).
DEFAULT_ORDER = {"counts": "index", "bounds": "index", "estimates": "index", "decisions": "fewest values"}


@dataclass(frozen=True)
class Method:
    """One explanation method.

    Attributes
    ----------
    name : str
    target : str
        ``"module:function"`` under :mod:`kcxai.explain`: the public function
        ``function(obj, instance, bound, **options) -> Explanation``, whose keyword-only parameters are
        the method's options.
    algorithm : str
        ``"module:function"`` under :mod:`kcxai.explain`: the algorithm, ``function(q, bound, **options)
        -> Explanation`` on a :class:`~kcxai.explain._query.Query` (the options but ``max_seconds`` and
        ``inflate``, which the query applies).
    bound : {"delta", "precision"}
        The argument the method is given (see :data:`BOUNDS`).
    fixed : Fraction or None
        The only value the bound takes (``"axp"``, ``"cxp"``: delta = 0), or ``None``.
    kind : {"relevant", "dual"}
        A set that keeps the prediction, or a (contrastive) set that can change it.
    searches : bool
        Whether it is an exact search, worst-case exponential in the number of features (the others
        make at most a quadratic number of queries).
    estimates : bool
        Whether certified estimates (the ``sampling`` language) answer it away from the delta = 0 case.
    batch : bool
        Whether it is Algorithm 1, which an oracle's batch hook (:class:`~kcxai.oracle.BatchOracle`)
        answers for many instances at once when it runs in its default form (no ``order``, ``start``
        ``None`` or ``"path"``, no ``inflate``).
    summary : str
        One line for the documentation and ``--help``.
    advice : str
        Appended to its time-limit message (what to try instead).
    """

    name: str
    target: str
    algorithm: str
    bound: str
    summary: str
    fixed: Fraction | None = None
    kind: str = "relevant"
    searches: bool = False
    estimates: bool = False
    batch: bool = False
    advice: str = ""

    def option_names(self) -> tuple[str, ...]:
        """The keyword options its function takes (``order``, ``start``, ``max_seconds``, ...)."""
        params = inspect.signature(self.function).parameters.values()
        return tuple(p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY)

    @property
    def function(self) -> Callable[..., Explanation]:
        """The public function computing it (imported on first use)."""
        return _imported(self.target)

    @property
    def run(self) -> Callable[..., Explanation]:
        """Its algorithm on a query (imported on first use): ``run(q, bound, **options)``."""
        return _imported(self.algorithm)

    def is_exact_case(self, value: ProbabilityLike) -> bool:
        """Whether ``value`` is the bound at which sufficiency decisions answer (delta 0, precision 1)."""
        return bool(value == (1 if self.bound == "precision" else 0))

    def widens_by_default(self, value: ProbabilityLike, answers: str) -> bool:
        """The default of ``inflate`` (:func:`kcxai.inflate`) for this method at ``value`` on an engine giving
        ``answers``: a relevant set is widened when its widened rule keeps exact measures and its guarantee:
        an AXp (delta = 0) over exact counts or a decision engine (whose box search proves the widened box),
        a precision-bounded set over exact counts.

        >>> METHODS["axp"].widens_by_default(0, "decisions"), METHODS["min_idrs"].widens_by_default(0.1, "counts")
        (True, False)
        """
        if self.kind != "relevant":
            return False
        if self.bound == "precision":
            return answers == "counts"
        return self.is_exact_case(value) and answers in ("counts", "decisions")

    def answers(self, value: ProbabilityLike) -> tuple[str, ...]:
        """The answers that serve it at ``value``, in order of preference (see :data:`kcxai.oracle.ANSWERS`)."""
        if self.is_exact_case(value):
            return ("counts", "decisions", "bounds")
        return ("counts", "bounds", "estimates") if self.estimates else ("counts", "bounds")


def _imported(target: str) -> Callable[..., Explanation]:
    module, name = target.split(":")
    return cast(Callable[..., Explanation], getattr(importlib.import_module(f"kcxai.explain.{module}"), name))


#: What to try when a search hits its time limit, by method (appended to the message).
_CDRS_ADVICE = (", use local_cdrs (locally minimal, one counting query per feature tried), or explain a "
                "DecisionTree with its own ('dt') oracle, whose SAT search is much faster")
_DRS_ADVICE = (", use min_cdrs or local_cdrs (subset- or locally minimal instead of smallest), or explain a "
               "DecisionTree with its own ('dt') oracle, whose SAT search is much faster")
_IDRS_ADVICE = (", use min_idrs (subset-minimal instead of smallest: one counting query per feature), or use the "
                "'sampling' language for certified estimates")
_DUAL_ADVICE = ", or use min_dual_idrs (subset-minimal instead of smallest)"

_TABLE = (
    Method("min_idrs", "idrs:min_idrs", "idrs:deletion", "delta", estimates=True, batch=True,
           summary="subset-minimal I-delta-relevant set (Algorithm 1): error <= delta"),
    Method("axp", "idrs:min_idrs", "idrs:deletion", "delta", fixed=Fraction(0), batch=True,
           summary="abductive explanation: a subset-minimal set that alone forces the prediction (delta = 0)"),
    Method("smallest_idrs", "smallest:smallest_idrs", "smallest:fewest_idrs", "delta", searches=True,
           advice=_IDRS_ADVICE, summary="an I-delta-relevant set of the fewest features"),
    Method("smallest_axp", "smallest:smallest_idrs", "smallest:fewest_idrs", "delta", fixed=Fraction(0),
           searches=True, advice=_IDRS_ADVICE,
           summary="an abductive explanation of the fewest features (delta = 0)"),
    Method("min_dual_idrs", "duality:min_dual_idrs", "duality:dual_deletion", "delta", kind="dual",
           summary="subset-minimal dual set: freeing it changes the class with probability > delta"),
    Method("cxp", "duality:min_dual_idrs", "duality:dual_deletion", "delta", fixed=Fraction(0), kind="dual",
           summary="contrastive explanation: a subset-minimal set whose change can change the class (delta = 0)"),
    Method("smallest_dual_idrs", "duality:smallest_dual_idrs", "duality:fewest_dual", "delta", kind="dual",
           searches=True, advice=_DUAL_ADVICE, summary="a dual set of the fewest features"),
    Method("smallest_cxp", "duality:smallest_dual_idrs", "duality:fewest_dual", "delta", fixed=Fraction(0),
           kind="dual", searches=True, advice=_DUAL_ADVICE,
           summary="a contrastive explanation of the fewest features (delta = 0)"),
    Method("local_cdrs", "cdrs:local_cdrs", "cdrs:local_deletion", "precision", estimates=True,
           summary="locally minimal C-delta-relevant set: precision >= the bound"),
    Method("min_cdrs", "cdrs:min_cdrs", "cdrs:subset_minimal", "precision", searches=True, advice=_CDRS_ADVICE,
           summary="subset-minimal C-delta-relevant set: precision >= the bound"),
    Method("smallest_drs", "smallest:smallest_drs", "smallest:fewest_drs", "precision", searches=True,
           advice=_DRS_ADVICE, summary="a set of the fewest features with precision >= the bound"),
)

#: name -> method, in the order they are documented.
METHODS: dict[str, Method] = {m.name: m for m in _TABLE}


def get_method(method: object) -> Method:
    """The declared method called ``method``, or an error listing them."""
    if not isinstance(method, str):
        raise InvalidTypeError(f"'method' must be a str, one of {list(METHODS)}. Got {method!r} instead.")
    try:
        return METHODS[method]
    except KeyError:
        raise InvalidInputError(f"Unknown method {method!r}; choose one of {list(METHODS)}.") from None


def _with(names: Iterable[str]) -> str:
    return ", ".join(repr(n) for n in names)


#: The method of the Explainer, the CLI and the demo when none is named: precision-bounded, so that the
#: precision printed first is the one that holds under the data's distribution (``min_idrs`` when only
#: ``delta`` is given).
DEFAULT_METHOD = "local_cdrs"


def resolve_method(method: object, *, delta: ProbabilityLike | None = None,
                   precision: ProbabilityLike | None = None) -> tuple[Method, ProbabilityLike]:
    """The method called ``method`` and the bound to pass it, from the ``delta`` or ``precision`` given.

    A method takes the bound it declares and refuses the other; ``delta`` defaults to 0 (an abductive
    explanation) and ``precision`` to :data:`DEFAULT_PRECISION`. ``method=None`` is
    :data:`DEFAULT_METHOD`, or ``"min_idrs"`` when only ``delta`` is given.

    Examples
    --------
    >>> from kcxai.explain._methods import resolve_method
    >>> resolve_method(None)[0].name, resolve_method(None, delta=0.01)[0].name
    ('local_cdrs', 'min_idrs')
    >>> m, d = resolve_method("axp")
    >>> m.function.__name__, d
    ('min_idrs', Fraction(0, 1))
    >>> resolve_method("local_cdrs")[1]
    Fraction(19, 20)
    >>> resolve_method("local_cdrs", delta=0.05)
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: method='local_cdrs' takes 'precision' (a lower bound on the precision \
Pr(kappa(x) = c | x_S = v_S)), not 'delta': pass precision=0.95, say. 'delta' (an upper bound on the error \
Pr(kappa(x) != c and x_S = v_S)) is the bound of 'min_idrs', 'axp', 'smallest_idrs', 'smallest_axp', \
'min_dual_idrs', 'cxp', 'smallest_dual_idrs', 'smallest_cxp'.
    """
    if method is None:
        method = "min_idrs" if delta is not None and precision is None else DEFAULT_METHOD
    m = get_method(method)
    given = {"delta": delta, "precision": precision}
    other = "precision" if m.bound == "delta" else "delta"
    if given[other] is not None:
        example = "precision=0.95" if m.bound == "precision" else "delta=0.01"
        raise InvalidInputError(
            f"method={m.name!r} takes {m.bound!r} ({BOUNDS[m.bound]}), not {other!r}: pass {example}, say. "
            f"{other!r} ({BOUNDS[other]}) is the bound of "
            f"{_with(n for n, x in METHODS.items() if x.bound == other)}.")
    value = given[m.bound]
    if m.fixed is not None:
        if value is not None and value != m.fixed:
            raise InvalidInputError(
                f"method={m.name!r} is defined with {m.bound} = {m.fixed}. Got {m.bound}={value!r} instead.")
        return m, m.fixed
    if value is None:
        value = DEFAULT_PRECISION if m.bound == "precision" else Fraction(0)
    return m, value


def check_options(m: Method, options: Mapping[str, object]) -> None:
    """Reject an option ``m`` does not take (naming the ones it takes), or a bad ``max_seconds``, before any work.

    >>> check_options(METHODS["axp"], {"strat": "path"})
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidInputError: method='axp' does not take the option(s) ['strat']; its options are \
['order', 'start', 'max_seconds', 'inflate'].
    """
    known = m.option_names()
    unknown = sorted(set(options) - set(known))
    if unknown:
        hint = ""
        if set(unknown) & set(BOUNDS):
            hint = f" (its bound is {m.bound!r}: {BOUNDS[m.bound]})"
        raise InvalidInputError(
            f"method={m.name!r} does not take the option(s) {unknown}; its options are {list(known)}{hint}.")
    if "max_seconds" in options:
        check_max_seconds(options["max_seconds"])
