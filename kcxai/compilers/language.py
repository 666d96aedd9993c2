"""A knowledge-compilation language, declared once: the seam every language plugs into.

A :class:`Language` names the module that compiles (imported on first use, so
a missing backend only matters to those who ask for it), the backend package
and how to install it, its typed options (a frozen dataclass derived from
:class:`LanguageOptions`, with defaults and validation), which models it takes,
and whether its counts are exact. The registry (:data:`kcxai.engines.LANGUAGES`),
the CLI's choices, the experiments, the documentation's language list and the
cross-language conformance tests are all derived from the declared languages,
so adding a language is one module plus one registry entry.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from kcxai._errors import InvalidInputError, MissingDependencyError

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.compilers.compiled import CompiledModel
    from kcxai.models.classifier import Classifier

__all__ = ["Language", "LanguageOptions", "NoOptions"]

_O = TypeVar("_O", bound="LanguageOptions")


@dataclass(frozen=True)
class LanguageOptions:
    """Base of every language's options: a frozen dataclass with defaults.

    Subclasses declare their options as fields and may override
    :meth:`validate`. :meth:`from_kwargs` rejects unknown names with the list
    of known ones.
    """

    language: ClassVar[str] = ""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_kwargs(cls: type[_O], **kwargs: Any) -> _O:
        """Options from keyword arguments, validated."""
        unknown = sorted(set(kwargs) - set(cls.names()))
        if unknown:
            lang = f"The {cls.language!r} language" if cls.language else "This language"
            raise InvalidInputError(
                f"{lang} does not take the option(s) {unknown}. Its options are {list(cls.names()) or 'none'}.")
        opts = cls(**kwargs)
        opts.validate()
        return opts

    def validate(self) -> None:
        """Raise :class:`~kcxai.InvalidInputError` naming a bad option (none by default)."""

    def as_kwargs(self) -> dict[str, Any]:
        """The options as keyword arguments."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class NoOptions(LanguageOptions):
    """A language without options."""


@dataclass(frozen=True)
class Language:
    """A declared knowledge-compilation language.

    Attributes
    ----------
    name : str
        Short name used everywhere (``"dt"``, ``"sdd"``, ...).
    module : str
        The module whose ``compile(model, **options)`` returns a
        :class:`~kcxai.compilers.CompiledModel`; imported on first use.
    summary : str
        One line for the documentation and ``kcxai languages``.
    options : dataclass type with ``from_kwargs``, optional
        The typed options (a frozen dataclass such as a :class:`LanguageOptions`
        subclass, validated by its ``from_kwargs``); ``None`` when the module validates its own
        (``compile`` is then given the keyword arguments as they are).
    package : str, optional
        The backend package it needs, and ``install`` how to get it.
    accepts : callable, optional
        Whether it compiles a given model (default: every model).
    answers : {"counts", "bounds", "estimates", "decisions"}
        What its oracle answers (:data:`kcxai.oracle.ANSWERS`): exact weighted
        model counts (every explanation method); exact lower and upper bounds
        on them (:class:`~kcxai.oracle.BoundsOracle`); estimates with certified
        relevance decisions (the deletion loops; explanations carry a
        confidence); or sufficiency decisions only (delta = 0 methods: AXps,
        CXps and the smallest of them).
    conformance : bool
        Whether the cross-language conformance suite holds it to brute force
        on random models (the other languages are tested separately).

    Examples
    --------
    >>> lang = Language("toy", "kcxai.engines.brute", "enumeration", package="numpy", install="pip install numpy")
    >>> lang.exact, lang.answers, lang.is_available()
    (True, 'counts', True)
    """

    name: str
    module: str
    summary: str
    options: Any = NoOptions
    package: str | None = None
    install: str | None = None
    accepts: Callable[["Classifier"], bool] | None = field(default=None, compare=False)
    answers: str = "counts"
    conformance: bool = True

    @property
    def exact(self) -> bool:
        """Whether every number its explanations report is exact (counts, exact bounds, or delta = 0 decisions)."""
        return self.answers != "estimates"

    def is_available(self) -> bool:
        """Whether the backend imports here."""
        return (importlib.util.find_spec(self.module) is not None
                and (self.package is None or importlib.util.find_spec(self.package) is not None))

    def require(self) -> None:
        """Raise :class:`~kcxai.MissingDependencyError` (saying how to install) if the backend is missing."""
        if self.package is None:
            return
        try:
            importlib.import_module(self.package)
        except ImportError:
            raise MissingDependencyError(
                f"The {self.name!r} language needs the '{self.package}' package, which is not installed. "
                f"Install it with `{self.install}`.") from None

    def takes(self, model: "Classifier") -> bool:
        """Whether this language compiles ``model``."""
        return self.accepts is None or self.accepts(model)

    def option_names(self) -> tuple[str, ...]:
        """The names of the options this language takes."""
        if self.options is not None:
            return tuple(f.name for f in dataclasses.fields(self.options))
        defaults = getattr(importlib.import_module(self.module), "DEFAULTS", {})
        return tuple(defaults)

    def parse_options(self, **options: Any) -> dict[str, Any]:
        """Validated options as keyword arguments for the module's ``compile``."""
        if self.options is None:
            return dict(options)
        opts = self.options.from_kwargs(**options)
        return {f.name: getattr(opts, f.name) for f in dataclasses.fields(opts)}

    def compile(self, model: "Classifier", **options: Any) -> "CompiledModel":
        """Compile ``model`` (checks the backend and the options first)."""
        self.require()
        kwargs = self.parse_options(**options)
        compiled: CompiledModel = importlib.import_module(self.module).compile(model, **kwargs)
        if not compiled.options:
            object.__setattr__(compiled, "options", dict(kwargs))
        return compiled
