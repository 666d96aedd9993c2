"""An explainer object, fitted once and applied to whole tables (the practitioner's path).

:class:`Explainer` imports a model once (a kcxai model, a fitted scikit-learn estimator or
``Pipeline``), picks the engines that answer it (:mod:`kcxai.engines.choose`: an exact counting
language when the model compiles within the probe budget; for a tree ensemble that does not, its
SAT or search engine at delta = 0 and certified sampling elsewhere), and explains one row
(:meth:`Explainer.explain_one`) or many (:meth:`Explainer.explain`, an
:class:`~kcxai.ExplanationSet`). It calls the functional API (:func:`kcxai.min_idrs`, ...) on the
compiled forms it keeps; the methods and what answers them are declared once, in
:mod:`kcxai.explain._methods`.
"""

from __future__ import annotations

import dataclasses
import sys
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from kcxai._batch import (ON_ERROR, SERIAL_CHUNK, Done, Job, check_n_jobs, chunks_of, progress_bar, run, stream_chunk,
                          session)
from kcxai._errors import InvalidInputError, InvalidTypeError, KcxaiError
from kcxai._params import BOOL, DEFAULT_FIT_BUDGET, NONE, Options, check, check_fit_budget
from kcxai._table import Table, TableReader
from kcxai._types import IdRow, InstanceLike, MethodOptions, ProbabilityLike, RowId, Values
from kcxai.data import DataLike
from kcxai.engines.choose import PROBE, Choice, ProbeBudget, choose, compile_model, get_language
from kcxai.evaluation import evaluate_on_data
from kcxai.compilers.compiled import CompiledModel
from kcxai.explain._methods import DEFAULT_METHOD, METHODS, Method, check_options, resolve_method
from kcxai.explain.explanation import Explanation
from kcxai.explanation_set import ExplanationSet, Row, RowFailure
from kcxai.models.classifier import Classifier
from kcxai.oracle import describe_answers
from kcxai.scoring import RuleScore, score_rule, score_rule_bounds
from kcxai.compilers._ensemble import is_additive

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
from kcxai.models.imports.route import import_model

__all__ = ["Explainer"]


