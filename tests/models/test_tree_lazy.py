"""Decision trees keep no per-leaf paths until asked: construction, JSON and prediction in linear memory,
and the lazy views (``leaves``, ``paths``, ``path_of``, ``predict_point``) equal what a brute-force walk
over every point of feature space says."""

import itertools
import json
import tracemalloc
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace, InvalidInputError, Leaf, Split
from kcxai.models import TreePath
from tests._support.strategies import trees


def _reached_leaf(a, point):
    """The leaf a point reaches: the one branch whose mask holds the point's value, node after node."""
    nid = a.root
    while a.feature[nid] != -1:
        taken = [child for mask, child in a.branches[nid] if (mask >> point[a.feature[nid]]) & 1]
        assert len(taken) == 1
        nid = taken[0]
    return nid


def _brute(tree):
    """Per reached leaf, the points reaching it (every point of the space enumerated)."""
    a = tree.arrays
    reach = {}
    for point in itertools.product(*(range(s) for s in tree.space.domain_sizes)):
        reach.setdefault(_reached_leaf(a, point), []).append(point)
    return reach


def _preorder_last_branch_first(a):
    """Every leaf of the node arrays (reachable or not), depth first, the last branch of a node first."""
    out, stack = [], [a.root]
    while stack:
        nid = stack.pop()
        if a.feature[nid] == -1:
            out.append(nid)
        stack.extend(child for _, child in a.branches[nid])
    return out


def _box_path(tree, leaf, points):
    """The TreePath of a leaf from the points reaching it: per feature the values they take, which must
    form a box (every combination reaches the leaf)."""
    sizes = tree.space.domain_sizes
    values = [sorted({p[f] for p in points}) for f in range(len(sizes))]
    n_box = 1
    for v in values:
        n_box *= len(v)
    assert n_box == len(points)  # a path's points are a product of value sets
    masks = tuple((f, sum(1 << k for k in v)) for f, v in enumerate(values) if len(v) < sizes[f])
    return TreePath(tree.arrays.label[leaf], masks, leaf)


@settings(max_examples=80)
@given(trees(max_depth=5))
def test_lazy_views_equal_a_brute_force_walk(tree):
    a = tree.arrays
    reach = _brute(tree)
    order = [leaf for leaf in _preorder_last_branch_first(a) if leaf in reach]
    assert tree.leaves == tuple(order)
    assert tree.paths == tuple(_box_path(tree, leaf, reach[leaf]) for leaf in order)
    for leaf, pts in reach.items():
        for point in pts:
            assert tree.predict_point(point) == a.label[leaf]
            assert tree.path_of(point) == _box_path(tree, leaf, pts)
    assert tree.n_leaves == sum(1 for f in a.feature if f == -1)


@settings(max_examples=40)
@given(trees(max_depth=5))
def test_trusted_construction_and_copies_have_the_same_views(tree):
    a = tree.arrays
    trusted = DecisionTree._from_arrays(tree.space, tree.classes, list(a.feature), list(a.label),
                                        list(a.branches), root=a.root, validate=False)
    assert trusted.leaves == tree.leaves and trusted.paths == tree.paths
    other = tree.with_distribution([[1] * s for s in tree.space.domain_sizes])
    assert other.leaves == tree.leaves and other.paths == tree.paths and other.arrays == a
    back = kcxai.models.model_from_dict(json.loads(tree.to_json()))
    assert back.leaves == tree.leaves and back.paths == tree.paths


def _chain_json(depth):
    """A kcxai JSON model: a chain ``depth`` tests deep over ``depth`` distinct binary features (feature k
    tested at depth k), whose paths hold depth**2 / 2 feature masks in all."""
    space = FeatureSpace([Feature.categorical(f"x{k}", [0, 1]) for k in range(depth)])
    nodes = []
    for k in range(depth):
        nodes.append({"feature": k, "branches": [[[0], 2 * k + 1], [[1], 2 * k + 2]]})
        nodes.append({"class": k % 2})
    nodes.append({"class": 1})
    return {"format": "kcxai-model", "version": 1, "type": "decision_tree", "space": space.to_dict(),
            "classes": [0, 1], "root": 0, "nodes": nodes}


