"""Classifier families kcxai explains."""

from kcxai.models.classifier import Classifier, load_model, model_from_dict
from kcxai.models.imports.pipeline import ImportedPipeline, from_pipeline
from kcxai.models.imports.sklearn import from_sklearn
from kcxai.models.bdd import BddClassifier
from kcxai.models.boosted import BoostedTrees
from kcxai.models.forest import RandomForest
from kcxai.models.linear import LinearClassifier, NaiveBayes
from kcxai.models.rules import DecisionList, Rule, RuleSet
from kcxai.models.tree import DecisionTree, Leaf, Split, TreePath

__all__ = ["Classifier", "DecisionTree", "Leaf", "Split", "TreePath", "load_model", "model_from_dict",
           "DecisionList", "RuleSet", "Rule", "BddClassifier", "NaiveBayes", "LinearClassifier", "RandomForest",
           "from_sklearn", "BoostedTrees", "from_pipeline", "ImportedPipeline"]
