"""Which engine answers a model passed to an explainer directly: the choice, its probe budget, its cache.

A method needs some kind of answer (:mod:`kcxai.explain._methods`): exact counts, certified
estimates, or sufficiency decisions (delta = 0). For a model, the answers are tried in the method's
order of preference, and each kind is given by the registry (:mod:`kcxai.engines._registry`):

1. **exact counts**: the first language of :data:`~kcxai.engines.NATIVE_PREFERENCE` that takes
   the model (a decision tree answers from its own paths; anything else is compiled to an OBDD),
   within the *probe budget* :data:`PROBE` (a few seconds and 1 GiB: a compilation that does not
   fit in it would take minutes or gigabytes, so it is abandoned and the next kind of answer used).
   A tree ensemble's probe counts work, not seconds (:meth:`ProbeBudget.options`), so that the same
   model gets the same choice on any machine, under any load;
2. **delta = 0 decisions**: the decision engine of a tree ensemble
   (:func:`~kcxai.engines._registry.decision_engine`: SAT for hard voting, branch and bound otherwise);
3. **certified estimates**: the ``sampling`` language (marked approximate, with its confidence).

If no kind of answer the method accepts can be given, :class:`~kcxai.InvalidInputError` names
the model, the method's needs and why each engine was not used, before any long work.

The compiled forms (and the failed probes, so that a model that does not compile is not probed
again) are kept by the model itself, in a small bounded cache guarded by a lock
(:class:`EngineCache`), and live as long as the model. ``language=`` in the explainers and the
:class:`~kcxai.Explainer` bypasses the choice, with the language's own limits.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kcxai._errors import CompilationLimitError, InvalidInputError, InvalidTypeError, UnknownLanguageError
from kcxai._params import POSITIVE_INT, Options, check, check_seconds
from kcxai.compilers._ensemble import is_additive
from kcxai.compilers.bounded import BUILD_SHARE, WORK_PER_SECOND, safety_seconds, work_budget
from kcxai.compilers.compiled import CompiledModel
from kcxai.compilers.language import Language
from kcxai.engines._decision import engine_oracle, is_decision_engine, is_ensemble
from kcxai.engines._registry import ANSWERED_BY, LANGUAGES, NATIVE_PREFERENCE, decision_engine
from kcxai.models.classifier import Classifier
from kcxai.oracle import ANSWERS, Oracle, describe_answers

__all__ = ["native_language", "native_compiled", "cached_compiled", "choose", "Choice", "ProbeBudget", "PROBE",
           "EngineCache", "CACHE_SIZE", "compile_model", "get_language", "available_languages", "decision_compiled",
           "oracle_for", "DECISION_ENGINES"]

#: What the ensemble aliases' ``engine`` takes: the chooser's decision engine, or one by name.
DECISION_ENGINES = ("auto",) + tuple(name for name, lang in LANGUAGES.items() if lang.answers == "decisions")

#: How many compiled forms (and failed probes) one model keeps.
CACHE_SIZE = 8

#: What a cached form is known by: its language and its options, sorted by name.
CacheKey = tuple[str, tuple[tuple[str, object], ...]]


@dataclass(frozen=True)
class ProbeBudget:
    """The limits under which an exact counting language is tried before another kind of answer is used.

    Attributes
    ----------
    max_seconds : float
        The probe's budget. A tree ensemble (a model with ``additive_trees()``, whose OBDD is built feature by
        feature) gets it as *counted work*: :func:`~kcxai.compilers.bounded.work_budget` of it, the ``obdd``
        language's ``max_work`` (:data:`~kcxai.compilers.bounded.WORK_PER_SECOND` units per second, about a
        second on the machine it was measured on): whether it compiles exactly is then the same on every
        machine, under any load, in every run. The wall clock only stops a runaway, at
        :func:`~kcxai.compilers.bounded.safety_seconds` of it (10 times, at least 10 s); a probe that the clock
        or ``max_memory`` stopped is refused with a reason that says the refusal is not reproducible. Any
        other model is compiled through dd, whose work is not counted: ``max_seconds`` is then its wall-clock
        limit.
    max_memory : int
        Limit on the growth of resident memory during it, in bytes (a safety limit, as the clock's).
    bounded_seconds : float
        The budget of a tree ensemble's ``bounded`` form (exact where it fits, exact bounds elsewhere),
        built when the exact probe fails: the *fit budget* (the :class:`~kcxai.Explainer`'s ``fit_budget``),
        in seconds of counted work, the ``bounded`` language's ``max_seconds``
        (:mod:`kcxai.compilers.bounded`): the same budget gives the same form on any machine.
    """

    max_seconds: float = 3.0
    max_memory: int = 1 << 30
    bounded_seconds: float = 10.0

    def __post_init__(self) -> None:
        """Each limit checked when the budget is made, named in the error (a budget of 0 or below is refused).

        >>> ProbeBudget(max_seconds=0)
        Traceback (most recent call last):
        ...
        kcxai._errors.InvalidInputError: 'max_seconds' must be a positive number of seconds. Got 0 instead.
        """
        for name in ("max_seconds", "bounded_seconds"):
            check_seconds(name, getattr(self, name))
        check("max_memory", self.max_memory, POSITIVE_INT)

    def options(self, language: str, model: object = None) -> dict[str, float | int]:
        """The compile options that enforce the budget in ``language`` for ``model`` (none for ``dt``, which
        compiles nothing): for a tree ensemble's OBDD, ``max_work`` with the wall-clock safety limit.

        >>> import kcxai
        >>> tree = kcxai.datasets.running_example_tree()
        >>> forest = kcxai.models.RandomForest(tree.space, tree.classes, [tree])
        >>> PROBE.options("obdd", forest) == {"max_work": work_budget(3.0), "max_seconds": 30.0,
        ...                                   "max_memory": 1 << 30}
        True
        >>> PROBE.options("obdd", tree)
        {'max_seconds': 3.0, 'max_memory': 1073741824}
        """
        names = LANGUAGES[language].option_names()
        if language == "bounded":
            return {"max_seconds": self.bounded_seconds, "max_memory": 4 * self.max_memory}
        if "max_work" in names and is_additive(model):
            return {"max_work": self.max_work(), "max_seconds": safety_seconds(self.max_seconds),
                    "max_memory": self.max_memory}
        return {k: v for k, v in (("max_seconds", self.max_seconds), ("max_memory", self.max_memory)) if k in names}

    def max_work(self) -> int:
        """The work a tree ensemble's exact probe may count (:func:`~kcxai.compilers.bounded.work_budget`)."""
        return max(1, work_budget(self.max_seconds))


#: The default probe budget.
PROBE = ProbeBudget()


@dataclass(frozen=True)
class Choice:
    """The engine chosen for a kind of answer, and why.

    Attributes
    ----------
    answers : str
        ``"counts"``, ``"bounds"``, ``"estimates"`` or ``"decisions"``.
    language : str or None
        The language giving them, ``None`` if none could.
    reason : str
        One sentence: what was tried and what happened.
    compiled : CompiledModel or None
        Its compiled form, when it was built.
    limited : bool
        Whether a language that takes the model was refused by a limit (a larger budget may compile it), not
        for another reason (not installed, not taking the model).
    """

    answers: str
    language: str | None
    reason: str
    compiled: CompiledModel | None = None
    limited: bool = False


class EngineCache:
    """The compiled forms of one model (and its failed probes), keyed by language and options.

    Bounded (:data:`CACHE_SIZE` entries, least recently used first out) and thread-safe; a compilation
    runs outside the lock, so two threads asking for the same new form may both compile it (the
    second result is kept). Owned by the model (``model._engine_cache``), dropped when it is pickled.
    """

    __slots__ = ("_lock", "_entries")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[CacheKey, CompiledModel | str] = OrderedDict()

    def get(self, key: CacheKey) -> CompiledModel | str | None:
        with self._lock:
            got = self._entries.get(key)
            if got is not None:
                self._entries.move_to_end(key)
            return got

    def put(self, key: CacheKey, value: CompiledModel | str) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > CACHE_SIZE:
                self._entries.popitem(last=False)


_CACHES_LOCK = threading.Lock()


def _cache_of(model: Classifier) -> EngineCache:
    cache = model.__dict__.get("_engine_cache")
    if cache is None:
        with _CACHES_LOCK:
            cache = model.__dict__.setdefault("_engine_cache", EngineCache())
    return cache  # type: ignore[no-any-return]


def _compiled(model: Classifier, language: str, options: Mapping[str, object],
              watch: Mapping[str, object] | None = None) -> CompiledModel | str:
    """The model compiled to ``language`` (cached), or why it did not compile within ``options``' limits.
    ``watch``: options that do not change the form (a progress callback), passed but not part of the key."""
    key = (language, tuple(sorted(options.items())))
    cache = _cache_of(model)
    got = cache.get(key)
    if got is None:
        try:
            got = _compile(LANGUAGES[language], model, {**options, **(watch or {})})
        except CompilationLimitError as err:
            got = f"did not compile within {_limits(options)}: {str(err).split('. ')[0]}"
            if "max_work" in options and getattr(err, "limit", None) in ("max_seconds", "max_memory"):
                got += (" (a safety limit, not the counted work, stopped it: this refusal depends on the machine's "
                        "speed and load, and another run may compile it)")
        cache.put(key, got)
    return got


def cached_compiled(model: Classifier, language: str, **options: object) -> CompiledModel:
    """``compile_model(model, language, **options)``, kept by the model (compiled once for those options)."""
    got = _compiled(model, language, LANGUAGES[language].parse_options(**options))
    if not isinstance(got, CompiledModel):
        raise CompilationLimitError(f"{type(model).__name__} {got}.")
    return got


def _limits(options: Mapping[str, object]) -> str:
    secs, mem, work = options.get("max_seconds"), options.get("max_memory"), options.get("max_work")
    if isinstance(work, int):  # the clock is then a safety limit only
        secs = None
    counted = [f"{work / (BUILD_SHARE * WORK_PER_SECOND):.3g} s of counted work ({work:,} "
               f"unit{'' if work == 1 else 's'})"] if isinstance(work, int) else []
    parts = counted + ([f"{secs:g} s"] if isinstance(secs, (int, float)) else []) + (
        [f"{mem / (1 << 30):g} GiB"] if isinstance(mem, int) else [])
    return "the probe budget (" + ", ".join(parts) + ")" if parts else "its limits"


def choose(model: Classifier, answers: str, *, probe: ProbeBudget | None = None,
           language: str | None = None, progress: Callable[[Any], None] | None = None) -> Choice:
    """The engine giving ``answers`` for ``model`` (see the module docstring), compiled or refused with a reason.

    The one place an engine is chosen: the explainers, the :class:`~kcxai.Explainer`, the command line,
    the experiments and :func:`compile_model` all come here. ``language`` restricts the choice to one
    language giving ``answers`` (``"sat"`` or ``"search"`` for decisions, say), built with its defaults.
    ``progress`` is called with the construction's progress while a ``bounded`` form is built (a bar).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.engines.choose import choose
    >>> c = choose(kcxai.datasets.running_example_tree(), "counts")
    >>> c.language, c.reason
    ('dt', "the decision tree's own paths (nothing to compile)")
    """
    probe = PROBE if probe is None else probe
    if answers not in ANSWERS:
        raise InvalidInputError(f"Unknown kind of answer {answers!r}; the kinds are {list(ANSWERS)}.")
    if language is not None and get_language(language).answers != answers:
        raise InvalidInputError(f"The {language!r} language gives {LANGUAGES[language].answers}, not {answers}.")
    if answers == "counts":
        reasons, limited = [], False
        for name in (NATIVE_PREFERENCE if language is None else (language,)):
            lang = LANGUAGES[name]
            if not lang.takes(model):
                continue
            if not lang.is_available():
                reasons.append(f"{name!r} is not installed ({lang.install})")
                continue
            options = probe.options(name, model)
            got = _compiled(model, name, options)
            if isinstance(got, CompiledModel):
                how = ("the decision tree's own paths (nothing to compile)" if name == "dt" else
                       f"compiled to {name} in {got.stats.compile_seconds:.3g} s ({got.stats.size:,} "
                       f"{got.stats.size_unit}) within {_limits(options)}")
                return Choice("counts", name, how, got)
            reasons.append(f"{name} {got}")
            limited = True
        return Choice("counts", None, "; ".join(reasons) or "no exact counting language takes it", limited=limited)
    if answers == "decisions":
        engine = decision_engine(model) if language is None else language
        if engine is None or not LANGUAGES[engine].takes(model):
            return Choice("decisions", None, f"no decision engine takes {type(model).__name__} models")
        got = _compiled(model, engine, {})
        if isinstance(got, CompiledModel):
            return Choice("decisions", engine, f"the {engine!r} engine decides delta = 0 queries (built in "
                                               f"{got.stats.compile_seconds:.3g} s)", got)
        return Choice("decisions", None, f"the {engine!r} engine {got}")
    if answers == "bounds":
        return _bounded(model, probe, progress)
    name = ANSWERED_BY["estimates"] if language is None else language
    got = _compiled(model, name, {})
    if not isinstance(got, CompiledModel):  # pragma: no cover - sampling compiles nothing
        return Choice("estimates", None, f"{name} {got}")
    confidence = getattr(got.oracle, "confidence", None)
    return Choice("estimates", name, f"certified sampling ('{name}'): estimates, each decision right with "
                                     f"confidence {confidence:g}", got)


def _bounded(model: Classifier, probe: ProbeBudget, progress: Callable[[Any], None] | None) -> Choice:
    """The ``bounded`` form of a tree ensemble within the probe's fit budget, and what it will decide."""
    lang = LANGUAGES["bounded"]
    if not lang.takes(model):
        return Choice("bounds", None, f"the 'bounded' language takes tree ensembles, not {type(model).__name__}")
    got = _compiled(model, "bounded", probe.options("bounded"), None if progress is None else {"progress": progress})
    if not isinstance(got, CompiledModel):
        return Choice("bounds", None, f"bounded {got}")
    st = got.stats
    if not st["reproducible"]:
        return Choice("bounds", "bounded", f"compiled to the 'bounded' diagram in {st.compile_seconds:.3g} s, "
                                           f"{float(st['unknown']):.3g} of the probability mass left unknown; "
                                           f"{st['stopped']}", got)
    if st["exact"]:
        how = (f"compiled exactly to the 'bounded' diagram in {st.compile_seconds:.3g} s ({st.size:,} nodes, no mass "
               f"left unknown) within the fit budget ({probe.bounded_seconds:g} s of work): every answer exact")
    else:
        how = (f"compiled to the 'bounded' diagram in {st.compile_seconds:.3g} s within the fit budget "
               f"({probe.bounded_seconds:g} s of work), {float(st['unknown']):.3g} of the probability mass left "
               f"unknown: "
               f"each relevance test is decided from exact bounds, refined where they straddle the bound "
               f"(conditioned exact compile, then branch and bound, then certified sampling of that one test, "
               f"marked); a larger fit_budget leaves less unknown" + (f" ({st['stopped']})" if st["stopped"] else ""))
    return Choice("bounds", "bounded", how, got)


def decision_compiled(model: Classifier, engine: str = "auto") -> CompiledModel:
    """The decision engine of a tree ensemble (delta = 0), kept in the model's cache: the chooser's
    (``engine="auto"``, :func:`~kcxai.engines._registry.decision_engine`) or the one named
    (:data:`DECISION_ENGINES`).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.engines.choose import decision_compiled
    >>> decision_compiled(kcxai.datasets.running_example_tree())
    Traceback (most recent call last):
    ...
    kcxai._errors.InvalidTypeError: The decision engines ('sat', 'search') decide tree ensembles (RandomForest, \
BoostedTrees); explain other models with min_idrs(model, x, 0). Got DecisionTree instead.
    """
    check("engine", engine, Options(DECISION_ENGINES))
    if not isinstance(model, Classifier) or not is_ensemble(model):
        raise InvalidTypeError(
            "The decision engines ('sat', 'search') decide tree ensembles (RandomForest, BoostedTrees); explain "
            f"other models with min_idrs(model, x, 0). Got {type(model).__name__} instead.")
    c = choose(model, "decisions", language=None if engine == "auto" else engine)
    if c.compiled is None:
        raise InvalidInputError(f"{type(model).__name__}: {c.reason}.")
    return c.compiled


def oracle_for(obj: object, answers: Sequence[str] = ("counts",), *, language: str | None = None,
               probe: ProbeBudget | None = None) -> tuple[Oracle, Classifier | None]:
    """The oracle answering what a user passed to an explainer, and its model (``None`` if unknown).

    A :class:`~kcxai.compilers.CompiledModel` answers through its oracle; a kcxai model through the
    engine :func:`choose` gives it for the first of ``answers`` that can be given (or through
    ``language``, cached by the model); a decision engine made by hand (``EnsembleCnf``,
    ``EnsembleBox``, ``EnsemblePortfolio``) through an :class:`~kcxai.engines._decision.EngineOracle`;
    an oracle answers itself.
    """
    if isinstance(obj, CompiledModel):
        return obj.oracle, obj.model
    if isinstance(obj, Classifier):
        if language is None:
            return native_compiled(obj, answers, probe=probe).oracle, obj
        c = choose(obj, get_language(language).answers, probe=probe, language=language)
        if c.compiled is None:
            raise InvalidInputError(f"{type(obj).__name__}: {c.reason}.")
        return c.compiled.oracle, obj
    if is_decision_engine(obj):
        return engine_oracle(obj), obj.model
    if callable(getattr(obj, "disagree_weight", None)) or callable(getattr(obj, "decide", None)):
        return cast(Oracle, obj), getattr(obj, "model", None)
    raise InvalidTypeError(
        "'obj' must be a kcxai model (e.g. DecisionTree), a CompiledModel from compile_model(), "
        f"or an oracle. Got {type(obj).__name__} instead.")


def native_compiled(model: Classifier, answers: Sequence[str] = ("counts",), *,
                    probe: ProbeBudget | None = None) -> CompiledModel:
    """The compiled form answering ``model`` for a method that ``answers`` serve (the first that can).

    Raises :class:`~kcxai.InvalidInputError` naming the model, what is needed and why each engine was
    not used, when none can.
    """
    if not isinstance(model, Classifier):
        raise InvalidTypeError(f"'model' must be a kcxai model. Got {type(model).__name__} instead.")
    tried = []
    for kind in answers:
        c = choose(model, kind, probe=probe)
        if c.compiled is not None:
            return c.compiled
        tried.append(c.reason)
    raise InvalidInputError(
        f"No engine answers this for {type(model).__name__}: it needs {describe_answers(answers)}, and "
        f"{'; '.join(tried)}. Compile it yourself with larger limits (compile_model(model, 'obdd', "
        "max_seconds=...)), or use delta = 0 (decisions) or a method that certified sampling answers "
        "(min_idrs, local_cdrs).")


def native_language(model: Classifier) -> str:
    """The exact counting language a model passed directly to an explainer is answered in (within the probe budget).

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.engines.choose import native_language
    >>> native_language(kcxai.datasets.running_example_tree())
    'dt'
    """
    return native_compiled(model).language


# -- compile_model: the public door to the languages -----------------------------------------


def available_languages() -> dict[str, bool]:
    """Which languages can be used here (their backend imports).

    Examples
    --------
    >>> from kcxai import available_languages
    >>> langs = available_languages()
    >>> langs["dt"], langs["brute"]
    (True, True)
    """
    return {name: lang.is_available() for name, lang in LANGUAGES.items()}


def get_language(language: str) -> Language:
    """The declared :class:`~kcxai.compilers.Language` of a name, or a clear error listing the languages."""
    if not isinstance(language, str):
        raise InvalidTypeError(f"'language' must be a str. Got {language!r} instead.")
    try:
        return LANGUAGES[language]
    except KeyError:
        raise UnknownLanguageError(
            f"Unknown language {language!r}. Available languages are {sorted(LANGUAGES)}.") from None


def _compile(lang: Language, model: Classifier, options: Mapping[str, object]) -> CompiledModel:
    """``lang.compile(model, **options)``, the compiled form marked as rebuilt by :func:`compile_model` in a
    worker process it is sent to (the one place a language compiles)."""
    compiled = lang.compile(model, **options)
    object.__setattr__(compiled, "_rebuild", compile_model)
    return compiled


def compile_model(model: Classifier, language: str | None = None, **options: object) -> CompiledModel:
    """Compile a classifier to a knowledge-compilation language, or to the engine chosen for it.

    Parameters
    ----------
    model : Classifier
        A kcxai model (:class:`~kcxai.DecisionTree`, ...).
    language : str, optional
        A name in :data:`kcxai.engines.LANGUAGES`: ``"dt"`` answers from a decision tree's own
        paths; ``"sdd"`` compiles with PySDD; ``"obdd"`` with dd (CUDD when available); ``"brute"``
        enumerates feature space (small models; the test reference); ``"sampling"`` estimates;
        ``"sat"`` and ``"search"`` are a tree ensemble's decision engines (delta = 0). Compiled afresh,
        with ``options``. ``None`` (default): the engine the explainers choose for an abductive
        explanation (:func:`choose`): exact counts when the model compiles within the probe budget (a
        tree's own paths, else an OBDD), else a tree ensemble's decision engine; that form is the one
        the model keeps in its engine cache, shared with the explainers (do not close it).
    **options
        The language's options (its :class:`~kcxai.compilers.LanguageOptions`; see each compiler
        module); only with ``language``.

    Returns
    -------
    CompiledModel

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> kcxai.compile_model(tree, "brute").language, kcxai.compile_model(tree).language
    ('brute', 'dt')
    """
    if not isinstance(model, Classifier):
        raise InvalidTypeError(f"'model' must be a kcxai model (e.g. DecisionTree). Got {type(model).__name__}.")
    if language is None:
        if options:
            raise InvalidInputError(f"Options {sorted(options)} apply to a language: give language=NAME too.")
        return native_compiled(model, ("counts", "decisions"))
    lang = get_language(language)
    if not lang.takes(model):
        raise InvalidTypeError(
            f"The {lang.name!r} language does not compile {type(model).__name__} models. "
            f"Languages that do: {[n for n, g in LANGUAGES.items() if g.takes(model)]}.")
    return _compile(lang, model, options)
