"""Exception hierarchy of kcxai.

Every error kcxai raises on purpose derives from :class:`KcxaiError`, and also
from the built-in exception that fits, so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

__all__ = [
    "KcxaiError",
    "InvalidInputError",
    "InvalidTypeError",
    "ModelFormatError",
    "FileAccessError",
    "NotRelevantError",
    "NotProvenError",
    "MissingDependencyError",
    "UnknownLanguageError",
    "CompilationLimitError",
    "BackendError",
    "ProblemTooLargeError",
    "SearchLimitError",
    "name_mismatch",
]


class KcxaiError(Exception):
    """Root of every error raised by kcxai."""


class InvalidInputError(KcxaiError, ValueError):
    """An argument has the right type but a value outside what is accepted."""


class InvalidTypeError(KcxaiError, TypeError):
    """An argument has a type kcxai does not accept."""


class ModelFormatError(KcxaiError, ValueError):
    """A model file or model description is malformed."""


class FileAccessError(KcxaiError, OSError):
    """A file could not be read or written (missing, a directory, no permission, disk full).

    The message names the path; :attr:`filename` holds it too, as for any ``OSError``.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.filename = path

    def __str__(self) -> str:  # OSError would print "[Errno None] None: path"
        return str(self.args[0]) if self.args else ""


class NotRelevantError(InvalidInputError):
    """A set given as the start of a deletion loop is not relevant."""


class MissingDependencyError(KcxaiError, ImportError):
    """An optional dependency needed for the requested feature is not installed."""


class UnknownLanguageError(InvalidInputError):
    """The requested knowledge-compilation language is not known."""


class CompilationLimitError(KcxaiError, RuntimeError):
    """Compilation exceeded the size or time limit it was given."""


class BackendError(KcxaiError, RuntimeError):
    """A compiler's backend failed on an input kcxai gave it (it crashed, or reported an error)."""


class ProblemTooLargeError(KcxaiError, RuntimeError):
    """An exact search would exceed the limit it was given."""


class NotProvenError(ProblemTooLargeError):
    """A query on a bounded form (a tree ensemble's ``bounded`` diagram) could not be decided exactly within
    its refinement budgets, and the method needs exact answers; the message names the option that makes
    the model exact."""


class WorkerError(KcxaiError, RuntimeError):
    """The workers running a chunk of a batch failed (a worker process killed, a cluster that died).

    Attributes
    ----------
    chunk : int
        The chunk's number in its batch (from 0); when a pool of workers failed without saying which task
        (a joblib worker process killed), the first of the chunks not returned from its round.
    first, last : hashable
        The ids of the first and last rows of those chunks (``None`` for an empty chunk).

    The rows of the chunks before it were explained (and written, by ``kcxai explain-csv``); the attributes
    have defaults so that the error can be rebuilt from its message alone.
    """

    def __init__(self, message: str = "", *, chunk: int = 0, first: Any = None, last: Any = None) -> None:
        super().__init__(message)
        self.chunk = chunk
        self.first = first
        self.last = last


class SearchLimitError(ProblemTooLargeError):
    """An exact search hit the limit it was given (``max_seconds`` or ``max_subsets``).

    Attributes
    ----------
    limit : str
        ``"max_seconds"`` or ``"max_subsets"``.
    seconds : float
        Seconds the search ran.
    partial : tuple
        What an enumeration had found (and yielded) before it stopped: never the complete list.

    The attributes have defaults so that the error can be rebuilt from its message alone (pickling
    between processes, the batch runner naming the row); the message always carries the figures.
    """

    def __init__(self, message: str = "", *, limit: str = "max_seconds", seconds: float = 0.0,
                 partial: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.limit = limit
        self.seconds = seconds
        self.partial = tuple(partial)


def name_mismatch(given: "Iterable[object]", expected: "Iterable[str]") -> str | None:
    """``"Missing [...], unexpected [...]."`` when ``given`` (names as text) is not exactly ``expected``, else ``None``.

    The one wording of every "these must be exactly the model's features" error.

    Examples
    --------
    >>> name_mismatch(["b", "c"], ["a", "b"])
    "Missing ['a'], unexpected ['c']."
    >>> name_mismatch(["b", "a"], ["a", "b"]) is None
    True
    """
    got = [str(x) for x in given]
    expected = list(expected)
    missing = [n for n in expected if n not in got]
    extra = [g for g in got if g not in expected]
    return f"Missing {missing}, unexpected {extra}." if missing or extra else None
