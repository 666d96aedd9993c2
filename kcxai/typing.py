"""Named types of kcxai's public API: what the explainers take, what a point of feature space is.

For readers and type checkers (``from kcxai.typing import Explainable, InstanceLike``); nothing here
checks a value at run time (the explainers do, with errors that name the argument).

* :data:`Explainable`: what every explainer takes as ``obj``: a kcxai model (a
  :class:`~kcxai.Classifier` such as :class:`~kcxai.DecisionTree`), a
  :class:`~kcxai.CompiledModel` from :func:`kcxai.compile_model`, or an oracle
  (:class:`~kcxai.oracle.CountingOracle`, or a :class:`~kcxai.oracle.DecisionOracle` at delta = 0).
* :data:`InstanceLike`: an instance in the model's user values: a mapping of feature names to values
  (a dict, a pandas Series labelled by name) or a sequence in feature order (a list, a tuple, a numpy row).
* :data:`ProbabilityLike`: a probability bound (``delta``, ``precision``): an ``int``, a ``Fraction``
  or a ``float`` in [0, 1]; a float is read as the decimal it prints as.
* :data:`FeaturesLike`: a collection of features, by index or by name.
* :data:`Point`: a point of feature space, one value index per feature;
  :data:`Values`: the same instance in user values, one per feature in feature order.

Examples
--------
>>> import kcxai
>>> from kcxai.typing import Explainable, InstanceLike
>>> def explain_twice(model: Explainable, x: InstanceLike) -> bool:
...     return kcxai.min_idrs(model, x, 0).features == kcxai.min_idrs(model, x, 0).features
>>> explain_twice(kcxai.datasets.running_example_tree(), (1, 1, 1, 1, 0, 0, 0, 0, 1))
True
"""

from __future__ import annotations

from typing import Union

from kcxai._types import FeatureLike, FeaturesLike, InstanceLike, Point, ProbabilityLike, Values
from kcxai.compilers.compiled import CompiledModel
from kcxai.models.classifier import Classifier
from kcxai.oracle import CountingOracle, DecisionOracle

__all__ = ["Explainable", "InstanceLike", "ProbabilityLike", "FeatureLike", "FeaturesLike", "Point", "Values"]

#: What an explainer explains: a kcxai model, a compiled model, or an oracle.
Explainable = Union[Classifier, CompiledModel, CountingOracle, DecisionOracle]
