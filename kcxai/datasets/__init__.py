"""Data and models that ship with kcxai (offline)."""

from kcxai.datasets._examples import running_example_tree
from kcxai.datasets._pmlb import (
    DATASETS,
    REFERENCE_TREES,
    Dataset,
    load_dataset,
    reference_instances,
    reference_tree,
)

__all__ = ["running_example_tree", "load_dataset", "Dataset", "DATASETS", "reference_tree",
           "reference_instances", "REFERENCE_TREES"]