def test_chain_json_format_is_what_save_writes():
    d = _chain_json(3)
    tree = kcxai.models.model_from_dict(d)
    assert json.loads(tree.to_json()) == d


def test_construction_json_and_prediction_do_not_build_paths():
    depth = 3000
    d = _chain_json(depth)
    tracemalloc.start()
    try:
        tree = kcxai.models.model_from_dict(d)
        text = tree.to_json()
        point = (1,) * (depth - 1) + (0,)
        assert tree.predict_point(point) == (depth - 1) % 2
        path = tree.path_of(point)
        assert len(path.masks) == depth and path.leaf == 2 * depth - 1
        assert len(tree.leaves) == depth + 1 and tree.depth == depth
        again = DecisionTree(tree.space, tree.classes, kcxai.models.model_from_dict(json.loads(text)).to_root())
        assert again.n_nodes == 2 * depth + 1
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the paths alone hold 4.5 million (feature, mask) pairs: over 400 MB; the tree is 6,001 nodes
    assert peak < 60 * 2**20, f"peak {peak / 2**20:.0f} MB"
    assert tree._paths is None  # nothing above asked for them
    small = kcxai.models.model_from_dict(_chain_json(50))
    assert [len(p.masks) for p in small.paths] == [50, *range(50, 0, -1)]


def test_nested_nodes_name_the_place_of_an_error():
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2]), Feature.numeric("b", [1.0, 2.0])])
    bad = Split("a", {0: Leaf(0), 1: Split.threshold("b", 1.0, Leaf(0), Split("b", {5.0: Leaf(1)})), 2: Leaf(1)})
    with pytest.raises(kcxai.ModelFormatError, match=r"the node at root / a = 1 / b > 1 .* no branch"):
        DecisionTree(space, [0, 1], bad)
    with pytest.raises(kcxai.InvalidTypeError, match=r"Tree node at root / a = 2 must be a Leaf or Split"):
        DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Leaf(1), 2: "x"}))


@given(st.lists(st.integers(-3, 12), min_size=0, max_size=6, unique=True).map(sorted),
       st.sampled_from([-4.0, -0.5, 0.0, 0.5, 1.0, 3.0, 3.5, 11.0, 12.5, float("inf"), float("-inf")]))
def test_threshold_split_masks_equal_an_interval_scan(cuts, t):
    feature = Feature.numeric("x", [float(c) for c in cuts])
    space = FeatureSpace([feature])
    left = sum(1 << k for k, iv in enumerate(feature.values) if iv.high <= t)
    right = sum(1 << k for k, iv in enumerate(feature.values) if iv.low >= t)
    if left | right != (1 << feature.size) - 1:
        with pytest.raises(InvalidInputError, match="cuts the interval"):
            DecisionTree(space, [0, 1], Split.threshold("x", t, Leaf(0), Leaf(1)))
        return
    tree = DecisionTree(space, [0, 1], Split.threshold("x", t, Leaf(0), Leaf(1)))
    assert tree.arrays.branches[tree.arrays.root] == ((left, 1), (right, 2))


@settings(max_examples=25)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["forest", "extra", "best_first", "boosted"]),
       st.lists(st.sampled_from([None, [0, 5], [1, 2, 3], [0, 2, 4, 5], [3]]), min_size=3, max_size=3))
