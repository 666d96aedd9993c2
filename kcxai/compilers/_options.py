"""The options of the diagram compilers, typed and checked: :class:`SddOptions`, :class:`ObddOptions`.

Each is a frozen dataclass holding every option with its default; ``from_kwargs(**options)``
checks the names and values given to ``compile(model, **options)`` and raises
:class:`~kcxai.InvalidInputError` (or :class:`~kcxai.InvalidTypeError`) naming the option, what is
accepted and what was given. The limits' defaults are documented in :mod:`kcxai.compilers._limits`.

Examples
--------
>>> from kcxai.compilers._options import SddOptions
>>> o = SddOptions.from_kwargs(vtree="right", max_seconds=60)
>>> o.vtree, o.max_seconds, o.order, o.construction
('right', 60, 'auto', 'auto')
>>> SddOptions.from_kwargs(vtre="right")
Traceback (most recent call last):
...
kcxai._errors.InvalidInputError: Unknown option(s) ['vtre'] for the 'sdd' language; its options are \
['construction', 'encoding', 'max_memory', 'max_nodes', 'max_seconds', 'order', 'vtree'].
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, Union

from kcxai._errors import InvalidInputError
from kcxai._params import NONE, POSITIVE_INT, Options, check
from kcxai.compilers._encoding import ENCODINGS
from kcxai.compilers._limits import DEFAULT_MAX_MEMORY, DEFAULT_MAX_NODES, DEFAULT_MAX_SECONDS
from kcxai.compilers._orders import OrderSpec, check_order

__all__ = ["DiagramOptions", "SddOptions", "ObddOptions", "VTREES", "BACKENDS", "REORDERS", "CONSTRUCTIONS"]

#: Accepted shapes of the SDD's vtree over the feature blocks (``"auto"``: see :class:`SddOptions`).
VTREES = ("auto", "balanced", "right", "left")
#: Accepted values of the OBDD's ``backend`` option.
BACKENDS = ("auto", "cudd", "autoref")
#: Accepted values of the OBDD's ``reorder`` option.
REORDERS = (None, True, False, "dynamic")
#: Accepted values of the ``construction`` option: how the diagram is built.
CONSTRUCTIONS = ("auto", "ensemble", "builder")

OptionsT = TypeVar("OptionsT", bound="DiagramOptions")


def _positive_int(name: str, value: Any) -> None:
    check(name, value, (POSITIVE_INT, NONE))


def _choice(name: str, value: Any, accepted: tuple[Any, ...]) -> None:
    check(name, value, Options(accepted))


@dataclass(frozen=True)
class DiagramOptions:
    """The options every diagram compiler takes.

    Attributes
    ----------
    order : "auto", "dfs", "index" or a sequence of features
        The order of the feature blocks (see :mod:`kcxai.compilers._orders`).
    encoding : "auto", "order", "onehot" or "log"
        The Boolean encoding of multi-valued features (see :mod:`kcxai.compilers._encoding`).
    max_nodes : int or None, default 2,000,000
        Live nodes while building, and nodes of the exported diagram.
    max_seconds : float or None, default 300
        Wall-clock seconds of the whole compilation.
    max_memory : int or None, default 4 GiB
        Growth of the process's resident memory during the compilation, in bytes.
    construction : "auto", "ensemble" or "builder"
        How the diagram is built. ``"ensemble"``: feature by feature from the leaf scores of a tree
        ensemble (a model with ``additive_trees()``: random forests, boosted trees; see
        :mod:`kcxai.compilers._ensemble`); ``"builder"``: from the model's ``build`` through the
        backend's apply operations. ``"auto"``: ``"ensemble"`` for tree ensembles (unless a
        builder-only option is set: the OBDD's ``reorder`` or ``backend``), else ``"builder"``.
    """

    language: ClassVar[str] = "diagram"

    order: OrderSpec = "auto"
    encoding: str = "auto"
    max_nodes: Union[int, None] = DEFAULT_MAX_NODES
    max_seconds: Union[float, None] = DEFAULT_MAX_SECONDS
    max_memory: Union[int, None] = DEFAULT_MAX_MEMORY
    construction: str = "auto"

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", check_order(self.order))
        _choice("encoding", self.encoding, ENCODINGS)
        _choice("construction", self.construction, CONSTRUCTIONS)
        _positive_int("max_nodes", self.max_nodes)
        _positive_int("max_memory", self.max_memory)
        ms = self.max_seconds
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms > 0
                               or math.isnan(ms)):
            raise InvalidInputError(f"'max_seconds' must be a positive number or None. Got {ms!r} instead.")

    @classmethod
    def from_kwargs(cls: type[OptionsT], **options: Any) -> OptionsT:
        """The options from keyword arguments; unknown names and bad values raise :class:`~kcxai.InvalidInputError`."""
        names = cls.names()
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise InvalidInputError(
                f"Unknown option(s) {unknown} for the {cls.language!r} language; its options are {sorted(names)}.")
        return cls(**options)

    def builder_only(self) -> bool:
        """Whether an option only the ``"builder"`` construction uses is set (none here)."""
        return False

    def uses_ensemble(self, model: Any) -> bool:
        """Whether ``model`` is built by the ``"ensemble"`` construction under these options; raises
        :class:`~kcxai.InvalidInputError` for ``construction="ensemble"`` on a model that is no tree ensemble."""
        from kcxai.compilers._ensemble import is_additive  # the construction (800 lines) loads when checked

        if self.construction == "builder":
            return False
        if self.construction == "ensemble":
            if not is_additive(model):
                raise InvalidInputError(
                    "construction='ensemble' compiles tree ensembles whose class scores are sums of leaf scores "
                    f"(RandomForest, BoostedTrees). Got {type(model).__name__}; use construction='builder'.")
            return True
        return is_additive(model) and not self.builder_only()

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names."""
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """Every option's default."""
        return cls().to_dict()

    def to_dict(self) -> dict[str, Any]:
        """Every option's value."""
        return {name: getattr(self, name) for name in self.names()}


