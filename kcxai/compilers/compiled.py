"""The result of compiling a classifier: its oracle plus what the compilation cost."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from kcxai.oracle import BoundsOracle, CountingOracle, DecisionOracle

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier
    from kcxai.space import FeatureSpace

__all__ = ["CompiledModel", "CompileStats"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class CompileStats(Mapping[str, Any]):
    """What a compilation produced and cost, the same fields in every language.

    Attributes
    ----------
    size : int
        The size of the compiled form, in ``size_unit``.
    size_unit : str
        What ``size`` counts: ``"tree nodes"``, ``"SDD nodes"``, ``"OBDD nodes"``, ``"points"``, ...
    variables : int
        The Boolean variables of the encoding (features, for languages that work on features).
    compile_seconds : float
        Wall-clock seconds the compilation took.
    details : mapping
        Language-specific figures (node table sizes, order, encoding, ...).

    A ``CompileStats`` reads like the dict it replaces: ``stats["size"]``,
    ``stats["compile_seconds"]`` and every key of ``details``.
    """

    size: int
    size_unit: str
    variables: int
    compile_seconds: float
    details: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready dict: the common fields, then the details."""
        return {"size": self.size, "size_unit": self.size_unit, "variables": self.variables,
                "compile_seconds": self.compile_seconds, **self.details}

    def __getitem__(self, key: str) -> Any:
        if key in ("size", "size_unit", "variables", "compile_seconds"):
            return getattr(self, key)
        return self.details[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    @classmethod
    def from_mapping(cls, stats: Mapping[str, Any], *, size_unit: str) -> "CompileStats":
        """From a dict with at least ``size``, ``variables`` and ``compile_seconds``."""
        rest = {k: v for k, v in stats.items() if k not in ("size", "size_unit", "variables", "compile_seconds")}
        return cls(size=int(stats["size"]), size_unit=str(stats.get("size_unit", size_unit)),
                   variables=int(stats["variables"]), compile_seconds=float(stats["compile_seconds"]), details=rest)


@dataclass(frozen=True)
class CompiledModel:
    """A classifier compiled to a knowledge-compilation language.

    Pass it to any explainer (:func:`kcxai.min_idrs`, ...) in place of the model.

    Attributes
    ----------
    model : Classifier
        The source model.
    oracle : CountingOracle or DecisionOracle
        Conditioning and counting on the compiled form (or, for the ensemble engines ``sat`` and
        ``search``, delta = 0 sufficiency decisions).
    language : str
        ``"dt"``, ``"sdd"``, ``"obdd"``, ``"brute"``, ... (see :data:`kcxai.engines.LANGUAGES`).
    backend : str
        The library doing the work (``"kcxai"``, ``"pysdd"``, ``"dd.cudd"``, ``"dd.autoref"``).
    stats : CompileStats
        ``size`` (in ``size_unit``), ``variables``, ``compile_seconds`` and language details.
    options : mapping
        The options it was compiled with (all of the language's, defaults included).

    A compiled form is pickled (to a joblib worker process) as its model, language and options: the
    worker compiles it again, once per process (SDD, BDD and SAT objects cannot be pickled; see
    :func:`_rebuilt`). What is derived from it (a batch table, :meth:`derived`) is kept with it.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> compiled = kcxai.compile_model(tree, "brute")
    >>> compiled.language, compiled.stats.size, compiled.stats.size_unit, compiled.predict((1, 1, 1, 1, 0, 0, 0, 0, 1))
    ('brute', 512, 'points', 1)
    >>> kcxai.min_idrs(compiled, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path").names
    ('x1', 'x9')
    """

    model: "Classifier"
    oracle: CountingOracle | DecisionOracle | BoundsOracle
    language: str
    backend: str
    stats: CompileStats
    options: Mapping[str, Any] = field(default_factory=dict, compare=False)
    _token: str = field(default_factory=lambda: uuid.uuid4().hex, init=False, repr=False, compare=False)
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    #: How a worker process compiles it again (``compile_model(model, language, **options)``, set by
    #: :func:`kcxai.compile_model`, pickled by reference); ``None``: it cannot be sent to another process.
    _rebuild: "Callable[..., CompiledModel] | None" = field(default=None, init=False, repr=False, compare=False)

    def derived(self, key: str, make: Callable[[], _T]) -> _T:
        """What is derived from this compiled form (``make()``, e.g. a batch table), made once and kept with it."""
        with self._lock:
            got = self._derived.get(key)
        if got is None:
            got = make()
            with self._lock:
                got = self._derived.setdefault(key, got)
        return got  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        if self._rebuild is None:
            raise TypeError(f"This {self.language!r} compiled form was not made by kcxai.compile_model: it cannot be "
                            "sent to another process (pass the model, or compile_model's result).")
        return _rebuilt, (self._rebuild, self.model, self.language, dict(self.options), self._token)

    def __post_init__(self) -> None:
        if not isinstance(self.stats, CompileStats):  # a compiler that still reports a plain dict
            unit = {"dt": "tree nodes", "sdd": "SDD nodes", "obdd": "OBDD nodes", "brute": "points"}.get(
                self.language, "nodes")
            object.__setattr__(self, "stats", CompileStats.from_mapping(self.stats, size_unit=unit))

    @property
    def space(self) -> "FeatureSpace":
        """The feature space of the model."""
        return self.model.space

    def close(self) -> None:
        """Release what the compiled form holds outside Python (a SAT solver); it cannot be used after."""
        close = getattr(self.oracle, "close", None)
        if callable(close):
            close()

    def predict(self, instance: Any) -> Any:
        """The class the compiled form gives an instance (user values)."""
        return self.model.classes[self.oracle.predict_point(self.model.space.encode(instance))]

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.stats.items())
        return f"CompiledModel(language={self.language!r}, backend={self.backend!r}, {extra})"

    def _repr_html_(self) -> str:
        import html  # only for notebooks' HTML display

        rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in
                       [("language", self.language), ("backend", self.backend), *self.stats.items()])
        return f"<table>{rows}</table>"


#: The compiled forms a joblib worker process rebuilt, by the token of the parent's form: a worker
#: compiles each form once, however many chunks of rows it is sent. Bounded and guarded by a lock.
_REBUILT: "OrderedDict[str, CompiledModel]" = OrderedDict()
_REBUILT_SIZE = 4
_REBUILT_LOCK = threading.Lock()


def _rebuilt(rebuild: Callable[..., CompiledModel], model: "Classifier", language: str, options: dict[str, Any],
             token: str) -> CompiledModel:
    """The compiled form a pickled :class:`CompiledModel` stands for, compiled in this process once (by
    ``rebuild``, :func:`kcxai.compile_model`)."""
    with _REBUILT_LOCK:
        got = _REBUILT.get(token)
        if got is not None:
            _REBUILT.move_to_end(token)
            return got
    got = rebuild(model, language, **options)
    object.__setattr__(got, "_token", token)
    with _REBUILT_LOCK:
        _REBUILT[token] = got
        while len(_REBUILT) > _REBUILT_SIZE:
            _REBUILT.popitem(last=False)
    return got
