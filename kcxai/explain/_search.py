"""Shared by the C-delta explainers: the tree engine and the subset search (and the exact precision test,
:class:`~kcxai.explain._query.PrecisionTest`, re-exported)."""

from __future__ import annotations

import itertools
import numbers
from collections.abc import Iterable, Sequence
from typing import cast

from kcxai._deadline import Deadline
from kcxai._errors import SearchLimitError
from kcxai._params import Range, check
from kcxai.arithmetic import Probability
from kcxai.explain._query import PrecisionTest, Query
from kcxai.explain._treesat import TreePrecision
from kcxai.oracle import has_paths

__all__ = ["PrecisionTest", "tree_precision", "first_relevant", "check_max_subsets", "DEFAULT_MAX_SUBSETS"]

#: Default limit on the candidate sets an exact search over subsets examines (non-tree models).
DEFAULT_MAX_SUBSETS = 1 << 16


def tree_precision(q: Query, delta: Probability) -> TreePrecision | None:
    """The exact path engine when ``q``'s oracle answers from a decision tree's paths, else ``None``.

    The engine's bounds need a product distribution (see :class:`TreePrecision`); under a mixture
    the callers use the generic exact search over subsets instead.
    """
    if q.space.distribution.n_components == 1 and has_paths(q.oracle):  # not isinstance: it reads the paths
        return TreePrecision(q.oracle.paths, q.space, q.point, q.label, delta)
    return None


def check_max_subsets(max_subsets: object) -> int:
    """A positive int."""
    return int(cast(numbers.Integral, check("max_subsets", max_subsets, Range(numbers.Integral, 1))))


def first_relevant(test: PrecisionTest, pool: Sequence[int], sizes: Iterable[int], *, max_subsets: int,
                   what: str, deadline: Deadline) -> frozenset[int] | None:
    """The first C-delta-relevant subset of ``pool``, trying sizes in the given order, then
    subsets in lexicographic order; ``None`` if there is none.

    Raises :class:`~kcxai.SearchLimitError` rather than examine more than ``max_subsets`` sets or
    run past ``deadline`` (checked before each set).
    """
    seen = 0
    for k in sizes:
        for combo in itertools.combinations(pool, k):
            deadline.check()
            seen += 1
            if seen > max_subsets:
                raise SearchLimitError(
                    f"{what} searches the subsets of {len(pool)} features exactly and has examined "
                    f"'max_subsets' = {max_subsets} sets without finishing ({deadline.seconds:.2f} s). Pass a "
                    "larger 'max_subsets', explain a DecisionTree with its own ('dt') oracle, which uses a SAT "
                    "search instead, or use local_cdrs.", limit="max_subsets", seconds=deadline.seconds)
            deadline.examined = seen
            s = frozenset(combo)
            if test.relevant(s):
                return s
    return None
