"""Pausing Python's cyclic garbage collector while millions of acyclic objects are built."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while millions of acyclic containers are built.

    The objects built (node arrays, leaf scores, parsed JSON) hold no cycles, but
    each allocation burst triggers full collections that rescan everything alive:
    on a 100-tree adult forest the collector took about a third of the import
    time, and parsing its JSON took 13 s with it against 1.8 s without. Usable as
    a decorator too.

    Examples
    --------
    >>> import gc
    >>> with gc_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