class Explainer:
    """Explain a model's predictions on rows of a table, with exact guarantees.

    Parameters
    ----------
    model : Classifier, CompiledModel, ImportedPipeline, sklearn classifier or sklearn Pipeline
        A kcxai model; or a fitted scikit-learn-API estimator (every family :func:`kcxai.from_sklearn`
        takes: trees, random forests and extra trees, gradient boosting, histogram gradient boosting,
        XGBoost, LightGBM, naive Bayes, linear models); or a fitted ``Pipeline`` of encoders, monotone
        scalers and imputers before such an estimator (see :func:`kcxai.models.from_pipeline`):
        explanations then speak of the original columns (``sex = Male``, ``age > 37.5`` in the
        column's own units, ``missing``).
    X_train : table, optional
        Training rows (a DataFrame with the model's input columns, or an array): the feature domains of
        linear models without them, and the data a distribution given by name is fitted on.
    language : str, optional
        Force one language of :data:`kcxai.engines.LANGUAGES` (``"dt"``, ``"sdd"``, ``"obdd"``,
        ``"brute"``, ``"sampling"``, ``"sat"``, ``"search"``), compiled here with ``compile_options``
        and its own limits. Default: chosen per method and bound (see "How the engine is chosen").
    distribution : "auto", None, "product", "mixture", "uniform", Distribution or weights
        What every probability is under. ``"auto"`` (default): a product distribution fitted on
        ``X_train`` (per-column value frequencies, +1 smoothing) when it is given, else the model's
        own. ``None``: the model's own (uniform unless it was given one: the paper's setting). A kind is
        fitted on ``X_train`` with :func:`kcxai.fit_distribution` (``"mixture"``: a mixture of
        product distributions, which keeps dependencies between columns). A
        :class:`~kcxai.Distribution` or per-feature weights go to the model's ``with_distribution``.
    distribution_options : mapping, optional
        Passed to :func:`kcxai.fit_distribution` (``n_components``, ``random_state``, ``smoothing``, ...).
    class_names : mapping, optional
        Printed names of the classes, ``{class: name}`` (e.g. ``{1: "<=50K", 0: ">50K"}``).
    compile_options : mapping, optional
        Passed to :func:`kcxai.compile_model` with ``language``.
    probe : ProbeBudget, optional
        The limits within which an exact counting language must compile to be chosen (default
        :data:`kcxai.engines.choose.PROBE`: 3 s and 1 GiB). A tree ensemble's seconds are counted work
        (:class:`~kcxai.engines.choose.ProbeBudget`), so whether it is exact is the same on any machine, under
        any load (a wall-clock safety net stops a runaway, and then says so); other models' are wall clock.
    fit_budget : float, default 30
        The work a tree ensemble that does not compile within the probe may spend compiling to its
        ``bounded`` form (:mod:`kcxai.compilers.bounded`), in seconds of this library's reference rate:
        the construction counts its work and stops at ``fit_budget`` times
        :data:`~kcxai.compilers.bounded.WORK_PER_SECOND` units (about ``fit_budget`` seconds on the machine
        it was measured on; longer on a slower or busier one), never by the clock, so the same model, data
        and ``fit_budget`` give the same form and the same answers on any machine, in every run. It is exact
        when the construction predicts that the exact diagram fits the budget; else the least probable
        states are left undecided and every relevance test is decided from exact bounds (refined where they
        straddle the bound, sampled only as a marked last resort). A larger budget leaves less undecided. A
        wall-clock safety limit (:func:`~kcxai.compilers.bounded.safety_seconds`: 10 times ``fit_budget``, at
        least 10 s) stops a runaway; ``language_reason_`` then says the form is not reproducible.
    progress : bool or None, default None
        A progress bar while the bounded form is built (``tqdm``); ``None``: shown in a terminal or a
        notebook, ``False``: silent.

    Attributes
    ----------
    model_ : Classifier
        The kcxai model explained.
    compiled_ : CompiledModel or None
        Its exact counting form, ``None`` when it did not compile within the probe budget.
    language_ : str
        The language of ``compiled_`` (or the forced ``language``); for a model with no exact form, the
        engine answering the default method (``bounded`` for a tree ensemble, else ``sampling``). Never
        ``None``.
    language_reason_ : str
        Why: what was compiled, in how long and how large, or what limit stopped it; what will be exact,
        proven from bounds or sampled, and which option (``fit_budget=...``) changes that.
    reader_ : TableReader
        Reads input tables into the model's instances.

    Notes
    -----
    How the engine is chosen: each method declares the answers it can use at its bound
    (:mod:`kcxai.explain._methods`). Exact counts are used whenever the model compiled (a tree's own
    paths; an OBDD within the probe budget). Otherwise a tree ensemble's delta = 0 methods (``axp``,
    ``cxp``, ``smallest_axp``, ``smallest_cxp``, ``local_cdrs`` at precision 1) go to its decision
    engine (``sat`` for hard voting, ``search`` otherwise), and every other method to its ``bounded``
    form, built within ``fit_budget``: each relevance test decided from exact bounds, refined where they
    straddle the bound (the conditioned exact compile, the branch and bound over boxes), and only then,
    for ``min_idrs`` and ``local_cdrs``, by certified sampling of that one test (every result says
    ``decided``: ``exact``, ``proven`` or ``sampled``). A model with no bounded form (not a tree
    ensemble) goes to certified sampling (marked approximate, with its confidence). A method nothing
    can answer raises an error naming what would work, before any long work. :meth:`engine_for` tells
    the choice for a method; every result row says its ``language``, how it was ``decided`` and whether
    its measures are ``approximate``.

    Examples
    --------
    >>> import kcxai
    >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
    >>> e = explainer.explain_one((1, 1, 1, 1, 0, 0, 0, 0, 1), method="min_idrs", delta=0.03, start="path")
    >>> print(e.rule())
    IF x1 = 1 AND x9 = 1 THEN class = 1
    >>> explainer.explain([(1, 1, 1, 1, 0, 0, 0, 0, 1)] * 3, method="axp").to_frame()["size"].tolist()
    [5, 5, 5]
    >>> explainer.language_, explainer.language_reason_
    ('dt', "the decision tree's own paths (nothing to compile)")
    """

    def __init__(self, model: object, X_train: DataLike | None = None, *, language: str | None = None,
                 distribution: object = "auto", distribution_options: Mapping[str, object] | None = None,
                 class_names: Mapping[Hashable, Hashable] | None = None,
                 compile_options: Mapping[str, object] | None = None, probe: ProbeBudget | None = None,
                 fit_budget: float = DEFAULT_FIT_BUDGET, progress: bool | None = None) -> None:
        fit_budget = check_fit_budget(fit_budget)
        check("progress", progress, (BOOL, NONE))
        if isinstance(model, CompiledModel):  # its model: the explainer compiles what it needs itself
            model = model.model
        imported, reader = import_model(model, X_train, distribution=distribution,
                                        distribution_options=distribution_options, class_names=class_names)
        if compile_options is not None and not isinstance(compile_options, Mapping):
            raise InvalidTypeError(
                f"'compile_options' must be a mapping. Got {type(compile_options).__name__} instead.")
        if compile_options and language is None:
            raise InvalidInputError("'compile_options' apply to a forced language: give language=NAME too.")
        if probe is not None and not isinstance(probe, ProbeBudget):
            raise InvalidTypeError(f"'probe' must be a kcxai.engines.choose.ProbeBudget. Got {probe!r} instead.")
        self.model_: Classifier = imported
        self.reader_: TableReader = reader
        self.probe_: ProbeBudget = dataclasses.replace(probe or PROBE, bounded_seconds=float(fit_budget))
        self.fit_budget_ = float(fit_budget)
        self._progress = _shows_progress() if progress is None else progress
        self._choices: dict[str, Choice] = {}
        if language is not None:
            lang = get_language(language)
            forced = compile_model(imported, language, **dict(compile_options or {}))
            self._choices = {kind: Choice(kind, language, f"forced by language={language!r}", forced)
                             for kind in ("counts", "bounds", "estimates", "decisions") if kind == lang.answers}
            self.compiled_: CompiledModel | None = forced if lang.answers == "counts" else None
            self.language_: str = language
            self.language_reason_: str = f"forced by language={language!r}"
            self._forced: str | None = lang.answers
            return
        self._forced = None
        counts = choose(imported, "counts", probe=self.probe_)
        self._choices["counts"] = counts
        self.compiled_ = counts.compiled
        self.language_ = counts.language or ""
        self.language_reason_ = counts.reason
        if counts.compiled is None:
            self._fit_bounded(counts)

    def _fit_bounded(self, counts: Choice) -> None:
        """No exact form within the probe: the bounded form within the fit budget (a tree ensemble), else the
        default method's engine; ``language_`` and ``language_reason_`` say what will be exact, proven or
        sampled, and which option changes that."""
        with _bar(self._progress, self.fit_budget_) as report:
            bounds = choose(self.model_, "bounds", probe=self.probe_, progress=report)
        self._choices["bounds"] = bounds
        if bounds.compiled is not None:
            self.language_ = "bounded"
            exact = bool(bounds.compiled.stats["exact"])
            self.language_reason_ = (
                f"no exact form within the probe ({counts.reason}); {bounds.reason}. "
                + ("Every answer is counted exactly." if exact else
                   "Results say how they were decided (exact, proven, or sampled with its confidence, and then "
                   "why in 'missed'); "
                   f"fit_budget={_more(self.fit_budget_)} leaves less undecided"
                   + (f", and a larger exact probe (probe=ProbeBudget(max_seconds={_more(self.probe_.max_seconds)}))"
                      " may count every answer" if counts.limited else ""))
                + "; delta = 0 methods use the decision engine.")
            return
        m, value = resolve_method(DEFAULT_METHOD)
        choice = self._engine(m, value)
        self.language_ = choice.language or ""
        self.language_reason_ = (f"no exact form ({counts.reason}); {bounds.reason}; {m.name} is answered by "
                                 f"{choice.language}: {choice.reason}"
                                 + (f"; a larger exact probe (probe=ProbeBudget(max_seconds="
                                    f"{_more(self.probe_.max_seconds)})) may count every answer"
                                    if counts.limited else ""))

    # -- engines ----------------------------------------------------------------------

    def _choice(self, kind: str) -> Choice:
        got = self._choices.get(kind)
        if got is None:
            got = (choose(self.model_, kind, probe=self.probe_) if self._forced is None
                   else Choice(kind, None, f"language={self.language_!r} was forced"))
            self._choices[kind] = got
        return got

    def engine_for(self, method: str | None = None, *, delta: ProbabilityLike | None = None,
                   precision: ProbabilityLike | None = None) -> Choice:
        """The engine that answers ``method`` at its bound: a :class:`~kcxai.engines.choose.Choice`
        (``language``, ``answers`` and ``reason``), built if needed.

        Raises :class:`~kcxai.InvalidInputError` naming the model, the method and what would work when
        no engine can answer it.

        Examples
        --------
        >>> import kcxai
        >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
        >>> explainer.engine_for("axp").language
        'dt'
        """
        m, value = resolve_method(method, delta=delta, precision=precision)
        return self._engine(m, value)

    def _engine(self, m: Method, value: ProbabilityLike) -> Choice:
        needs = m.answers(value)
        tried = []
        for kind in needs:
            c = self._choice(kind)
            if c.compiled is not None:
                return c
            tried.append(c.reason)
        at = f"{m.bound}={value}"
        raise InvalidInputError(
            f"{type(self.model_).__name__}: method={m.name!r} at {at} needs {describe_answers(needs)}, and "
            f"{'; '.join(dict.fromkeys(tried))}. What would work: "
            + _alternatives(m, self._forced) + ".")

    @property
    def engines_(self) -> dict[str, str | None]:
        """The language answering each kind of answer chosen so far (``None``: none could), by kind."""
        return {k: c.language for k, c in self._choices.items()}

    # -- reading and predicting --------------------------------------------------------

    def instances(self, X: DataLike) -> list[Values]:
        """The rows of ``X`` as instances of :attr:`model_` (user values in feature order)."""
        return self.reader_.read(X).instances

    def predict(self, X: DataLike) -> list[Hashable]:
        """The class label the model predicts for each row of ``X``."""
        return [self.model_.predict(x) for x in self.instances(X)]

    # -- explaining -------------------------------------------------------------------

    def _job(self, method: str | None, delta: ProbabilityLike | None, precision: ProbabilityLike | None,
             options: MethodOptions, on_error: str) -> Job:
        m, value = resolve_method(method, delta=delta, precision=precision)  # names and bounds, before any work
        check_options(m, options)
        choice = self._engine(m, value)  # (inflate not given: the door widens where the method table says)
        return Job(cast(CompiledModel, choice.compiled), m.name, value, options, on_error)

    def explain_one(self, x: InstanceLike, *, method: str | None = None, delta: ProbabilityLike | None = None,
                    precision: ProbabilityLike | None = None, **options: object) -> Explanation:
        """The explanation of one row (see :meth:`explain` for the arguments).

        Raises the method's error if the row cannot be explained.
        """
        table = self.reader_.read(x, argument="x")
        if len(table.instances) != 1:
            raise InvalidInputError(f"'x' must be one row. Got {len(table.instances)} rows: use explain().")
        row, = run(self._job(method, delta, precision, options, "raise"), list(zip(table.ids, table.instances)),
                   n_jobs=None, progress=False)
        if not isinstance(row, Explanation):  # pragma: no cover - on_error="raise" never returns a failure
            raise InvalidInputError(str(row))
        return row

    def explain(self, X: DataLike, *, method: str | None = None, delta: ProbabilityLike | None = None,
                precision: ProbabilityLike | None = None, n_jobs: int | None = None, progress: bool = False,
                on_error: str = "raise", **options: object) -> ExplanationSet:
        """Explain every row of ``X``.

        Parameters
        ----------
        X : DataFrame, 2-D array, list of rows, dict or one row
            Rows with the model's input columns (a DataFrame is read by column name; its index gives
            the rows' ids).
        method : str, optional
            A method of :data:`kcxai.explain._methods.METHODS`: ``"local_cdrs"`` (a locally minimal set
            whose precision is at least ``precision``: the default, whose printed precision is what
            holds under the fitted distribution; ``"min_idrs"`` when only ``delta`` is given),
            ``"min_cdrs"``, ``"smallest_drs"`` (bounded by
            ``precision``); ``"min_idrs"`` (the paper's Algorithm 1: error at most ``delta``),
            ``"axp"`` (delta = 0: an abductive explanation), ``"smallest_idrs"``, ``"smallest_axp"``,
            ``"min_dual_idrs"``, ``"cxp"`` (a contrastive explanation), ``"smallest_dual_idrs"``,
            ``"smallest_cxp"`` (bounded by ``delta``).
        delta : number, optional
            The upper bound on the error ``Pr(kappa(x) != c and x_S = v_S)`` of the error-bounded
            methods (default 0). Floats are read as the decimals they print as.
        precision : number, optional
            The lower bound on ``Pr(kappa(x) = c | x_S = v_S)`` of the precision-bounded methods
            (default 0.95). A method given the other bound raises an error saying which it takes.
        n_jobs : int, optional
            ``None`` or 1: in this process. Otherwise joblib workers (-1: all cores), in chunks sized
            from the number of workers; inside ``joblib.parallel_config(backend="dask")`` the work goes to
            that Dask cluster (the compiled form sent to each worker once), inside ``"ray"`` to Ray. Every
            row's explanation is the same whichever runs it (see :mod:`kcxai._batch`).
        progress : bool, default False
            Show a progress bar (``tqdm.auto``: a widget in notebooks).
        on_error : {"raise", "report"}, default "raise"
            ``"raise"``: the first row that cannot be read or explained raises an error naming it.
            ``"report"``: such a row becomes a :class:`~kcxai.explanation_set.RowFailure` (``failure``
            column of :meth:`ExplanationSet.to_frame`) and the other rows are explained.
        **options
            Passed to the method (``order``, ``start``, ``max_seconds``: the time limit of each row,
            default 60 s, ``None``: none; a row that hits it raises :class:`~kcxai.SearchLimitError`,
            or is reported with ``on_error="report"``). ``inflate``: widen each rule's conditions while
            its guarantee holds (:func:`kcxai.inflate`); by default on
            (:meth:`~kcxai.explain._methods.Method.widens_by_default`) for AXps (``"axp"``, ``"smallest_axp"``,
            ``min_idrs`` at delta = 0) answered by exact counts or a decision engine, and for the
            precision-bounded methods answered by exact counts; off otherwise (``inflate=False``: the paper's
            sets, each feature fixed to the row's cell).

        Returns
        -------
        ExplanationSet
        """
        n_jobs = check_n_jobs(n_jobs)
        check("on_error", on_error, Options(ON_ERROR))
        job = self._job(method, delta, precision, options, on_error)
        rows, failed = self._read(X, on_error)
        return _assembled(job, rows, failed, run(job, rows, n_jobs=n_jobs, progress=progress))

    def explain_batches(self, tables: Iterable[DataLike], *, method: str | None = None,
                        delta: ProbabilityLike | None = None, precision: ProbabilityLike | None = None,
                        n_jobs: int | None = None, progress: bool = False, on_error: str = "raise",
                        **options: object) -> Iterator[ExplanationSet]:
        """Explain the rows of each table of ``tables`` in turn: one :class:`~kcxai.ExplanationSet` per table,
        in order, the same as :meth:`explain` gives it (same arguments).

        For tables too many to hold at once (chunks of a file: ``pandas.read_csv(..., chunksize=...)``,
        ``pyarrow``'s record batches): the tables are read as the work goes, a few chunks ahead of the
        results, on one pool of workers, each table in chunks of at least 256 rows
        (:func:`kcxai._batch.stream_chunk`); on a Dask cluster (inside ``joblib.parallel_config(backend="dask")``)
        the compiled form is sent to each worker once for all the tables, and the next table's chunks are
        running while this one's are returned. A table whose workers fail raises
        :class:`~kcxai.WorkerError` naming its chunk; the tables before it were yielded.

        Examples
        --------
        >>> import kcxai
        >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
        >>> tables = ([(1, 1, 1, 1, 0, 0, 0, 0, 1)] * k for k in (2, 1))
        >>> [len(s) for s in explainer.explain_batches(tables, method="axp")]
        [2, 1]
        """
        n_jobs = check_n_jobs(n_jobs)
        check("on_error", on_error, Options(ON_ERROR))
        job = self._job(method, delta, precision, options, on_error)
        read: deque[tuple[list[IdRow], list[tuple[RowId, RowFailure | None]], int]] = deque()
        with progress_bar(None, progress, job.method) as tick, session(job, n_jobs) as where:
            def chunks() -> Iterator[Sequence[IdRow]]:
                for X in tables:
                    rows, failed = self._read(X, on_error)
                    size = SERIAL_CHUNK if where.workers == 1 else stream_chunk(len(rows), where.workers)
                    pieces = chunks_of(rows, size)
                    read.append((rows, failed, len(pieces)))
                    yield from pieces

            done: list[Done] = []
            parts = 0
            for part in where.map(chunks()):
                done += part
                parts += 1
                tick(len(part))
                while read and parts == read[0][2]:  # this table's last chunk
                    rows, failed, _ = read.popleft()
                    yield _assembled(job, rows, failed, done)
                    done, parts = [], 0

    def _read(self, X: DataLike, on_error: str) -> tuple[list[IdRow], list[tuple[RowId, RowFailure | None]]]:
        """The rows to explain and, when some could not be read (``on_error="report"``), every row's id
        with its read failure or ``None``."""
        try:
            table = self.reader_.read(X)
            return list(zip(table.ids, table.instances)), []
        except KcxaiError:
            if on_error == "raise":
                raise
            singles = self._rows_of(X)
            if singles is None:  # not a batch of rows (one row, a bad table): nothing to report row by row
                raise
        rows: list[IdRow] = []
        every: list[tuple[RowId, RowFailure | None]] = []
        for rid, one in singles:
            try:
                t = self.reader_.read(one)
            except KcxaiError as err:
                every.append((rid, RowFailure(rid, (), type(err).__name__, str(err))))
                continue
            rows.append((rid, t.instances[0]))
            every.append((rid, None))
        return rows, every

    def evaluate(self, result: ExplanationSet, X: DataLike) -> "pd.DataFrame":
        """How each explanation's rule fares on the rows ``X`` that were not explained: a DataFrame with one
        row per row of ``result`` (``id``, ``data_rows``, ``data_matching``, ``data_coverage``,
        ``data_precision``, ``data_excluded``), to set beside :meth:`ExplanationSet.to_frame` (see
        :func:`kcxai.evaluate_on_data`). Rules always match the row they explain, so explained rows are
        left out and counted in ``data_excluded``: rows of a DataFrame whose index label is an id of
        ``result``, or, for rows without labels, the whole table when it is the one that was explained.
        Rows that failed, and dual sets, get empty figures.

        Examples
        --------
        >>> import kcxai
        >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
        >>> v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
        >>> result = explainer.explain([v], method="min_idrs", delta=0.03, start="path")
        >>> rows = [[1, 0, 0, 0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0, 0, 0, 1]]
        >>> explainer.evaluate(result, rows)[["data_matching", "data_precision", "data_excluded"]].values.tolist()
        [[2.0, 1.0, 0.0]]
        >>> explainer.evaluate(result, [v])["data_excluded"].tolist()  # the explained table itself
        [1]
        """
        import pandas as pd  # slow to import: loaded when a table is built

        if not isinstance(result, ExplanationSet):
            raise InvalidTypeError(f"'result' must be an ExplanationSet. Got {type(result).__name__} instead.")
        table = self.reader_.read(X)
        rows, excluded = self._unexplained(table, result)
        picked = [e for e in result if isinstance(e, Explanation) and e.kind == "relevant"]
        # the model, not the compiled form: evaluate_on_data finds the class index through model.classes
        found = evaluate_on_data(self.model_, picked, rows) if picked and rows else []
        metrics = iter(found if isinstance(found, list) else [found])
        out = []
        for rid, e in zip(result.ids, result):
            if isinstance(e, Explanation) and e.kind == "relevant" and rows:
                m = next(metrics)
                out.append({"id": rid, **m.to_dict(), "data_excluded": excluded})
            else:
                out.append({"id": rid, "data_rows": len(rows), "data_matching": None, "data_coverage": None,
                            "data_precision": None, "data_excluded": excluded})
        return pd.DataFrame.from_records(out, columns=["id", "data_rows", "data_matching", "data_coverage",
                                                       "data_precision", "data_excluded"])

    def score(self, rule: object, X: DataLike | None = None) -> RuleScore:
        """The exact precision and coverage of a rule (yours, or one kcxai printed) under the distribution,
        and on the rows ``X`` if given (see :func:`kcxai.score_rule`).

        ``rule`` is a mapping ``{column: value | interval | set of categories | "> 37.5"}`` or the text of
        a rule (``"IF age > 37.5 AND workclass in {Private} THEN class = >50K"``), over the original
        columns. A tree ensemble with no exact form gets the exact coverage and a proven interval on the
        precision (``decided`` ``"proven"``, :attr:`~kcxai.RuleScore.precision_bounds`).

        Examples
        --------
        >>> import kcxai
        >>> explainer = kcxai.Explainer(kcxai.datasets.running_example_tree())
        >>> s = explainer.score("IF x1 = 1 AND x9 = 1 THEN class = 1")
        >>> s.precision, s.coverage
        (Fraction(121, 128), Fraction(1, 4))
        """
        rows = None if X is None else self.reader_.read(X).instances
        if self.compiled_ is None and is_additive(self.model_):  # the coverage exact, the precision proven
            return score_rule_bounds(self.model_, rule, rows=rows)  # type: ignore[arg-type]  # checks the rule
        if self.compiled_ is None:
            raise InvalidInputError(
                f"Scoring a rule needs exact counts or a tree ensemble's bounds, and {type(self.model_).__name__} "
                f"has neither here: {self.language_reason_}. Pass language='obdd' with larger compile_options.")
        return score_rule(self.compiled_, rule, rows=rows)  # type: ignore[arg-type]  # score_rule checks the rule

    @staticmethod
    def _unexplained(table: Table, result: ExplanationSet) -> tuple[list[Values], int]:
        """The rows of ``table`` that ``result`` did not explain, and how many were left out."""
        rows = table.instances
        explained = [e.instance if isinstance(e, Explanation) else None for e in result]
        labelled = not all(isinstance(i, int) for i in table.ids) or list(table.ids) != list(range(len(rows)))
        if labelled:  # DataFrame index labels: leave out the rows explained
            ids = set(result.ids)
            keep = [r for rid, r in zip(table.ids, rows) if rid not in ids]
            return keep, len(rows) - len(keep)
        if len(rows) == len(explained) and all(x is None or tuple(x) == tuple(r) for x, r in zip(explained, rows)):
            return [], len(rows)  # the explained table itself: nothing is held out
        return rows, 0

    def _rows_of(self, X: DataLike) -> list[tuple[RowId, DataLike]] | None:
        """``(id, one-row table)`` for each row of a DataFrame or a 2-D array / list of rows, or ``None``
        when ``X`` is not such a batch, or its columns themselves are wrong (then every row would fail)."""
        if hasattr(X, "iloc") and hasattr(X, "columns"):
            frame = cast("pd.DataFrame", X)
            try:
                self.reader_._check_names(list(frame.columns), "X")
            except KcxaiError:
                return None
            return [(frame.index[k], frame.iloc[k:k + 1]) for k in range(len(frame))] or None
        if isinstance(X, (str, bytes, dict)) or hasattr(X, "iloc"):
            return None
        try:
            arr = np.asarray(X, dtype=object)
        except (TypeError, ValueError):
            return None
        if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] != len(self.reader_.columns):
            return None
        return [(k, [list(arr[k])]) for k in range(arr.shape[0])]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}: {c.language}" for k, c in self._choices.items())
        return f"Explainer({self.model_!r}, {shown})"


