"""Compile classifiers to knowledge-compilation languages that count models.

Each language is one module exposing ``compile(model, **options) ->
CompiledModel``; modules are imported only when their language is asked for,
so a missing optional backend only matters to those who use it.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from kcxai._errors import InvalidTypeError, MissingDependencyError, UnknownLanguageError
from kcxai.compilers._base import CompiledModel

__all__ = ["compile_model", "available_languages", "LANGUAGES", "CompiledModel"]

#: name -> (module, the package it needs, how to install it)
LANGUAGES: dict[str, tuple[str, str | None, str | None]] = {
    "dt": ("kcxai.compilers.dt", None, None),
    "sdd": ("kcxai.compilers.sdd", "pysdd", "pip install pysdd"),
    "obdd": ("kcxai.compilers.obdd", "dd", "pip install dd"),
    "brute": ("kcxai.compilers.brute", None, None),
}


def available_languages() -> dict[str, bool]:
    """Which languages can be used here (their backend imports).

    Examples
    --------
    >>> from kcxai import available_languages
    >>> langs = available_languages()
    >>> langs["dt"], langs["brute"]
    (True, True)
    """
    out = {}
    for name, (module, package, _) in LANGUAGES.items():
        out[name] = (importlib.util.find_spec(module) is not None
                     and (package is None or importlib.util.find_spec(package) is not None))
    return out


def compile_model(model: Any, language: str = "dt", **options: Any) -> CompiledModel:
    """Compile a classifier to a knowledge-compilation language.

    Parameters
    ----------
    model : Classifier
        A kcxai model (:class:`~kcxai.DecisionTree`, ...).
    language : {"dt", "sdd", "obdd", "brute"}
        ``"dt"`` answers from a decision tree's own paths; ``"sdd"`` compiles
        with PySDD; ``"obdd"`` with dd (CUDD when available); ``"brute"``
        enumerates feature space (small models; the test reference).
    **options
        Language-specific options (see each compiler module).

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
    from kcxai.models._base import Classifier

    if not isinstance(language, str):
        raise InvalidTypeError(f"'language' must be a str. Got {language!r} instead.")
    if language not in LANGUAGES:
        raise UnknownLanguageError(
            f"Unknown language {language!r}. Available languages are {sorted(LANGUAGES)}.")
    if not isinstance(model, Classifier):
        raise InvalidTypeError(f"'model' must be a kcxai model (e.g. DecisionTree). Got {type(model).__name__}.")
    module, package, install = LANGUAGES[language]
    if package is not None:
        try:
            importlib.import_module(package)
        except ImportError:
            raise MissingDependencyError(
                f"The {language!r} language needs the '{package}' package, which is not installed. "
                f"Install it with `{install}`.") from None
    mod = importlib.import_module(module)
    return mod.compile(model, **options)