@dataclass(frozen=True)
class SddOptions(DiagramOptions):
    """The options of the ``"sdd"`` language (see :mod:`kcxai.compilers.sdd`): those of
    :class:`DiagramOptions` (order, encoding and the limits), and:

    Attributes
    ----------
    vtree : "auto", "balanced", "right" or "left"
        The shape of the vtree over the feature blocks. ``"auto"``: right-linear (the diagram's own
        order) for the ``"ensemble"`` construction, whose diagram is converted node by node (a balanced
        vtree took 21 times as long on an 80-feature boosted model, for an SDD half the size), else
        balanced.
    """

    language: ClassVar[str] = "sdd"

    vtree: str = "auto"

    def shape(self, ensemble: bool) -> str:
        """The vtree shape used: ``vtree``, with ``"auto"`` resolved for the construction."""
        if self.vtree != "auto":
            return self.vtree
        return "right" if ensemble else "balanced"

    def __post_init__(self) -> None:
        super().__post_init__()
        _choice("vtree", self.vtree, VTREES)


@dataclass(frozen=True)
class ObddOptions(DiagramOptions):
    """The options of the ``"obdd"`` language (see :mod:`kcxai.compilers.obdd`): those of
    :class:`DiagramOptions` (order, encoding and the limits), and:

    Attributes
    ----------
    reorder : None, bool or "dynamic"
        CUDD's group sifting: ``"dynamic"`` while building and at the end, ``True`` at the end,
        ``False`` never; ``None`` is ``"dynamic"`` with CUDD and ``False`` with autoref.
    backend : "auto", "cudd" or "autoref"
        dd's CUDD bindings or its pure-Python BDD; ``"auto"`` takes CUDD when it imports.
    max_work : int or None, default None
        Units of work the ``"ensemble"`` construction may count (:mod:`kcxai.compilers._ensemble.threshold`,
        "Work"; :data:`kcxai.compilers.bounded.WORK_PER_SECOND` of them take about a second), ``None``: no
        limit. Unlike ``max_seconds`` it stops the construction at the same point on every machine, under any
        load (the exact probe's budget, :class:`kcxai.engines.choose.ProbeBudget`). The ``"builder"``
        construction counts no work: it needs ``None``.
    """

    language: ClassVar[str] = "obdd"

    reorder: Union[bool, str, None] = None
    backend: str = "auto"
    max_work: Union[int, None] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive_int("max_work", self.max_work)
        if self.max_work is not None and (self.construction == "builder" or self.builder_only()):
            raise InvalidInputError(
                f"'max_work'={self.max_work!r} applies to construction='ensemble' (a tree ensemble's diagram built "
                "feature by feature, which counts its work); the 'builder' construction counts none. Leave it unset.")
        if not (self.reorder is None or isinstance(self.reorder, bool) or self.reorder == "dynamic"):
            raise InvalidInputError(f"'reorder' must be None, True, False or 'dynamic'. Got {self.reorder!r} instead.")
        if not isinstance(self.backend, str) or self.backend not in BACKENDS:
            raise InvalidInputError(f"'backend' must be 'auto', 'cudd' or 'autoref'. Got {self.backend!r} instead.")
        if self.construction == "ensemble" and self.builder_only():
            raise InvalidInputError(
                f"'reorder'={self.reorder!r} and 'backend'={self.backend!r} apply to construction='builder' "
                "(dd's apply operations); construction='ensemble' builds the diagram itself. Leave them unset.")

    def builder_only(self) -> bool:
        """Whether ``reorder`` or ``backend`` is set: only the ``"builder"`` construction uses them."""
        return self.reorder is not None or self.backend != "auto"
