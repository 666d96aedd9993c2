"""The options of the ``ddnnf`` language (:mod:`kcxai.compilers.ddnnf`), typed and checked.

Kept apart from the compiler so that the language registry can declare them without importing it.

Examples
--------
>>> DdnnfOptions.from_kwargs(max_clauses=10_000).max_clauses
10000
>>> DdnnfOptions.from_kwargs(remove_gates="yes")
Traceback (most recent call last):
...
kcxai._errors.InvalidTypeError: 'remove_gates' must be True or False. Got 'yes' instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Union

from kcxai._errors import InvalidInputError
from kcxai._params import BOOL, NONE, POSITIVE_INT, check
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, DEFAULT_MAX_SECONDS
from kcxai.compilers.language import LanguageOptions

__all__ = ["DdnnfOptions", "DEFAULT_MAX_CLAUSES", "DEFAULT_MAX_VARIABLES"]

#: Default ``max_clauses`` of the CNF handed to d4.
DEFAULT_MAX_CLAUSES = 5_000_000
#: Default ``max_variables`` of the CNF handed to d4.
DEFAULT_MAX_VARIABLES = 2_000_000


@dataclass(frozen=True)
class DdnnfOptions(LanguageOptions):
    """The options of the ``"ddnnf"`` language.

    Attributes
    ----------
    remove_gates : bool, default True
        d4's gate removal: the circuit is given to d4 as gates, and a gate whose output no longer matters
        is dropped during the search (measured on a 155-node allhyper tree: 3,505 d-DNNF nodes with it,
        63,372 with the plain Tseitin CNF). ``False``: d4 compiles the gates as plain clauses.
    max_clauses : int or None, default 5,000,000
        Clauses of the CNF (checked while it is written, before d4 starts).
    max_variables : int or None, default 2,000,000
        Variables of the CNF (checked as gates are made).
    max_nodes : int or None, default 2,000,000
        Nodes of the d-DNNF d4 returns (checked once it is read: d4 cannot be stopped on a size).
    max_seconds : float or None, default 300
        Wall-clock seconds of the whole compilation (CNF, d4, reading back); d4 runs in a child process
        that is killed at the limit.
    max_memory : int or None, default 4 GiB
        Resident memory of d4's child process, in bytes (killed beyond it); the CNF's construction in this
        process is held to the same growth.
    """

    language: ClassVar[str] = "ddnnf"

    remove_gates: bool = True
    max_clauses: Union[int, None] = DEFAULT_MAX_CLAUSES
    max_variables: Union[int, None] = DEFAULT_MAX_VARIABLES
    max_nodes: Union[int, None] = DEFAULT_MAX_NODES
    max_seconds: Union[float, None] = DEFAULT_MAX_SECONDS
    max_memory: Union[int, None] = DEFAULT_MAX_MEMORY

    def validate(self) -> None:
        check("remove_gates", self.remove_gates, BOOL)
        for name in ("max_clauses", "max_variables", "max_nodes", "max_memory"):
            check(name, getattr(self, name), (POSITIVE_INT, NONE))
        ms = self.max_seconds
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms > 0
                               or math.isnan(ms)):
            raise InvalidInputError(f"'max_seconds' must be a positive number or None. Got {ms!r} instead.")
