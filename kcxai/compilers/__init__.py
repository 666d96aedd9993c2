"""Compile classifiers to knowledge-compilation languages that count models.

Every language is a declared :class:`Language` in :data:`LANGUAGES`, the one
registry the CLI, the experiments, the documentation and the conformance tests
read. A language's module is imported only when it is asked for, so a missing
optional backend only matters to those who use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kcxai._errors import InvalidTypeError, UnknownLanguageError
from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.language import Language, LanguageOptions, NoOptions
from kcxai.engines._registry import LANGUAGES, NATIVE_PREFERENCE

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["compile_model", "available_languages", "get_language", "LANGUAGES", "NATIVE_PREFERENCE",
           "CompiledModel", "CompileStats", "Language", "LanguageOptions", "NoOptions"]


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
    """The declared :class:`Language` of a name, or a clear error listing the languages."""
    if not isinstance(language, str):
        raise InvalidTypeError(f"'language' must be a str. Got {language!r} instead.")
    try:
        return LANGUAGES[language]
    except KeyError:
        raise UnknownLanguageError(
            f"Unknown language {language!r}. Available languages are {sorted(LANGUAGES)}.") from None


def compile_model(model: "Classifier", language: str = "dt", **options: Any) -> CompiledModel:
    """Compile a classifier to a knowledge-compilation language.

    Parameters
    ----------
    model : Classifier
        A kcxai model (:class:`~kcxai.DecisionTree`, ...).
    language : str
        A name in :data:`LANGUAGES`: ``"dt"`` answers from a decision tree's own
        paths; ``"sdd"`` compiles with PySDD; ``"obdd"`` with dd (CUDD when
        available); ``"brute"`` enumerates feature space (small models; the
        test reference).
    **options
        The language's options (its :class:`LanguageOptions`; see each compiler module).

    Returns
    -------
    CompiledModel

    Examples
    --------
    >>> import kcxai
    >>> tree = kcxai.datasets.running_example_tree()
    >>> compiled = kcxai.compile_model(tree, "dt")
    >>> compiled.language
    'dt'
    """
    from kcxai.models.classifier import Classifier

    lang = get_language(language)
    if not isinstance(model, Classifier):
        raise InvalidTypeError(f"'model' must be a kcxai model (e.g. DecisionTree). Got {type(model).__name__}.")
    if not lang.takes(model):
        raise InvalidTypeError(
            f"The {lang.name!r} language does not compile {type(model).__name__} models. "
            f"Languages that do: {[n for n, g in LANGUAGES.items() if g.takes(model)]}.")
    return lang.compile(model, **options)
