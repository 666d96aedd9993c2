"""Compile classifiers to knowledge-compilation languages that count models.

This package holds what compiles (SDD, OBDD, the ensemble construction, the counting tables) and
the types every language shares: :class:`CompiledModel` (what a compilation gives),
:class:`Language` and :class:`LanguageOptions` (how a language is declared). The registry of
declared languages, :func:`kcxai.compile_model` and the choice of an engine live in
:mod:`kcxai.engines` (which imports this package, never the other way round).
"""

from __future__ import annotations

from kcxai.compilers.compiled import CompiledModel, CompileStats
from kcxai.compilers.language import Language, LanguageOptions, NoOptions

__all__ = ["CompiledModel", "CompileStats", "Language", "LanguageOptions", "NoOptions"]
