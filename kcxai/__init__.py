"""kcxai: provably precise, succinct explanations of classifiers through knowledge compilation.

Compile a classifier to a language that supports conditioning and model
counting (a decision tree's paths, SDD, OBDD), then ask for explanations
whose probabilities are exact ratios of model counts.

>>> import kcxai
>>> tree = kcxai.datasets.running_example_tree()
>>> print(kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), 0).rule())
IF x1 = 1 AND x2 = 1 AND x3 = 1 AND x8 = 0 AND x9 = 1 THEN class = 1
"""

from kcxai import datasets
from kcxai._errors import (
    BackendError,
    CompilationLimitError,
    FileAccessError,
    InvalidInputError,
    InvalidTypeError,
    KcxaiError,
    MissingDependencyError,
    ModelFormatError,
    NotProvenError,
    NotRelevantError,
    ProblemTooLargeError,
    SearchLimitError,
    UnknownLanguageError,
    WorkerError,
)
from kcxai.compilers import CompiledModel
from kcxai.engines import available_languages, compile_model
from kcxai.explainer import Explainer
from kcxai.explanation_set import ExplanationSet, RowFailure
from kcxai.explain import (
    Explanation,
    ensemble_axp,
    ensemble_cxp,
    enumerate_idrs,
    idrs_error,
    is_cdrs,
    is_dual_idrs,
    is_ensemble_axp,
    is_ensemble_cxp,
    is_idrs,
    is_min_cdrs,
    is_min_dual_idrs,
    is_min_idrs,
    is_smallest_drs,
    is_smallest_idrs,
    local_cdrs,
    min_cdrs,
    min_dual_idrs,
    min_idrs,
    precision,
    smallest_drs,
    smallest_dual_idrs,
    smallest_ensemble_axp,
    smallest_ensemble_cxp,
    smallest_idrs,
)
from kcxai.models import (
    BddClassifier,
    BoostedTrees,
    Classifier,
    DecisionList,
    DecisionTree,
    Leaf,
    LinearClassifier,
    NaiveBayes,
    RandomForest,
    Rule,
    RuleSet,
    Split,
    from_pipeline,
    from_sklearn,
    load_model,
)
from kcxai.distribution import Distribution, Mixture, Product, Uniform
from kcxai.evaluation import DataMetrics, evaluate_on_data
from kcxai.explain.explanation import Condition
from kcxai.explain.inflate import inflate, is_inflated
from kcxai.scoring import RuleScore, score_rule
from kcxai.fit import fit_distribution
from kcxai.oracle import CountingOracle, OracleSession
from kcxai.space import MISSING, Feature, FeatureSpace, Interval

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # feature space and models
    "Feature", "FeatureSpace", "Interval", "MISSING", "Classifier", "DecisionTree", "Leaf", "Split", "load_model",
    "DecisionList", "RuleSet", "Rule", "BddClassifier", "NaiveBayes", "LinearClassifier", "RandomForest",
    "from_sklearn", "from_pipeline",
    # distributions
    "Distribution", "Uniform", "Product", "Mixture", "fit_distribution", "evaluate_on_data", "DataMetrics",
    # compilation
    "compile_model", "available_languages", "CompiledModel", "CountingOracle", "OracleSession",
    # explanations
    "Explanation", "min_idrs", "idrs_error", "is_idrs", "is_min_idrs", "precision",
    "local_cdrs", "min_cdrs", "is_cdrs", "is_min_cdrs", "smallest_drs", "is_smallest_drs",
    "smallest_idrs", "is_smallest_idrs", "min_dual_idrs", "is_dual_idrs", "is_min_dual_idrs", "smallest_dual_idrs",
    "enumerate_idrs",
    "ensemble_axp", "ensemble_cxp", "smallest_ensemble_axp", "smallest_ensemble_cxp", "is_ensemble_axp",
    "is_ensemble_cxp", "BoostedTrees",
    # rules: widened conditions, any rule scored
    "inflate", "is_inflated", "Condition", "score_rule", "RuleScore",
    # explainer objects
    "Explainer", "ExplanationSet", "RowFailure",
    # errors
    "KcxaiError", "InvalidInputError", "InvalidTypeError", "ModelFormatError", "NotRelevantError", "NotProvenError",
    "FileAccessError", "MissingDependencyError", "UnknownLanguageError", "CompilationLimitError",
    "BackendError", "ProblemTooLargeError", "SearchLimitError", "WorkerError",
    "datasets",
]
