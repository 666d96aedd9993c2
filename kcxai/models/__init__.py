"""Classifier families kcxai explains."""

from kcxai.models._base import Classifier, load_model, model_from_dict
from kcxai.models.tree import DecisionTree, Leaf, Split, TreePath

__all__ = ["Classifier", "DecisionTree", "Leaf", "Split", "TreePath", "load_model", "model_from_dict"]
