"""The registry of languages: one :class:`~kcxai.compilers.Language` entry per language.

Adding a language is one module (with ``compile(model, **options)``) and one
entry here; the CLI, the experiments, ``docs/languages.md`` and the
conformance suite (``tests/test_conformance.py``) pick it up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kcxai._params import POSITIVE_INT, check
from kcxai.engines._decision import EngineOptions, SatOptions, is_ensemble
from kcxai.engines._ensemble_box import MASK_BITS
from kcxai.models.boosted import BoostedTrees
from kcxai.models.forest import RandomForest
from kcxai.compilers.language import Language, LanguageOptions, NoOptions
from kcxai.compilers._options import ObddOptions, SddOptions
from kcxai.compilers._ensemble import is_additive
from kcxai.compilers.bounded import BoundedOptions
from kcxai.compilers._ddnnf_options import DdnnfOptions
from kcxai.engines.sampling import SamplingOptions
from kcxai.oracle import has_paths

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.models.classifier import Classifier

__all__ = ["LANGUAGES", "NATIVE_PREFERENCE", "BruteOptions", "is_tree", "languages_markdown", "decision_engine",
           "ANSWERED_BY", "SAT_LEAVES"]


def is_tree(model: "Classifier") -> bool:
    """Whether a model exposes a decision tree's node arrays and paths (the ``dt`` language's input), found
    without reading ``paths`` (a tree builds them when they are read)."""
    return hasattr(model, "arrays") and has_paths(model)


@dataclass(frozen=True)
class BruteOptions(LanguageOptions):
    """Options of the ``brute`` language.

    Attributes
    ----------
    max_points : int
        Largest feature space it enumerates (default ``2**18``).
    """

    language = "brute"
    max_points: int = 1 << 18

    def validate(self) -> None:
        check("max_points", self.max_points, POSITIVE_INT)


_DECLARED = (
    Language("dt", "kcxai.engines.dt",
             "a decision tree's own paths: exact pruned traversal, nothing to compile",
             options=NoOptions, accepts=is_tree),
    Language("sdd", "kcxai.compilers.sdd", "sentential decision diagram compiled with PySDD",
             options=SddOptions, package="pysdd", install="pip install pysdd"),
    Language("obdd", "kcxai.compilers.obdd",
             "ordered binary decision diagram compiled with dd (CUDD when its wheel exists)",
             options=ObddOptions, package="dd", install="pip install dd"),
    Language("ddnnf", "kcxai.compilers.ddnnf",
             "decision-DNNF compiled by d4 from the model's functions as a circuit of gates; counted by kcxai",
             options=DdnnfOptions, package="py_d4", install='pip install "kcxai[d4]"'),
    Language("brute", "kcxai.engines.brute",
             "enumeration of feature space (small models; the test reference)", options=BruteOptions),
    Language("bounded", "kcxai.compilers.bounded",
             "a tree ensemble's diagram within a time budget: exact where it fits, else the least probable states "
             "left undecided; exact lower and upper bounds on every count",
             options=BoundedOptions, accepts=is_additive, answers="bounds", conformance=False),
    Language("sampling", "kcxai.engines.sampling",
             "no compilation: counts estimated by sampling the distribution, each deletion-loop decision "
             "certified by a Clopper-Pearson interval (min_idrs, local_cdrs)",
             options=SamplingOptions, answers="estimates", conformance=False),
    Language("sat", "kcxai.engines.sat",
             "a tree ensemble's CNF in an incremental SAT solver: sufficiency decisions (delta = 0), no counts",
             options=SatOptions, package="pysat", install="pip install python-sat", accepts=is_ensemble,
             answers="decisions", conformance=False),
    Language("search", "kcxai.engines.search",
             "branch and bound over boxes of a tree ensemble's leaf values: sufficiency decisions (delta = 0), "
             "no counts", options=EngineOptions, accepts=is_ensemble, answers="decisions", conformance=False),
)

#: name -> declared language, in the order they are documented.
LANGUAGES: dict[str, Language] = {lang.name: lang for lang in _DECLARED}

#: The exact counting languages tried, in order, for a model passed to an explainer directly: the first that
#: takes it (a tree answers from its paths; anything else is compiled to an OBDD within the probe budget,
#: :mod:`kcxai.engines.choose`).
NATIVE_PREFERENCE: tuple[str, ...] = ("dt", "obdd")

#: For each kind of answer a method can use when no exact counting language fits: the language giving it.
ANSWERED_BY = {"estimates": "sampling"}


#: Hard-voting forests with at most this many leaves get the SAT engine from :func:`decision_engine`.
SAT_LEAVES = 10_000


def decision_engine(model: "Classifier") -> str | None:
    """The engine deciding delta = 0 queries for ``model`` (``None`` if no engine takes it), by measured rules.

    SAT under hard voting while the forest is small (:data:`SAT_LEAVES`); the exact branch and bound
    otherwise, except for a small soft-voting forest with a feature of more than 64 values that some path
    restricts to a set of values that is not a range (the branch and bound keeps such sets by their hulls
    only, and then searches point by point): SAT there. The sums of soft voting and boosting (30-60-bit
    integers) leave CDCL solvers at the time limit on larger models.

    The figures behind the rule are in ``docs/results.md`` ("Tree ensembles against PyXAI": engine
    choice; "Measurements moved from docstrings": soft voting and boosted trees).

    >>> import kcxai
    >>> decision_engine(kcxai.datasets.running_example_tree()) is None
    True
    """
    if not isinstance(model, (RandomForest, BoostedTrees)):
        return None
    if not isinstance(model, RandomForest) or sum(len(t.leaves) for t in model.trees) > SAT_LEAVES:
        return "search"  # boosted trees do not vote
    if model.voting == "hard" or _sets_beyond_masks(model):
        return "sat"
    return "search"


def _sets_beyond_masks(model: RandomForest) -> bool:
    """Whether some path of some tree restricts a feature of more than ``MASK_BITS`` values to a set of
    values that is not a range (the branch and bound relaxes such sets to their hulls)."""
    sizes = model.space.domain_sizes
    for tree in model.trees:
        for path in tree.paths:
            for f, mask in path.masks:
                if sizes[f] > MASK_BITS and (mask + (mask & -mask)) & mask:
                    return True
    return False


def languages_markdown() -> str:
    """The language table of ``docs/languages.md``, generated from :data:`LANGUAGES` (a test checks the
    document holds exactly this table)."""
    rows = ["| language | what answers the queries | answers | backend | options |",
            "|---|---|---|---|---|"]
    shown = {"counts": "exact counts", "bounds": "exact lower and upper bounds",
             "estimates": "estimates (certified decisions)", "decisions": "delta = 0 decisions"}
    for lang in LANGUAGES.values():
        backend = "none (part of kcxai)" if lang.package is None else f"`{lang.package}` (`{lang.install}`)"
        opts = ", ".join(f"`{o}`" for o in lang.option_names()) or "none"
        rows.append(f"| `{lang.name}` | {lang.summary} | {shown[lang.answers]} | {backend} | {opts} |")
    return "\n".join(rows) + "\n"
