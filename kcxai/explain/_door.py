"""The one door every explanation method goes through: resolve, query, run the algorithm, widen.

:func:`explain_with` runs a method of the table (:data:`~kcxai.explain._methods.METHODS`) on what the
user passed: the public functions (:func:`kcxai.min_idrs`, ...), their aliases for tree ensembles
(:func:`kcxai.ensemble_axp`, ...), the :class:`~kcxai.Explainer`'s batches and the command line all
call it. The bound is checked exactly before an engine is chosen (the method's answers at that bound
decide which engines serve), the engine is the chooser's (:func:`kcxai.engines.choose.oracle_for`),
the :class:`~kcxai.explain._query.Query` carries the method (errors and the result are named after
it), and ``inflate=True`` widens the result on the same query (:func:`kcxai.explain.inflate.widen`),
under the same time limit and call counter; ``inflate=None`` (the default) widens where the method table
says (:meth:`~kcxai.explain._methods.Method.widens_by_default`: AXps, on the engine that answered), and if
the row's time limit stops that widening (or its engine is too large to build), returns the set found,
unwidened, with :attr:`~kcxai.Explanation.widening` saying why (``"time limit"``, ``"too large"``).
"""

from __future__ import annotations

import dataclasses

from kcxai._deadline import DEFAULT_SEARCH_SECONDS
from kcxai._errors import InvalidInputError, ProblemTooLargeError, SearchLimitError
from kcxai._params import BOOL, NONE, check
from kcxai._types import InstanceLike, ProbabilityLike
from kcxai.explain._methods import Method
from kcxai.explain._query import prepare, zero_bound
from kcxai.explain.explanation import Explanation
from kcxai.explain.inflate import can_widen, widen
from kcxai.typing import Explainable

__all__ = ["explain_with"]


def explain_with(m: Method, obj: Explainable, instance: InstanceLike, bound: ProbabilityLike | None = None, *,
                 max_seconds: float | None = DEFAULT_SEARCH_SECONDS, inflate: bool | None = None,
                 **options: object) -> Explanation:
    """Method ``m`` on ``obj`` for ``instance`` at ``bound`` (its ``delta`` or ``precision``; ``None``: its
    fixed value), with the method's ``options``.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.explain._methods import METHODS
    >>> e = explain_with(METHODS["axp"], kcxai.datasets.running_example_tree(), (1, 1, 1, 1, 0, 0, 0, 0, 1))
    >>> e.method, e.names
    ('axp', ('x1', 'x2', 'x3', 'x8', 'x9'))
    """
    if bound is None:
        if m.fixed is None:
            raise InvalidInputError(f"method={m.name!r} needs its bound {m.bound!r}.")
        bound = m.fixed
    elif m.fixed is not None and zero_bound(bound, argument=m.bound) != m.fixed:
        raise InvalidInputError(
            f"method={m.name!r} is defined with {m.bound} = {m.fixed}. Got {m.bound}={bound!r} instead.")
    check("inflate", inflate, (NONE, BOOL))
    answers = m.answers(zero_bound(bound, argument=m.bound))
    with prepare(obj, instance, method=m, answers=answers, max_seconds=max_seconds) as q:
        e = m.run(q, q.delta(bound, argument=m.bound), **options)
        if inflate is not None:
            return widen(q, e, found_here=True) if inflate else e
        if not (m.widens_by_default(bound, q.answers) and can_widen(q)):
            return e
        try:
            return widen(q, e, found_here=True)
        except ProblemTooLargeError as err:  # the row's time limit, or a widening engine too large to build
            # widening by default must not turn a set found into an error: the set, marked not widened
            why = "time limit" if isinstance(err, SearchLimitError) else "too large"
            return dataclasses.replace(e, widening=why)
