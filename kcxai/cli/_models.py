"""Reading the MODEL argument of the commands: a kcxai JSON model, a ``.dt`` tree and its ``.map`` file, or a
bundled model."""

from __future__ import annotations

from kcxai._errors import InvalidInputError
from kcxai.datasets import reference_tree, running_example_tree
from kcxai.models import Classifier, DecisionTree, load_model

__all__ = ["BUNDLED", "load_cli_model"]

#: Models shipped with kcxai that ``MODEL`` can name as ``bundled:<name>``.
BUNDLED = ("running_example", "SKL14", "IAI12", "IAI14")


def load_cli_model(model: str, map_file: str | None) -> Classifier:
    """A kcxai model from a JSON file, a ``.dt`` + ``.map`` pair or ``bundled:<name>``."""
    if model.startswith("bundled:"):
        name = model[len("bundled:"):]
        if map_file is not None:
            raise InvalidInputError(f"MODEL {model!r} is bundled: it takes no MAP file. Got {map_file!r}.")
        if name == "running_example":
            return running_example_tree()
        if name in BUNDLED:
            return reference_tree(name)
        raise InvalidInputError(
            f"Unknown bundled model {name!r}; the bundled models are {['bundled:' + b for b in BUNDLED]}.")
    if map_file is not None:
        return DecisionTree.from_dt(model, map_file)
    if model.lower().endswith(".dt"):
        raise InvalidInputError(
            f"MODEL {model!r} looks like a .dt tree: give its .map file as the second argument "
            f"(kcxai ... {model} {model[:-3]}.map).")
    return load_model(model)  # file and format errors are KcxaiErrors naming the path