def _more(budget: float) -> str:
    return f"{max(2 * budget, 60):g}"


def _shows_progress() -> bool:
    """Whether a progress bar is shown by default: in a terminal, or in a notebook."""
    return bool(getattr(sys.stderr, "isatty", lambda: False)()) or "ipykernel" in sys.modules


class _bar:
    """A tqdm bar of the share of the probability mass the bounded construction has decided (a context
    manager giving the construction's progress callback, or ``None`` when silent)."""

    def __init__(self, show: bool, budget: float) -> None:
        self.show, self.budget, self.tqdm = show, budget, None

    def __enter__(self) -> Callable[[Any], None] | None:
        if not self.show:
            return None
        from tqdm.auto import tqdm  # heavy and warns at import in a notebook without ipywidgets: only when shown
        self.tqdm = tqdm(total=100, unit="% of mass", desc=f"compiling (fit budget {self.budget:g} s)",
                         leave=False)
        return self._report

    def _report(self, p: Any) -> None:
        bar = self.tqdm
        if bar is None:
            return
        bar.n = int(100 * p.done)
        bar.set_postfix_str(f"{p.phase}, {p.seconds:.1f} s, {p.nodes:,} nodes", refresh=False)
        bar.refresh()

    def __exit__(self, *exc: object) -> None:
        if self.tqdm is not None:
            self.tqdm.close()