def test_imported_trees_have_the_leaves_a_full_check_finds(seed, kind, domains):
    """Importers skip the check and find the reachable leaves by value ranges; a given domain can make
    branches unreachable (a threshold between two domain values no point has)."""
    import numpy as np
    from sklearn.ensemble import ExtraTreesClassifier, GradientBoostingClassifier, RandomForestClassifier

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(60, 3)).astype(float)
    y = rng.integers(0, 3, size=60)
    doms = None if all(d is None for d in domains) else domains
    if kind == "boosted":
        clf = GradientBoostingClassifier(n_estimators=4, max_depth=3, random_state=0).fit(X, y)
        model = kcxai.models.BoostedTrees.from_sklearn(clf, domains=doms)
    else:
        est = {"forest": RandomForestClassifier(n_estimators=4, random_state=0),
               "extra": ExtraTreesClassifier(n_estimators=4, random_state=0),
               "best_first": RandomForestClassifier(n_estimators=4, max_leaf_nodes=9, random_state=0)}[kind]
        model = kcxai.models.RandomForest.from_sklearn(est.fit(X, y), domains=doms)
    for tree in model.trees:
        a = tree.arrays
        checked = DecisionTree._from_arrays(tree.space, tree.classes, a.feature, a.label, a.branches, root=a.root)
        assert tree.leaves == checked.leaves
        assert tree.leaves == tuple(leaf for leaf in _preorder_last_branch_first(a) if leaf in _brute(tree))


def _runs_by_bits(mask, size):
    """Value indices of a mask, a run of three or more as [first, last]: bit by bit."""
    out, k = [], 0
    while k < size:
        if not mask >> k & 1:
            k += 1
            continue
        end = k
        while end + 1 < size and mask >> (end + 1) & 1:
            end += 1
        out += [[k, end]] if end - k >= 2 else list(range(k, end + 1))
        k = end + 1
    return out


@given(st.integers(1, 300).flatmap(lambda size: st.tuples(st.just(size), st.one_of(
    st.integers(0, 2**size - 1),
    st.lists(st.tuples(st.integers(0, size - 1), st.integers(1, 40)), max_size=20).map(
        lambda rs: sum(((1 << n) - 1) << lo for lo, n in rs) & (2**size - 1))))))
def test_mask_json_runs_equal_a_bit_by_bit_scan(size_mask):
    from kcxai.models._tree_data import _mask_from_json, _mask_to_json

    size, mask = size_mask
    items = _mask_to_json(mask)
    assert items == _runs_by_bits(mask, size)
    assert _mask_from_json(items, size, "x") == mask
    assert _mask_from_json(list(reversed(items)), size, "x") == mask


def test_compiling_to_dt_under_a_mixture_and_starting_from_the_path_do_not_build_paths():
    # isinstance(x, PathOracle) and hasattr(x, "paths") read x.paths on Python < 3.12, the dt compiler's
    # statistics read them too, and reading a tree's paths builds them all (quadratic in a deep chain)
    from kcxai.distribution import Mixture, Product

    depth = 8
    tree = kcxai.models.model_from_dict(_chain_json(depth))
    mixed = tree.with_distribution(Mixture([1, 2], [Product([[3, 1]] * depth), Product([[1, 3]] * depth)]))
    for model in (tree, mixed):
        compiled = kcxai.compile_model(model, "dt")
        assert model._paths is None
        point = [1] * (depth - 1) + [0]
        e = kcxai.min_idrs(compiled, point, Fraction(1, 10), start="path")
        assert model._paths is None
        assert kcxai.is_idrs(kcxai.compile_model(model, "brute"), point, e.features, Fraction(1, 10))


@settings(max_examples=60, deadline=None)
@given(trees())
def test_dt_statistics_count_the_paths_and_their_literals(tree):
    details = kcxai.compile_model(tree, "dt").stats.details
    assert details["paths"] == len(tree.paths) == len(tree.leaves)
    assert details["path_literals"] == sum(len(p.masks) for p in tree.paths)


def test_a_compile_limit_s_advice_does_not_build_the_paths():
    tree = kcxai.models.model_from_dict(_chain_json(8))
    with pytest.raises(kcxai.CompilationLimitError, match="answers natively with 'dt'"):
        kcxai.compile_model(tree, "obdd", max_nodes=2)
    assert tree._paths is None
