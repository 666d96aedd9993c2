"""The result type of every explainer."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kcxai.arithmetic import Probability
from kcxai._types import Values

__all__ = ["Explanation", "Condition", "RowFailure", "format_probability", "under", "MISSED_LIMITS", "Missed",
           "missed_limits", "missed_options", "format_missed"]

#: Why sampled relevance tests were not proven: ``(reason, how many tests)`` pairs, sorted by reason
#: (:attr:`Explanation.missed`).
Missed = tuple[tuple[str, int], ...]

#: Per step of a reason (:attr:`kcxai.explain._proven.Proof.missed` joins the branch and bound's stop and the
#: conditioned compile's with ``", "``; ``"sampling"``: the model was answered by certified sampling alone),
#: the limit it stopped at, the option that helps, and whether the clock decided it (then another run, on a
#: faster or quieter machine, may prove what this one sampled). The refinement limits
#: (:data:`kcxai.explain._proven.REFINE`) are fixed: ``fit_budget`` does not raise them, it leaves less mass
#: unknown so that fewer tests need refining.
MISSED_LIMITS: dict[str, tuple[str, str, bool]] = {
    "box max_boxes": ("the branch and bound's boxes for one test", "fit_budget", False),
    "box max_rows": ("the branch and bound's rows read for one test", "fit_budget", False),
    "box none": ("the branch and bound's boxes or rows for the row's tests", "fit_budget", False),
    "box deadline": ("the row's time limit, during the branch and bound", "max_seconds", True),
    "conditioned limit": ("the conditioned exact compile's node limit", "fit_budget", False),
    "conditioned clock": ("the conditioned exact compile's safety limit in seconds", "fit_budget", True),
    "conditioned skipped": ("the conditioned exact compile's node limit, met on a larger set", "fit_budget", False),
    "sampling": ("no exact or bounded form within the probe", "probe", False),
}

#: What each option does about those limits, and how it is given at each door.
_OPTIONS = {
    "fit_budget": "fewer such tests with a larger fit_budget= (--fit-budget; less mass left unknown, so fewer "
                  "tests need refining)",
    "max_seconds": "more time with a larger max_seconds= (--max-seconds)",
    "probe": "every test counted with a larger probe=ProbeBudget(max_seconds=...) or language='obdd' "
             "(--language obdd)",
}


def missed_limits(missed: Missed) -> list[tuple[str, str, bool]]:
    """The limits a result's sampled tests stopped at (:data:`MISSED_LIMITS`), each once, in order.

    >>> missed_limits((("box max_boxes, conditioned limit", 2),))[0][:2]
    ("the branch and bound's boxes for one test", 'fit_budget')
    """
    out: dict[str, tuple[str, str, bool]] = {}
    for reason, _ in missed:
        for step in reason.split(", "):
            out.setdefault(step, MISSED_LIMITS.get(step, (step, "fit_budget", False)))
    return list(out.values())


def missed_options(missed: Missed) -> tuple[str, ...]:
    """The options that raise the limits of ``missed``, each once (``fit_budget``, ``max_seconds``, ``probe``).

    >>> missed_options((("box deadline, conditioned skipped", 1), ("box max_boxes, conditioned limit", 3)))
    ('max_seconds', 'fit_budget')
    """
    return tuple(dict.fromkeys(option for _, option, _ in missed_limits(missed)))


def format_missed(missed: Missed) -> str:
    """Why the sampled tests were not proven, in one line: how many stopped at each reason, the limits they
    stopped at, what each option does about them, and whether the clock decided any.

    >>> said = format_missed((("box max_boxes, conditioned limit", 3),))
    >>> said.split("; stopped at")[0]
    'not proven: 3 at box max_boxes, conditioned limit'
    >>> "fit_budget= (--fit-budget" in said, "clock" in said
    (True, False)
    """
    if not missed:
        return ""
    limits = missed_limits(missed)
    counted = "; ".join(f"{n} at {reason}" for reason, n in missed)
    stopped = ", ".join(lim for lim, _, _ in limits)
    options = "; ".join(_OPTIONS[opt] for opt in missed_options(missed))
    clock = ("; the clock stopped some (another run may prove them)" if any(c for _, _, c in limits) else "")
    return f"not proven: {counted}; stopped at: {stopped}; {options}{clock}"


def format_probability(p: Probability | None) -> str:
    """``7/512 (~0.01367)`` for exact values, ``0.01367`` for floats, ``not computed`` for ``None``."""
    if p is None:
        return "not computed"
    if isinstance(p, Fraction):
        if p.denominator == 1:
            return str(p.numerator)
        if p.denominator < 10**6:
            return f"{p} (~{float(p):.4g})"
        return f"{float(p):.6g}"
    return f"{p:.6g}"


#: What :meth:`Explanation.measures` says of a widening that did not end maximal.
_WIDENING_SAID = {
    "box budget": ", widening stopped at its box budget: proven, maybe not maximal",
    "time limit": "; not widened: the row's time limit stopped its widening",
    "too large": "; not widened: its widening engine was too large to build",
}

_UNIFORM_NOTE = " (every value of a feature equally likely, not fitted to data)"


def under(distribution: str) -> str:
    """``under the product distribution``; for the uniform one, also that it is not the data's (the paper's
    setting, where most of the probability sits on points no row resembles)."""
    return f"under the {distribution} distribution{_UNIFORM_NOTE if distribution == 'uniform' else ''}"


def _plain(x: Any) -> Any:
    return x if isinstance(x, (str, int, float, bool)) or x is None else str(x)


@dataclass(frozen=True)
class Condition:
    """One condition of a rule: feature ``name`` takes one of a set of its values.

    Attributes
    ----------
    feature : int
        The feature's index.
    name : str
        Its name.
    values : tuple of int
        The value numbers allowed (sorted indices into the feature's domain): a run of
        consecutive intervals for a numeric feature, any set of categories otherwise.
    literal : str
        How it reads, in the feature's own units and labels (``age in (29.5, 52.5]``,
        ``age > 37.5``, ``workclass in {Private, Self-emp}``), from
        :meth:`kcxai.Feature.set_literal`.

    Examples
    --------
    >>> from kcxai import Feature
    >>> from kcxai.explain.explanation import Condition
    >>> age = Feature.numeric("age", [29.5, 37.5, 52.5])
    >>> Condition(0, "age", (1, 2), age.set_literal([1, 2])).literal
    'age in (29.5, 52.5]'
    """

    feature: int
    name: str
    values: tuple[int, ...]
    literal: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the feature, its name, the value numbers and the literal."""
        return {"feature": self.feature, "name": self.name, "values": list(self.values), "literal": self.literal}


