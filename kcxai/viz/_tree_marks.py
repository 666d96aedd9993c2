"""What both tree drawings (DOT and matplotlib) mark: edge labels, the instance's path, the explanation's features."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kcxai._errors import InvalidInputError, InvalidTypeError
from kcxai._params import NON_NEGATIVE_INT, NONE, check
from kcxai.explain.explanation import Explanation
from kcxai.models.classifier import Classifier
from kcxai.models.tree import DecisionTree
from kcxai.space import Feature

if TYPE_CHECKING:  # pragma: no cover
    from kcxai._types import InstanceLike

__all__ = ["highlight", "check_tree"]


def _edge_label(feature: Feature, mask: int) -> str:
    """The values of one branch, without the feature name (``<= 30``, ``= 1``, ``in {a, b}``); a categorical
    branch holding more values than it leaves out names those it leaves out (``!= a``, ``not in {a, b}``)."""
    ks = [k for k in range(feature.size) if mask >> k & 1]
    out = [k for k in range(feature.size) if not mask >> k & 1]
    if not feature.is_numeric and len(ks) > 1 and 0 < len(out) < len(ks):
        if len(out) == 1:
            return f"!= {feature.label(out[0])}"
        return f"not in {{{', '.join(feature.label(k) for k in out)}}}"
    lit = feature.set_literal(ks)
    prefix = feature.name + " "
    return lit[len(prefix):] if lit.startswith(prefix) else lit


def _check_max_depth(max_depth: object) -> None:
    check("max_depth", max_depth, (NON_NEGATIVE_INT, NONE))


#: What to do instead, by the ``model_type`` of a model the drawings do not draw.
_INSTEAD = {
    "random_forest": "draw one of its trees, plot_tree(model.trees[i], explanation): its splits and the "
                     "instance's path, its leaves that tree's vote (not the forest's class)",
    "boosted_trees": "its trees' leaves hold scores that add up across trees, not classes, so no single tree "
                     "shows a prediction; plot an ExplanationSet instead (plot_feature_frequency)",
    "decision_list": "print its rules instead: print(model.to_text())",
    "rule_set": "print its rules instead: print(model.to_text())",
}


def check_tree(tree: object, what: str = "the drawing") -> DecisionTree:
    """``tree``, a :class:`~kcxai.DecisionTree`; anything else refused, naming what was given and what to draw
    instead."""
    if isinstance(tree, DecisionTree):
        return tree
    kind = type(tree).__name__
    if isinstance(tree, Classifier):
        hint = _INSTEAD.get(type(tree).model_type, "explain it and plot the ExplanationSet instead "
                                                   "(plot_feature_frequency, plot_size_and_bound)")
        got = f"a {kind} ({type(tree).model_type})"
    elif hasattr(tree, "tree_") and hasattr(tree, "predict"):
        hint, got = "import it first: kcxai.DecisionTree.from_sklearn(clf)", f"a scikit-learn {kind}"
    elif hasattr(tree, "model_") and hasattr(tree, "explain"):
        hint, got = "pass its model: explainer.model_ (when it is a tree)", f"an {kind}"
    else:
        hint, got = "pass a kcxai.DecisionTree", f"{kind}"
    raise InvalidTypeError(f"'tree' must be a DecisionTree: {what} draws one decision tree. Got {got}, "
                           f"which it does not draw; {hint}.")


def highlight(tree: object, explanation: object = None, instance: InstanceLike | None = None
              ) -> tuple[frozenset[int], set[int], set[tuple[int, int]]]:
    """What a drawing highlights: the explanation's features, and the nodes and edges of the instance's
    path (the explanation's instance unless ``instance`` is given). Checks the arguments."""
    tree = check_tree(tree)
    if explanation is not None and not isinstance(explanation, Explanation):
        raise InvalidTypeError(f"'explanation' must be an Explanation. Got {type(explanation).__name__} instead.")
    space = tree.space
    expl_features: frozenset[int] = frozenset()
    if explanation is not None:
        names = space.names
        if any(not 0 <= i < len(names) or names[i] != n for i, n in zip(explanation.features, explanation.names)):
            raise InvalidInputError(
                f"'explanation' is over features {list(explanation.names)}, which are not features of "
                f"this tree (its features are {list(names)}).")
        expl_features = frozenset(explanation.features)
        if instance is None and explanation.instance:
            instance = explanation.instance
    point = None if instance is None else space.encode(instance)
    arrays = tree.arrays
    feat, branches = arrays.feature, arrays.branches
    on_path: set[int] = set()
    path_edges: set[tuple[int, int]] = set()
    if point is not None:
        nid = arrays.root
        on_path.add(nid)
        while feat[nid] >= 0:
            bit = 1 << point[feat[nid]]
            child = next(c for m, c in branches[nid] if m & bit)
            path_edges.add((nid, child))
            nid = child
            on_path.add(nid)
    return expl_features, on_path, path_edges
