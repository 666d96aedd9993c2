"""The result of compiling a classifier: its oracle plus what the compilation cost."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kcxai.oracle import CountingOracle

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models._base import Classifier
    from kcxai.space import FeatureSpace

__all__ = ["CompiledModel", "CompileStats"]


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
        return self.to_dict()[key]

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
    oracle : CountingOracle
        Conditioning and counting on the compiled form.
    language : str
        ``"dt"``, ``"sdd"``, ``"obdd"``, ``"brute"``, ... (see :data:`kcxai.compilers.LANGUAGES`).
    backend : str
        The library doing the work (``"kcxai"``, ``"pysdd"``, ``"dd.cudd"``, ``"dd.autoref"``).
    stats : CompileStats
        ``size`` (in ``size_unit``), ``variables``, ``compile_seconds`` and language details.

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
    oracle: CountingOracle
    language: str
    backend: str
    stats: CompileStats

    def __post_init__(self) -> None:
        if not isinstance(self.stats, CompileStats):  # a compiler that still reports a plain dict
            unit = {"dt": "tree nodes", "sdd": "SDD nodes", "obdd": "OBDD nodes", "brute": "points"}.get(
                self.language, "nodes")
            object.__setattr__(self, "stats", CompileStats.from_mapping(self.stats, size_unit=unit))

    @property
    def space(self) -> "FeatureSpace":
        """The feature space of the model."""
        return self.model.space

    def predict(self, instance: Any) -> Any:
        """The class the compiled form gives an instance (user values)."""
        return self.model.classes[self.oracle.predict_point(self.model.space.encode(instance))]

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.stats.items())
        return f"CompiledModel(language={self.language!r}, backend={self.backend!r}, {extra})"

    def _repr_html_(self) -> str:
        import html

        rows = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in
                       [("language", self.language), ("backend", self.backend), *self.stats.items()])
        return f"<table>{rows}</table>"
