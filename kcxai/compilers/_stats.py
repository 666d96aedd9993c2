"""What a diagram compilation cost and produced: :class:`SddStats`, :class:`ObddStats`.

Frozen dataclasses with ``to_dict()``; ``CompiledModel.stats`` is the common
:class:`~kcxai.compilers.CompileStats` (``size`` in ``size_unit``, ``variables``,
``compile_seconds``) with these figures as its ``details``.

Examples
--------
>>> import kcxai
>>> c = kcxai.compile_model(kcxai.datasets.running_example_tree(), "sdd")
>>> from kcxai.compilers._stats import SddStats
>>> s = SddStats(**{k: v for k, v in c.stats.items() if k != "size_unit"})
>>> s.variables, s.features, c.stats.size_unit
(9, 9, 'SDD nodes')
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["DiagramStats", "SddStats", "ObddStats"]


@dataclass(frozen=True)
class DiagramStats:
    """What every diagram compiler reports.

    Attributes
    ----------
    size : int
        The diagram's size in its own language's unit (see ``nodes``).
    nodes : int
        SDD decision nodes, or BDD nodes including the terminal (shared between the class functions).
    edges : int
        SDD elements, or BDD edges.
    variables : int
        Boolean variables of the encoding.
    features : int
        Features of the model.
    encoding : str
        The ``encoding`` option.
    order : tuple of str
        The order of the feature blocks used.
    counting_nodes, counting_edges : int
        Size of the exported table the queries run on.
    build_seconds : float
        Seconds until the class functions were built (order probe and reordering included).
    compile_seconds : float
        Seconds of the whole compilation.
    memory_bytes : int
        The largest growth of the resident memory during the compilation seen by the memory
        polls (0 if ``max_memory`` is None).
    construction : str
        ``"builder"`` (the model's ``build`` through the backend) or ``"ensemble"`` (built feature by
        feature from a tree ensemble's leaf scores, :mod:`kcxai.compilers._ensemble`).
    """

    size: int
    nodes: int
    edges: int
    variables: int
    features: int
    encoding: str
    order: tuple[str, ...]
    counting_nodes: int
    counting_edges: int
    build_seconds: float
    compile_seconds: float
    memory_bytes: int
    construction: str

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict (in field order)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class SddStats(DiagramStats):
    """:class:`DiagramStats` of an SDD, plus its ``vtree`` shape and ``order_from_obdd`` (whether the
    block order came from sifting the model's OBDD)."""

    vtree: str
    order_from_obdd: bool


@dataclass(frozen=True)
class ObddStats(DiagramStats):
    """:class:`DiagramStats` of an OBDD, plus whether CUDD's group ``sifting`` ran, and whether
    ``sifting_while_building``."""

    sifting: bool
    sifting_while_building: bool
