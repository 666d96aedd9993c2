"""Reproduce the paper's experiment and compare knowledge-compilation languages.

``kcxai experiment paper-table`` (:func:`run_paper_table`) runs the paper's
Table "tab:res": min-I-delta-relevant sets against Anchor on decision trees for
five PMLB datasets. ``kcxai experiment languages`` (:func:`run_languages`)
times the same explanations with every knowledge-compilation language.
``kcxai experiment side-by-side`` (:func:`run_side_by_side`) explains the same
trees under the uniform distribution and distributions fitted on the training
rows, with I-delta and C-delta sets, measured on held-out rows.
``kcxai experiment rules`` (:func:`run_rules`) sets kcxai's C-delta sets, the same sets inflated, and
Anchor (run in its own environment) side by side on the same held-out rows.
``kcxai experiment ensembles`` (:func:`run_ensembles`) compares the languages
(obdd, sdd, SAT at delta = 0, sampling) on random forests and boosted trees by size.
See ``docs/experiments.md``.
"""

from kcxai.experiments._data import PreparedData, discretise, explained_instances, prepare_data, subsample
from kcxai.experiments._metrics import sampled_precision
from kcxai.experiments._trees import TREE_SETTINGS, TrainedTree, train_tree
from kcxai.experiments.ensembles import EnsemblesConfig, run_ensembles
from kcxai.experiments.languages import LanguagesConfig, run_languages
from kcxai.experiments.paper_table import ExperimentCheckError, PaperTableConfig, run_paper_table
from kcxai.experiments.rules import RulesConfig, run_rules
from kcxai.experiments.side_by_side import SideBySideConfig, run_side_by_side

__all__ = [
    "PreparedData", "prepare_data", "discretise", "explained_instances", "subsample", "sampled_precision",
    "TREE_SETTINGS", "TrainedTree", "train_tree",
    "PaperTableConfig", "run_paper_table", "ExperimentCheckError",
    "LanguagesConfig", "run_languages",
    "SideBySideConfig", "run_side_by_side",
    "RulesConfig", "run_rules",
    "EnsemblesConfig", "run_ensembles",
]
