"""Decision trees with multi-valued features (the paper's "Decision trees" paragraph).

Every internal node tests one feature; each outgoing edge carries a set of
values of that feature (the literal ``x_i in E_i``); leaves carry a class.
A path means the intersection of the value sets along it, so a tree may test a
feature again. Construction checks that every point of feature space reaches
exactly one leaf, in memory linear in the tree's size; the root-to-leaf paths,
whose total size can be quadratic in it (a deep chain), are built only when
:attr:`DecisionTree.paths` is first read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from kcxai._errors import ModelFormatError
from kcxai._params import check
from kcxai._types import Label
from kcxai.models.imports import _sklearn, dtfile as _dtfile
from kcxai.models._predict_batch import TreeRouter
from kcxai.models.classifier import Classifier
from kcxai.models._tree_data import (
    Leaf,
    Node,
    Split,
    TreeArrays,
    TreeParts,
    TreePath,
    _bits,
    _full,
    _mask_from_json,
    _mask_to_json,
    leaf_reached,
    preorder,
)
from kcxai.models._tree_nodes import arrays_from_nodes
from kcxai.space import SPACE, FeatureSpace

if TYPE_CHECKING:  # pragma: no cover
    from kcxai.functions import FunctionBuilder
    from kcxai.distribution import DistributionLike
    from kcxai._types import InstanceLike

__all__ = ["DecisionTree", "Leaf", "Split", "TreePath", "TreeArrays"]

#: A function handle of the builder a model describes itself with.
F = TypeVar("F")


class DecisionTree(Classifier):
    """A decision tree over a finite feature space.

    Parameters
    ----------
    space : FeatureSpace
        The features and distribution.
    classes : sequence
        The class labels.
    root : Leaf or Split
        The tree, built from :class:`Leaf` and :class:`Split` nodes.

    Examples
    --------
    >>> from kcxai import Feature, FeatureSpace, DecisionTree, Leaf, Split
    >>> space = FeatureSpace([Feature.categorical("x1", [0, 1]), Feature.categorical("x2", [0, 1])])
    >>> tree = DecisionTree(space, [0, 1], Split("x1", {0: Leaf(0), 1: Split("x2", {0: Leaf(0), 1: Leaf(1)})}))
    >>> tree.predict([1, 1])
    1
    >>> tree.n_nodes
    5
    """

    model_type = "decision_tree"

    def __init__(self, space: FeatureSpace, classes: Sequence[object], root: Node) -> None:
        check("space", space, SPACE)
        self.space = space
        self._init_classes(classes)
        feat, label, branches, names = arrays_from_nodes(space, root, self.class_index)
        self._set_arrays(feat, label, branches, names=names)

    @classmethod
    def _from_arrays(cls, space: FeatureSpace, classes: Sequence[object], feat: Sequence[int], label: Sequence[int],
                     branches: Sequence[tuple[tuple[int, int], ...]], *, names: Any = None, root: int = 0,
                     validate: bool = True, leaves: Sequence[int] | None = None) -> "DecisionTree":
        """Build from flat arrays (node ``k`` tests ``feat[k]``, or is a leaf of class index ``label[k]``,
        with ``branches[k]`` = ((value mask, child index), ...)), checked like any tree.

        ``validate=False`` is for importers whose trees are valid by construction (every node reached
        once, the branches of a node a partition of the values that reach it): the check is skipped.
        ``leaves``, if given with it, are the reachable leaves in the order of :attr:`paths`.
        """
        tree = object.__new__(cls)
        tree.space = space
        tree._init_classes(classes)
        tree._set_arrays(feat, label, branches, names=names, root=root, validate=validate,
                         leaves=None if leaves is None else tuple(leaves))
        return tree

    @classmethod
    def _from_parts(cls, parts: TreeParts) -> "DecisionTree":
        """Build from what an importer returns (checked like any tree, unless the importer gave its leaves:
        see :class:`~kcxai.models._tree_data.TreeParts`)."""
        a = parts.arrays
        return cls._from_arrays(parts.space, parts.classes, a.feature, a.label, a.branches,
                                names=None if parts.names is None else list(parts.names), root=a.root,
                                validate=parts.leaves is None, leaves=parts.leaves)

    def _set_arrays(self, feat: Sequence[int], label: Sequence[int], branches: Sequence[tuple[tuple[int, int], ...]],
                    names: Any, root: int = 0, *, validate: bool = True,
                    leaves: tuple[int, ...] | None = None) -> None:
        """Store the flat arrays and check the tree (in memory linear in its size: no paths are built)."""
        self._feat = tuple(feat)
        self._label = tuple(label)
        self._branches = tuple(branches)
        self._root = root
        self._node_names = names
        self._paths: tuple[TreePath, ...] | None = None
        self._leaves = self._walk(validate) if validate else leaves

    def _node_name(self, nid: int) -> str:
        if self._node_names is None:
            return f"node #{nid}"
        name = self._node_names[nid]
        return f"the node at {name}" if isinstance(name, str) else f"node {name}"

    def _walk(self, validate: bool) -> tuple[int, ...]:
        """The reachable leaves in path order (depth first, last branch first); with ``validate``, also check
        that every point reaches exactly one leaf and every node is reached once.

        One array of allowed masks per feature is updated on the way down and restored on the way back
        (undo entries, node -1), so memory stays linear in the tree's size whatever its depth: per-leaf
        copies made loading a 3,000-deep chain take 800 MB.
        """
        space = self.space
        feat_a, label_a, branches_a = self._feat, self._label, self._branches
        allowed = [_full(f.size) for f in space.features]
        leaves: list[int] = []
        n = len(feat_a)
        n_classes = len(self.classes)
        seen = bytearray(n) if validate else None
        stack: list[tuple[int, int, int]] = [(self._root, -1, 0)]  # (node, feature set on entry, its mask)
        push, pop = stack.append, stack.pop
        while stack:
            nid, g, mg = pop()
            if g >= 0:
                if nid < 0:  # undo
                    allowed[g] = mg
                    continue
                push((-1, g, allowed[g]))
                allowed[g] = mg
            if seen is not None:
                if not 0 <= nid < n:
                    raise ModelFormatError(f"Tree refers to a missing node (index {nid}).")
                if seen[nid]:
                    raise ModelFormatError(f"{self._node_name(nid)} is reached twice: a tree must not share nodes.")
                seen[nid] = 1
            f = feat_a[nid]
            if f < 0:
                if seen is not None and not 0 <= label_a[nid] < n_classes:
                    raise ModelFormatError(f"Leaf {self._node_name(nid)} has no valid class.")
                leaves.append(nid)
                continue
            here = allowed[f]
            if seen is None:
                for mask, child in branches_a[nid]:
                    m = mask & here
                    if m:
                        push((child, f, m))
                continue
            covered = 0
            if not branches_a[nid]:
                raise ModelFormatError(f"Internal {self._node_name(nid)} has no branches.")
            for mask, child in branches_a[nid]:
                m = mask & here
                if m & covered:
                    vals = self._labels_of(f, m & covered)
                    raise ModelFormatError(
                        f"{self._node_name(nid)} (feature {space.features[f].name!r}) sends the values {vals} "
                        f"down more than one branch: a point must reach exactly one leaf.")
                covered |= m
                if m:
                    if not 0 <= child < n:
                        raise ModelFormatError(f"Tree refers to a missing node (index {child}).")
                    push((child, f, m))
                else:
                    self._mark_unreachable(child, seen)
            if covered != here:
                vals = self._labels_of(f, here & ~covered)
                raise ModelFormatError(
                    f"{self._node_name(nid)} (feature {space.features[f].name!r}) has no branch for the values "
                    f"{vals}: every point must reach a leaf.")
        if seen is not None and not all(seen):
            nid = seen.index(0)
            raise ModelFormatError(f"{self._node_name(nid)} is not reachable from the root.")
        return tuple(leaves)

    def _labels_of(self, f: int, mask: int) -> str:
        feat = self.space.features[f]
        return "[" + ", ".join(feat.label(k) for k in range(feat.size) if mask >> k & 1) + "]"

    def _mark_unreachable(self, nid: int, seen: bytearray) -> None:
        stack = [nid]
        while stack:
            k = stack.pop()
            if not 0 <= k < len(seen) or seen[k]:
                raise ModelFormatError(f"Tree refers to a missing or shared node (index {k}).")
            seen[k] = 1
            stack.extend(child for _, child in self._branches[k])

    # -- basic facts -----------------------------------------------------

    @property
    def arrays(self) -> TreeArrays:
        """The read-only node arrays (see :class:`TreeArrays`)."""
        return TreeArrays(self._feat, self._label, self._branches, self._root)

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self._feat)

    @property
    def n_leaves(self) -> int:
        """Number of leaves."""
        return sum(1 for f in self._feat if f < 0)

    @property
    def depth(self) -> int:
        """Length of the longest root-to-leaf path (in edges)."""
        best = 0
        stack = [(self._root, 0)]
        while stack:
            nid, d = stack.pop()
            best = max(best, d)
            stack.extend((c, d + 1) for _, c in self._branches[nid])
        return best

    @property
    def leaves(self) -> tuple[int, ...]:
        """The node ids of the reachable leaves, in the order of :attr:`paths` (``tree.paths[k].leaf``).

        Cheap (no path is built): ensembles index their leaf scores by it.

        Examples
        --------
        >>> import kcxai
        >>> tree = kcxai.datasets.running_example_tree()
        >>> tree.leaves == tuple(p.leaf for p in tree.paths)
        True
        """
        if self._leaves is None:
            self._leaves = self._walk(False)
        return self._leaves

    @property
    def paths(self) -> tuple[TreePath, ...]:
        """The reachable root-to-leaf paths (built on first use, then kept).

        Their total size is the sum of the leaves' depths, which can be quadratic in the tree's
        size (a chain); construction, prediction, JSON and compilation do not need them.
        """
        if self._paths is None:
            self._paths = self._build_paths()
        return self._paths

    def _build_paths(self) -> tuple[TreePath, ...]:
        """The paths of :attr:`leaves`, in that order: the same depth-first walk, with the restricted features."""
        feat_a, label_a, branches_a = self._feat, self._label, self._branches
        full = [_full(f.size) for f in self.space.features]
        allowed = list(full)
        restricted: dict[int, int] = {}  # the features whose allowed mask is not full
        paths: list[TreePath] = []
        stack: list[tuple[int, int, int]] = [(self._root, -1, 0)]
        while stack:
            nid, g, mg = stack.pop()
            if g >= 0:
                if nid >= 0:
                    stack.append((-1, g, allowed[g]))
                allowed[g] = mg
                if mg == full[g]:
                    restricted.pop(g, None)
                else:
                    restricted[g] = mg
                if nid < 0:
                    continue
            f = feat_a[nid]
            if f < 0:
                paths.append(TreePath(label_a[nid], tuple(sorted(restricted.items())), nid))
                continue
            here = allowed[f]
            for mask, child in branches_a[nid]:
                m = mask & here
                if m:
                    stack.append((child, f, m))
        return tuple(paths)

    def predict_point(self, point: Sequence[int]) -> int:
        return self._label[self._leaf_of(point)]

    def predict_points(self, points: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.int64]]":
        """The class indices of many encoded points, walked down the tree together (see
        :meth:`Classifier.predict_points <kcxai.models.Classifier.predict_points>`)."""
        labels = np.asarray(self._label, dtype=np.int64)
        predicted: np.ndarray[Any, np.dtype[np.int64]] = labels[self.router.leaves(np.asarray(points))]
        return predicted

    @property
    def router(self) -> TreeRouter:
        """This tree's batched walk (:class:`~kcxai.models._predict_batch.TreeRouter`; node lookups built lazily)."""
        r = self.__dict__.get("_router")
        if r is None:
            r = self._router = TreeRouter(self._feat, self._branches, self._root, self.space.domain_sizes)
        return r

    def _leaf_of(self, point: Sequence[int]) -> int:
        return leaf_reached(self._feat, self._branches, self._root, point)

    def path_of(self, point: Sequence[int]) -> TreePath:
        """The path a point follows (a walk down the tree: time linear in its depth, not in its size)."""
        feat_a, branches_a = self._feat, self._branches
        features = self.space.features
        allowed: dict[int, int] = {}  # the masks of the features tested so far
        nid = self._root
        while feat_a[nid] >= 0:
            f = feat_a[nid]
            bit = 1 << point[f]
            for mask, child in branches_a[nid]:
                if mask & bit:
                    allowed[f] = mask & allowed.get(f, -1)
                    nid = child
                    break
        masks = tuple(sorted((f, m) for f, m in allowed.items() if m != _full(features[f].size)))
        return TreePath(self._label[nid], masks, nid)

    def path_features(self, instance: InstanceLike) -> tuple[int, ...]:
        """The features restricted on the path followed by an instance (user values).

        Examples
        --------
        >>> import kcxai
        >>> kcxai.datasets.running_example_tree().path_features((1, 1, 1, 1, 0, 0, 0, 0, 1))
        (0, 1, 2, 3, 8)
        """
        return self.path_of(self.space.encode(instance)).features()

    def build(self, builder: "FunctionBuilder[F]") -> list[F]:
        """One function per class: the disjunction of the class's paths, built bottom-up."""
        n_cls = len(self.classes)
        memo: dict[int, list[F]] = {}
        for nid in reversed(preorder(self._root, self._branches)):  # children first, without recursion
            f = self._feat[nid]
            if f < 0:
                memo[nid] = [builder.true() if c == self._label[nid] else builder.false() for c in range(n_cls)]
                continue
            out = [builder.false()] * n_cls
            for mask, child in self._branches[nid]:
                lit = builder.value_in(f, mask)
                sub = memo.pop(child)
                for c in range(n_cls):
                    out[c] = builder.disj(out[c], builder.conj(lit, sub[c]))
            memo[nid] = out
        return memo[self._root]

    def with_distribution(self, distribution: DistributionLike) -> "DecisionTree":
        return DecisionTree._from_arrays(self.space.with_distribution(distribution), self.classes,
                                         list(self._feat), list(self._label), list(self._branches),
                                         names=self._node_names, root=self._root, validate=False,
                                         leaves=self._leaves)

    def to_root(self) -> Node:
        """The tree as nested :class:`Leaf` / :class:`Split` nodes (value sets as domain values).

        Built bottom-up without recursion, so chains thousands of nodes deep convert too.
        """
        built: dict[int, Node] = {}
        for nid in reversed(preorder(self._root, self._branches)):  # children before their parent
            f = self._feat[nid]
            if f < 0:
                built[nid] = Leaf(self.classes[self._label[nid]])
                continue
            feature = self.space.features[f]
            built[nid] = Split(feature.name, tuple(
                (tuple(feature.values[k] for k in _bits(mask)), built.pop(child))
                for mask, child in self._branches[nid]))
        return built[self._root]

    # -- JSON --------------------------------------------------------------

    def _body_to_dict(self) -> dict[str, Any]:
        nodes: list[dict[str, Any]] = []
        for f, lab, br in zip(self._feat, self._label, self._branches):
            if f < 0:
                nodes.append({"class": lab})
            else:
                nodes.append({"feature": f, "branches": [[_mask_to_json(mask), child] for mask, child in br]})
        return {"root": self._root, "nodes": nodes}

    @classmethod
    def _from_body(cls, space: FeatureSpace, classes: list[Label], body: dict[str, Any]) -> "DecisionTree":
        nodes = body.get("nodes")
        if not isinstance(nodes, list) or not nodes:
            raise ModelFormatError("A decision_tree model needs a non-empty 'nodes' list.")

        def index(x: Any, bound: int, what: str) -> int:
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < bound:
                raise ModelFormatError(f"{what} must be an integer in [0, {bound - 1}]. Got {str(x)[:40]}.")
            return x

        feat: list[int] = []
        label: list[int] = []
        branches: list[tuple[tuple[int, int], ...]] = []
        for k, nd in enumerate(nodes):
            if not isinstance(nd, dict):
                raise ModelFormatError(f"Node {k} must be an object. Got {str(nd)[:80]}.")
            if "class" in nd:
                feat.append(-1)
                label.append(index(nd["class"], len(classes), f"Node {k}: 'class' (a class index)"))
                branches.append(())
                continue
            f = index(nd.get("feature"), space.n_features, f"Node {k}: 'feature' (a feature index)")
            size = space.features[f].size
            br = []
            if not isinstance(nd.get("branches"), list):
                raise ModelFormatError(f"Node {k}: 'branches' must be a list. Got {str(nd.get('branches'))[:80]}.")
            for b in nd["branches"]:
                if not isinstance(b, list) or len(b) != 2 or not isinstance(b[0], list):
                    raise ModelFormatError(f"Node {k}: a branch must be [[value indices], child]. Got {str(b)[:80]}.")
                mask = _mask_from_json(b[0], size, f"Node {k}: a value index of feature {f}")
                br.append((mask, index(b[1], len(nodes), f"Node {k}: a child")))
            feat.append(f)
            label.append(-1)
            branches.append(tuple(br))
        root = index(body.get("root", 0), len(nodes), "'root'")
        return cls._from_arrays(space, classes, feat, label, branches, root=root)

    # -- importers ---------------------------------------------------------

    @classmethod
    def from_sklearn(cls, clf: Any, *, feature_names: Sequence[str] | None = None,
                     domains: Sequence[Sequence[float] | None] | None = None,
                     distribution: DistributionLike = None) -> "DecisionTree":
        """Import a fitted scikit-learn ``DecisionTreeClassifier``.

        Parameters
        ----------
        clf : sklearn.tree.DecisionTreeClassifier
            A fitted tree (single output).
        feature_names : sequence of str, optional
            Defaults to ``clf.feature_names_in_`` if present, else ``x0, x1, ...``.
        domains : sequence, optional
            One list of values per feature (``None`` for a feature keeps the
            default). With a list, the feature's domain is exactly those values
            and each threshold test becomes a set of values. Without it, the
            feature is numeric and its domain is the intervals cut by the
            tree's thresholds on it.
        distribution : optional
            Passed to :class:`~kcxai.space.FeatureSpace`.

        Examples
        --------
        >>> from sklearn.tree import DecisionTreeClassifier
        >>> from kcxai import DecisionTree
        >>> X, y = [[20, 0], [30, 1], [40, 0], [50, 1]], [0, 0, 1, 1]
        >>> clf = DecisionTreeClassifier(random_state=0).fit(X, y)
        >>> tree = DecisionTree.from_sklearn(clf, feature_names=["age", "owner"])
        >>> tree.classes, tree.predict([45, 0]), tree.space.features[0]
        ((0, 1), 1, Feature.numeric('age', [35.0]))
        """
        return cls._from_parts(_sklearn.tree_parts(clf, feature_names=feature_names, domains=domains,
                                                   distribution=distribution))

    @classmethod
    def from_dt(cls, tree_path: str, map_path: str, *, distribution: DistributionLike = None) -> "DecisionTree":
        """Read a tree in the plain-text ``.dt`` / ``.map`` format of the authors' tools.

        See ``docs/model-format.md`` for the format. Feature ``k`` is named
        ``f<k>``; its domain is the tree values listed for it in the map, and
        instances are given in tree values.
        """
        return cls._from_parts(_dtfile.read_dt(tree_path, map_path, distribution=distribution))

    def __repr__(self) -> str:
        return (f"DecisionTree({self.n_nodes} nodes, depth {self.depth}, {self.space.n_features} features, "
                f"{len(self.classes)} classes)")

