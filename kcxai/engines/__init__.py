"""What answers without compiling (tree paths, brute force, sampling, SAT, box search), the registry of
every language (:data:`LANGUAGES`) and the one chooser of an engine (:mod:`kcxai.engines.choose`,
with :func:`compile_model`)."""

from kcxai.engines._registry import LANGUAGES, NATIVE_PREFERENCE
from kcxai.engines.choose import available_languages, compile_model, get_language

__all__ = ["LANGUAGES", "NATIVE_PREFERENCE", "compile_model", "get_language", "available_languages"]
