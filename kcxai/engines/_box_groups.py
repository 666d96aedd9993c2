"""Per-box reductions over rows grouped by their box: the array steps of the box search
(:mod:`kcxai.engines._box_search`), whose rows are sorted by the box that owns them."""

from __future__ import annotations

import numpy as np

from kcxai.engines._box_leaves import IntArray, MaskArray, NumberArray

__all__ = ["group_starts", "per_box", "most_common"]

_ZERO = np.zeros(1, dtype=np.int64)


def group_starts(keys: IntArray) -> IntArray:
    """The positions where a sorted key array changes (0 first)."""
    breaks = np.flatnonzero(keys[1:] != keys[:-1])
    breaks += 1
    return np.concatenate((_ZERO, breaks))


def per_box(values: NumberArray, owner: IntArray, n_boxes: int) -> NumberArray:
    """Sums of ``values`` per owner (``owner`` ascending; boxes without values get 0)."""
    out = np.zeros(n_boxes, dtype=values.dtype)
    if len(values):
        starts = group_starts(owner)
        out[owner[starts]] = np.add.reduceat(values, starts)
    return out


def most_common(owner: IntArray, keys: MaskArray, n_boxes: int, default: MaskArray) -> MaskArray:
    """Per box, the key that occurs most often among its rows (``default`` for a box without rows)."""
    out: MaskArray = default.copy()
    if not len(owner):
        return out
    order = np.lexsort((keys, owner))
    owner, keys = owner[order], keys[order]
    breaks = np.flatnonzero((owner[1:] != owner[:-1]) | (keys[1:] != keys[:-1])) + 1
    starts = np.concatenate((_ZERO, breaks))
    count = np.diff(starts, append=len(owner))
    run_owner, run_key = owner[starts], keys[starts]
    best = np.lexsort((-count, run_owner))
    first = best[group_starts(run_owner[best])]
    out[run_owner[first]] = run_key[first]
    return out
