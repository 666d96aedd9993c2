"""Reading and writing user files: OS errors become kcxai errors that name the path; writes are atomic.

A write goes to a temporary file in the target's directory, which then replaces
the target in one step (``os.replace``): a failed write (a full disk, an
unwritable directory, a value that cannot be serialised) leaves the old file as
it was, never a truncated one.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import IO

from kcxai._errors import FileAccessError, ModelFormatError

__all__ = ["read_text", "atomic_writer", "write_text", "file_error"]


def file_error(e: OSError, path: str | os.PathLike[str], action: str = "read") -> FileAccessError:
    """A :class:`FileAccessError` for an ``OSError`` met while ``action``-ing ``path``."""
    where = os.fspath(path)
    if isinstance(e, FileNotFoundError):
        why = "no such file or directory"
    elif isinstance(e, IsADirectoryError):
        why = "it is a directory, not a file"
    elif isinstance(e, PermissionError):
        why = "permission denied"
    elif isinstance(e, NotADirectoryError):
        why = "a part of the path is not a directory"
    else:
        why = e.strerror or str(e) or type(e).__name__
    return FileAccessError(f"cannot {action} {where!r}: {why}.", where)


def read_text(path: str | os.PathLike[str], *, what: str = "file") -> str:
    """The text of a UTF-8 file.

    Raises :class:`FileAccessError` when the file cannot be opened and
    :class:`ModelFormatError` (with the byte offset) when it is not UTF-8 text.

    Examples
    --------
    >>> from kcxai._files import read_text
    >>> read_text("/no/such/model.json")
    Traceback (most recent call last):
    ...
    kcxai._errors.FileAccessError: cannot read '/no/such/model.json': no such file or directory.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as e:
        raise file_error(e, path) from None
    except (TypeError, ValueError):  # a path that is not a path (None, an embedded NUL byte)
        raise FileAccessError(f"cannot read {path!r}: not a valid file path.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ModelFormatError(
            f"{os.fspath(path)!r} is not a UTF-8 text {what}: undecodable byte at offset {e.start}.") from None


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO]:  # type: ignore[type-arg]
    """A file handle whose content replaces ``path`` only when the ``with`` block ends without error.

    Text is written as UTF-8 with no newline translation (what ``csv`` needs).

    Examples
    --------
    >>> import os, tempfile
    >>> from kcxai._files import atomic_writer, read_text
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_writer(path) as fh:
    ...     _ = fh.write("old")
    >>> try:
    ...     with atomic_writer(path) as fh:
    ...         _ = fh.write("new, half wri")
    ...         raise RuntimeError("failed mid-write")
    ... except RuntimeError:
    ...     pass
    >>> read_text(path), os.listdir(os.path.dirname(path))
    ('old', ['out.txt'])
    """
    where = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(where))
    try:
        if os.path.isdir(where):
            raise IsADirectoryError(21, "Is a directory", where)
        try:
            mode = stat.S_IMODE(os.stat(where).st_mode)
        except FileNotFoundError:
            mode = _new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(where)}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise file_error(e, path, "write") from None
    try:
        fh: IO  # type: ignore[type-arg]
        if binary:
            fh = os.fdopen(fd, "wb")
        else:
            fh = os.fdopen(fd, "w", encoding="utf-8", newline="")
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, where)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and not isinstance(e, FileAccessError):
            raise file_error(e, path, "write") from None
        raise


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8)."""
    with atomic_writer(path) as fh:
        fh.write(text)
