"""The languages the cross-language tests run, derived from the registry (never a hard-coded list).

A language declared in ``kcxai.engines._registry`` is picked up here; one whose module or backend
does not import makes ``test_conformance.test_every_declared_language_is_usable`` fail instead of
being skipped, unless its backend is an optional extra of kcxai (its install hint is
``pip install "kcxai[...]"``, as d4 for ``ddnnf``): then the tests leave it out, and that test skips.
"""

from __future__ import annotations

from kcxai.engines import LANGUAGES
from kcxai.compilers.language import Language


def is_optional(lang: Language) -> bool:
    """Whether ``lang``'s backend is installed by an extra of kcxai (its install hint names one)."""
    return lang.install is not None and "kcxai[" in lang.install


#: Declared languages left out here: their backend is an optional extra that is not installed.
MISSING_OPTIONAL = [n for n, lang in LANGUAGES.items() if is_optional(lang) and not lang.is_available()]

#: Exact languages the conformance suite holds to brute force (brute itself included).
EXACT = [n for n, lang in LANGUAGES.items() if lang.exact and lang.conformance and n not in MISSING_OPTIONAL]
#: Exact languages other than the reference.
COMPILED = [n for n in EXACT if n != "brute"]
#: Exact languages that take any model (not only trees).
ANY_MODEL = [n for n in COMPILED if LANGUAGES[n].accepts is None]