@dataclass(frozen=True)
class Explanation:
    """A set of features explaining a prediction, with its exact measures.

    Attributes
    ----------
    features : tuple of int
        Sorted 0-based indices of the features in the set.
    names : tuple of str
        Their names.
    values : tuple
        The instance's values on them (domain values: intervals for numeric features).
    literals : tuple of str
        Readable literals ``name = value`` / ``name in (a, b]``.
    prediction : object
        The class predicted for the instance.
    delta : Fraction or float
        The bound on the error the set was computed for (I-delta sets, dual sets, AXps and CXps at
        0); ``None`` for precision-bounded methods.
    error : Fraction or float
        ``Pr(kappa(x) != c and x_S = v_S)`` (the paper's eq. idr); ``None`` where
        not computed (contrastive sets found by SAT).
    precision : Fraction or float
        ``Pr(kappa(x) = c | x_S = v_S)`` (the paper's eq. drs); ``None`` where not computed.
    language : str
        The knowledge-compilation language that answered the counting queries.
    oracle_calls : int
        Number of counting queries made.
    seconds : float
        Wall-clock time of the computation.
    kind : str
        ``"relevant"`` for a relevant set, ``"dual"`` for a dual (contrastive) set.
    method : str
        The function that produced it (``"min_idrs"``, ...).
    instance : tuple
        The instance explained, in user values.
    coverage : Fraction or float, optional
        ``Pr(x_S = v_S)`` under the distribution (Anchor's coverage).
    distribution : str
        The distribution every probability refers to: ``"uniform"``, ``"product"`` or ``"mixture of K"``.
    confidence : float, optional
        ``None`` for exact results. For an approximate oracle, the confidence
        with which the set is relevant; ``error`` and ``precision`` are then
        estimates (:attr:`approximate`).
    precision_bound : Fraction or float, optional
        The lower bound on precision the set was computed for (``local_cdrs``,
        ``min_cdrs``, ``smallest_drs``); ``None`` for error-bounded methods.
    conditions : tuple of Condition, optional
        ``None`` for a set that fixes each feature to the instance's own value (the paper's
        definitions). For a set widened by :func:`kcxai.inflate`, the widened condition of each
        feature, in the order of :attr:`features`; :attr:`literals`, :meth:`rule` and every
        measure (``error``, ``precision``, ``coverage``) then refer to the points meeting them.
    decided : {"exact", "proven", "sampled"}
        How its relevance tests were decided: every one from exact counts (or proofs of sufficiency);
        some from proven bounds that lay on one side of the bound (a ``bounded`` form, see
        :mod:`kcxai.explain._proven`), none sampled; some by certified sampling (:attr:`sampled` of them,
        each right with the :attr:`confidence`).
    interval : tuple of two probabilities, optional
        For a proven result, the widest interval a decision used, on the measure the method bounds (the
        error, or the precision).
    sampled : int
        How many relevance tests were decided by sampling.
    error_bounds : tuple of two probabilities, optional
        Where the result's own error could not be counted exactly (``error`` is then ``None``): proven
        lower and upper bounds on it.
    certified : float, optional
        For a sampled result, what the decision that freed its last feature certified (with the
        confidence): the lower confidence bound of the precision (precision-bounded methods), or the
        upper one of the error. This, not the estimate, is what the result claims.
    missed : tuple of (str, int)
        For a sampled result, why its sampled tests were not proven: ``(reason, how many tests)``, sorted by
        reason. A reason names where each refinement stopped (:attr:`kcxai.explain._proven.Proof.missed`:
        ``"box max_boxes, conditioned limit"``, ``"box deadline, conditioned skipped"``, ...), or is
        ``"sampling"`` when the model was answered by certified sampling alone. :data:`MISSED_LIMITS` says
        which limit each step stopped at and which option raises it (:func:`missed_options`); printed by
        :meth:`how_decided`. Empty for exact and proven results.
    widening : {"maximal", "box budget", "time limit", "too large"}, optional
        For a widened set (:attr:`conditions`): ``"maximal"`` when no condition can take one more value;
        ``"box budget"`` when widening an ensemble AXp spent its budget of boxes first
        (:data:`~kcxai.explain.inflate.WIDEN_BOXES`): every point of the box is still proven to get the
        class, but some condition might be wider. ``"time limit"`` or ``"too large"``: widening by default
        was stopped by the row's time limit (which depends on the machine) or its engine was too large to
        build, and the set is returned as found, not widened (:attr:`conditions` is ``None``). ``None``: not
        widened.
    unwidened_coverage : Fraction or float, optional
        For a widened set, the coverage of the set before widening (each feature fixed to the
        instance's cell), exact, under the same distribution.

    Examples
    --------
    >>> import kcxai
    >>> e = kcxai.min_idrs(kcxai.datasets.running_example_tree(), (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03,
    ...                    start="path")
    >>> len(e), e.names, e.literals
    (2, ('x1', 'x9'), ('x1 = 1', 'x9 = 1'))
    >>> e.error, e.precision
    (Fraction(7, 512), Fraction(121, 128))
    >>> e.to_dict()["error_exact"], "x9" in e
    ('7/512', True)
    """

    features: tuple[int, ...]
    names: tuple[str, ...]
    values: tuple[Any, ...]
    literals: tuple[str, ...]
    prediction: Any
    delta: Probability | None
    error: Probability | None
    precision: Probability | None
    language: str
    oracle_calls: int
    seconds: float = field(compare=False)
    kind: str = "relevant"
    method: str = "min_idrs"
    instance: Values = ()
    coverage: Probability | None = None
    distribution: str = "uniform"
    confidence: float | None = None
    precision_bound: Probability | None = None
    conditions: tuple[Condition, ...] | None = None
    decided: str = "exact"
    interval: tuple[Probability, Probability] | None = None
    sampled: int = 0
    error_bounds: tuple[Probability, Probability] | None = None
    certified: Probability | None = None
    missed: Missed = ()
    widening: str | None = None
    unwidened_coverage: Probability | None = None

    def __len__(self) -> int:
        return len(self.features)

    @property
    def inflated(self) -> bool:
        """Whether the conditions were widened beyond the instance's own values (:func:`kcxai.inflate`)."""
        return self.conditions is not None

    @property
    def approximate(self) -> bool:
        """Whether the measures are estimates (an approximate oracle) rather than exact counts. Over a
        ``bounded`` form they are counted or bounded, never estimated, even where some decisions were
        sampled (:attr:`decided`, with the :attr:`confidence` of those decisions)."""
        return self.confidence is not None and self.language != "bounded"

    def __iter__(self) -> Any:
        return iter(self.features)

    def __contains__(self, feature: object) -> bool:
        return feature in self.features or feature in self.names

    def to_dict(self) -> dict[str, Any]:
        """A flat, JSON-ready dict (one row of a pandas DataFrame).

        Probabilities appear as floats and, when exact, also as strings
        (``"error_exact": "7/512"``).
        """
        d: dict[str, Any] = {
            "method": self.method, "kind": self.kind,
            "features": list(self.features), "names": list(self.names),
            "values": [_plain(v) for v in self.values], "literals": list(self.literals),
            "size": len(self.features), "prediction": _plain(self.prediction),
            "delta": None if self.delta is None else float(self.delta),
            "precision_bound": None if self.precision_bound is None else float(self.precision_bound),
            "error": None if self.error is None else float(self.error),
            "precision": None if self.precision is None else float(self.precision),
            "coverage": None if self.coverage is None else float(self.coverage),
            "distribution": self.distribution, "approximate": self.approximate, "confidence": self.confidence,
            "language": self.language, "oracle_calls": self.oracle_calls, "seconds": self.seconds,
            "conditions": None if self.conditions is None else [c.to_dict() for c in self.conditions],
            "decided": self.decided, "sampled": self.sampled,
            "interval_low": None if self.interval is None else float(self.interval[0]),
            "interval_high": None if self.interval is None else float(self.interval[1]),
            "error_low": None if self.error_bounds is None else float(self.error_bounds[0]),
            "error_high": None if self.error_bounds is None else float(self.error_bounds[1]),
            "certified": None if self.certified is None else float(self.certified),
            "missed": dict(self.missed), "missed_options": list(missed_options(self.missed)),
            "widening": self.widening,
            "unwidened_coverage": None if self.unwidened_coverage is None else float(self.unwidened_coverage),
        }
        estimated = ("error", "precision") if self.approximate else ()  # sampled: no exact value to show
        for key in ("delta", "precision_bound", "error", "precision", "coverage", "unwidened_coverage"):
            v = getattr(self, key)
            if isinstance(v, Fraction) and key not in estimated:
                d[key + "_exact"] = str(v)
        return d

    def rule(self) -> str:
        """``IF lit AND lit THEN class = c``."""
        body = " AND ".join(self.literals) if self.literals else "TRUE"
        if self.kind == "dual":
            return f"CHANGE {{{', '.join(self.names)}}} MAY CHANGE class = {self.prediction}"
        return f"IF {body} THEN class = {self.prediction}"

    @property
    def bounds_precision(self) -> bool:
        """Whether the set was computed for a lower bound on precision (C-delta problems) rather than on error."""
        return self.precision_bound is not None

    def how_decided(self) -> str:
        """How the relevance tests were decided, as printed: ``exact``, ``proven (widest interval ...)`` or
        ``sampled (N decisions, confidence c; not proven: ...)`` with why they were not proven and the options
        that raise those limits (:func:`format_missed`)."""
        if self.decided == "sampled":
            conf = "" if self.confidence is None else (
                f", each freeing one certified with confidence {self.confidence:g}")
            why = format_missed(self.missed)
            return f"sampled ({self.sampled} decisions sampled{conf}{'; ' + why if why else ''})"
        if self.decided == "proven":
            on = "error" if self.precision_bound is None else "precision"
            shown = "" if self.interval is None else (
                f": widest interval of the {on} [{float(self.interval[0]):.4g}, {float(self.interval[1]):.4g}]")
            return f"proven from exact bounds{shown}"
        return "exact"

    def measures(self) -> str:
        """The measures as printed: what the bound bounds, under which distribution, exact, proven or sampled.

        A sampled result prints the bound its last freeing decision certified, never an estimate below the
        bound the set claims."""
        if self.certified is not None and self.kind == "relevant" and (self.approximate or self.error is None):
            return self._certified_measures()
        fmt = format_probability if not self.approximate else (lambda p: f"~{float(p):.4g} (estimated)")
        err, prec = fmt(self.error), fmt(self.precision)
        if self.error is None and self.error_bounds is not None:
            lo, hi = self.error_bounds
            err = f"in [{float(lo):.6g}, {float(hi):.6g}] (proven bounds)"
            prec = "not counted exactly"
            if self.coverage:
                cov_f = float(self.coverage)
                prec = f"in [{1 - float(hi) / cov_f:.6g}, {1 - float(lo) / cov_f:.6g}] (proven bounds)"
        if self.precision_bound is not None and self.precision is not None:
            prec = (f"{prec} {'>=' if self.precision >= self.precision_bound else '<'} "
                    f"the bound {format_probability(self.precision_bound)}")
        elif self.delta is not None and self.error is not None:
            err = f"{err} {'<=' if self.error <= self.delta else '>'} delta {format_probability(self.delta)}"
        cov = "" if self.coverage is None else f", coverage {fmt(self.coverage)}"
        if self.conditions is not None and self.unwidened_coverage is not None:
            cov += f" (unwidened {fmt(self.unwidened_coverage)})"
        how = self.how_decided()
        widened = _WIDENING_SAID.get(self.widening or "", "") if self.conditions is None else (
            "; of the widened conditions" + _WIDENING_SAID.get(self.widening or "", ""))
        if self.kind == "dual":
            cov = "" if self.coverage is None else f", coverage of the fixed rest {fmt(self.coverage)}"
            if self.error is None:
                return (f"freeing these features can change the class (proved; its probability is not computed)"
                        f"{cov} ({under(self.distribution)})")
            return (f"fixing the other features: error {err}, precision {prec}{cov} "
                    f"({how}, {under(self.distribution)})")
        return f"error {err}, precision {prec}{cov} ({how}{widened}, {under(self.distribution)})"

    def _certified_measures(self) -> str:
        cert = float(self.certified)  # type: ignore[arg-type]  # checked by the caller
        cov = "" if self.coverage is None else f", coverage {format_probability(self.coverage)}"
        if self.precision_bound is not None:
            shown = f"precision >= {cert:.4g} (certified; the bound {format_probability(self.precision_bound)})"
        else:
            shown = f"error <= {cert:.4g} (certified; delta {format_probability(self.delta)})"
        if self.error is None and self.error_bounds is not None:
            lo, hi = self.error_bounds
            shown += f", error in [{float(lo):.6g}, {float(hi):.6g}] (proven bounds)"
        return f"{shown}{cov} (under the {self.distribution} distribution, {self.how_decided()})"

    def _shown_precision(self) -> str:
        """The precision as a table shows it: exact, proven bounds, or what a sampled result certified (never
        an estimate below the bound it claims)."""
        if self.certified is not None and self.precision_bound is not None and (self.approximate or
                                                                               self.precision is None):
            return f">= {float(self.certified):.4g} (certified, confidence {self.confidence:g})"
        if self.precision is None and self.error_bounds is not None and self.coverage:
            cov, (lo, hi) = float(self.coverage), self.error_bounds
            return f"in [{1 - float(hi) / cov:.6g}, {1 - float(lo) / cov:.6g}] (proven bounds)"
        return format_probability(self.precision)

    def __str__(self) -> str:
        return (f"{self.rule()}\n  {self.measures()}; {self.method} via {self.language}, "
                f"{self.oracle_calls} oracle calls, {self.seconds * 1000:.3g} ms")

    def _repr_html_(self) -> str:
        lits = "".join(f"<li><code>{html.escape(lit)}</code></li>" for lit in self.literals) or "<li>(empty)</li>"
        title = "Dual (contrastive) set" if self.kind == "dual" else (
            "Relevant set, conditions widened" if self.conditions is not None else "Relevant set")
        delta = "" if self.delta is None else (
            f"<tr><th>delta (error bound)</th><td>{html.escape(format_probability(self.delta))}</td></tr>")
        if self.precision_bound is not None:
            delta = (f"<tr><th>precision bound</th><td>{html.escape(format_probability(self.precision_bound))}"
                     "</td></tr>")
        return (
            f"<div class='kcxai-explanation'><b>{title}</b> for class "
            f"<b>{html.escape(str(self.prediction))}</b> ({len(self.features)} features)"
            f"<ul>{lits}</ul><table>"
            f"<tr><th>error</th><td>{html.escape(format_probability(self.error))}</td></tr>{delta}"
            f"<tr><th>precision</th><td>{html.escape(self._shown_precision())}</td></tr>"
            + ("" if self.coverage is None else
               f"<tr><th>coverage</th><td>{html.escape(format_probability(self.coverage))}</td></tr>")
            + ("" if self.conditions is None or self.unwidened_coverage is None else
               f"<tr><th>coverage unwidened</th><td>{html.escape(format_probability(self.unwidened_coverage))}"
               "</td></tr>")
            + f"<tr><th>distribution</th><td>{html.escape(self.distribution)}"
            f"{_UNIFORM_NOTE if self.distribution == 'uniform' else ''}</td></tr>"
            f"<tr><th>decided</th><td>{html.escape(self.how_decided())}</td></tr>"
            f"<tr><th>computed by</th><td>{html.escape(self.method)} via {html.escape(self.language)}, "
            f"{self.oracle_calls} oracle calls, {self.seconds * 1000:.3g} ms</td></tr></table></div>")


@dataclass(frozen=True)
class RowFailure:
    """A row that could not be explained (with ``on_error="report"``).

    Attributes
    ----------
    id : object
        The row's id (its DataFrame index label, else its position).
    instance : tuple
        The row's values as read (empty when the row could not be read).
    error_type : str
        The exception's class name (``"InvalidInputError"``, ...).
    message : str
        The exception's message.
    """

    id: Any
    instance: tuple[Any, ...]
    error_type: str
    message: str

    def __str__(self) -> str:
        return f"row {self.id!r}: {self.error_type}: {self.message}"
