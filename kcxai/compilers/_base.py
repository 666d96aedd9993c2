"""The result of compiling a classifier: its oracle plus what the compilation cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kcxai.oracle import CountingOracle

__all__ = ["CompiledModel"]


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
        ``"dt"``, ``"sdd"``, ``"obdd"``, ``"brute"``, ...
    backend : str
        The library doing the work (``"kcxai"``, ``"pysdd"``, ``"dd.cudd"``, ``"dd.autoref"``).
    stats : dict
        At least ``size`` (nodes or path literals), ``variables`` and ``compile_seconds``.

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> compiled = kcxai.compile_model(tree, "brute")
    >>> compiled.language, compiled.stats["size"], compiled.predict((1, 1, 1, 1, 0, 0, 0, 0, 1))
    ('brute', 512, 1)
    >>> kcxai.min_idrs(compiled, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0.03, start="path").names
    ('x1', 'x9')
    """

    model: Any
    oracle: CountingOracle
    language: str
    backend: str
    stats: dict[str, Any] = field(default_factory=dict)

    @property
    def space(self) -> Any:
        """The feature space of the model."""
        return self.model.space

    def predict(self, instance: Any) -> Any:
        """The class the compiled form gives an instance (user values)."""
        return self.model.classes[self.oracle.predict_point(self.model.space.encode(instance))]

    def __str__(self) -> str:
        extra = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.stats.items())
        return f"CompiledModel(language={self.language!r}, backend={self.backend!r}, {extra})"

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in
                       [("language", self.language), ("backend", self.backend), *self.stats.items()])
        return f"<table>{rows}</table>"
