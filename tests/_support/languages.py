"""The languages the cross-language tests run, derived from the registry (never a hard-coded list).

A language declared in ``kcxai.engines._registry`` is picked up here; one whose module or backend
does not import makes ``test_conformance.test_every_declared_language_is_usable`` fail instead of
being skipped.
"""

from __future__ import annotations

from kcxai.engines import LANGUAGES

#: Exact languages the conformance suite holds to brute force (brute itself included).
EXACT = [n for n, lang in LANGUAGES.items() if lang.exact and lang.conformance]
#: Exact languages other than the reference.
COMPILED = [n for n in EXACT if n != "brute"]
#: Exact languages that take any model (not only trees).
ANY_MODEL = [n for n in COMPILED if LANGUAGES[n].accepts is None]
