"""The oracle a model is explained with when it is passed to an explainer directly, cached per model.

The choice and the cache live here, on the compilers' side: models know
nothing of compilers. A model is compiled once to the first language of
:data:`~kcxai.compilers.NATIVE_PREFERENCE` that takes it (a decision tree
answers from its own paths; anything else becomes an OBDD, under the
compiler's default limits) and the compiled form is kept in a small
least-recently-used cache keyed by the model's identity, so explaining many
instances of one model never recompiles it. (A weak-key cache cannot be used:
the compiled form refers to its model, which would then never be released.)
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from kcxai._errors import InvalidTypeError
from kcxai.compilers._base import CompiledModel
from kcxai.compilers.registry import LANGUAGES, NATIVE_PREFERENCE

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models._base import Classifier

__all__ = ["native_language", "native_compiled", "CACHE_SIZE"]

#: How many models' compiled forms are kept.
CACHE_SIZE = 8

_cache: "OrderedDict[int, CompiledModel]" = OrderedDict()
_lock = threading.Lock()


def native_language(model: "Classifier") -> str:
    """The language a model passed directly to an explainer is answered in.

    Examples
    --------
    >>> import kcxai
    >>> from kcxai.compilers.native import native_language
    >>> native_language(kcxai.datasets.running_example_tree())
    'dt'
    """
    for name in NATIVE_PREFERENCE:
        if LANGUAGES[name].takes(model):
            return name
    raise InvalidTypeError(  # pragma: no cover - obdd takes every model
        f"No language in {list(NATIVE_PREFERENCE)} compiles {type(model).__name__} models.")


def native_compiled(model: "Classifier") -> CompiledModel:
    """The model compiled to :func:`native_language`, compiled once and cached while the model lives."""
    key = id(model)
    with _lock:
        got = _cache.get(key)
        if got is not None and got.model is model:
            _cache.move_to_end(key)
            return got
    compiled = LANGUAGES[native_language(model)].compile(model)
    with _lock:
        _cache[key] = compiled
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return compiled