def _assembled(job: Job, rows: list[IdRow], failed: list[tuple[RowId, RowFailure | None]],
               done: list[Done]) -> ExplanationSet:
    """The :class:`ExplanationSet` of a table: the rows explained (``done``, in the order of ``rows``), with the
    rows that could not be read (``failed``: every row's id with its read failure or ``None``) in their places."""
    items: list[Done]
    if not failed:
        items = done
        ids = [r[0] for r in rows]
    else:  # put the rows that could not be read back in their places
        explained = iter(done)
        ids, items = [], []
        for rid, fail in failed:
            ids.append(rid)
            items.append(next(explained) if fail is None else fail)
    bounds = "precision" if METHODS[job.method].bound == "precision" else "error"
    return ExplanationSet(cast(list[Row], items), ids, bounds=bounds)  # Lazy entries are rebuilt when read


def _alternatives(m: Method, forced: str | None) -> str:
    """What would answer a method nothing answered: the kinds of answer and the methods that use them."""
    zero = [n for n, x in METHODS.items() if "decisions" in x.answers(x.fixed if x.fixed is not None else
                                                                        (1 if x.bound == "precision" else 0))]
    sampled = [n for n, x in METHODS.items() if x.estimates]
    out = ["an exact counting language with larger limits (language='obdd', compile_options={'max_seconds': "
           "600})", f"delta = 0 methods on the decision engine ({', '.join(zero[:6])})",
           f"certified sampling for {', '.join(sampled)} (language='sampling')"]
    if forced is not None:
        out.insert(0, "another language than the one forced")
    return "; ".join(out)

