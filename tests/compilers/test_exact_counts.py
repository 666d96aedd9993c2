"""Exact counts past 64 bits: 80 Boolean variables and 200+ encoding variables, in every counting language.

PySDD's native counters are unsigned 64-bit and wrap silently; dd.cudd counts in doubles. The
oracles must not use them: their answers are compared with counts computed here, independently,
from the tree's paths with Python ints (a path's weight is a product, per feature, of the weights
of the values it allows and the fixed value allows).
"""

import random
from fractions import Fraction

import pytest

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split

# autoref cannot reorder: it gets the order CUDD's sifting finds (the "sifted" marker below)
LANGS = [("dt", {}), ("sdd", {}), ("obdd", {}), ("obdd", {"backend": "autoref", "order": "sifted"}),
         ("sdd", {"vtree": "right"}), ("obdd", {"encoding": "onehot"})]
IDS = ["dt", "sdd", "obdd", "obdd-autoref", "sdd-right", "obdd-onehot"]


def path_count(tree, point, label, fixed):
    """Weight of {x : kappa(x) != label, x_fixed = point_fixed}, from the paths."""
    space = tree.space
    total = 0
    for path in tree.paths:
        if path.label == label:
            continue
        masks = dict(path.masks)
        w = 1
        for f, feat in enumerate(space.features):
            allowed = masks.get(f, (1 << feat.size) - 1)
            if f in fixed:
                allowed &= 1 << point[f]
            w *= sum(space.weights[f][k] for k in range(feat.size) if allowed >> k & 1)
            if not w:
                break
        total += w
    return total


def ladder_tree(n, distribution=None, seed=0):
    """A tree testing every one of ``n`` binary features: a spine b0, b1, ... with side subtrees
    testing random later features."""
    rng = random.Random(seed)
    space = FeatureSpace([Feature.categorical(f"b{i}", [0, 1]) for i in range(n)], distribution=distribution)

    def side(i, depth):
        if depth == 0 or i >= n - 1:
            return Leaf(rng.randrange(3))
        j = rng.randrange(i + 1, n)
        return Split(f"b{j}", {0: side(j, depth - 1), 1: side(j, depth - 1)})

    node = Leaf(0)
    for i in reversed(range(n)):
        node = Split(f"b{i}", {0: side(i, rng.randrange(4)), 1: node}) if i % 2 else \
            Split(f"b{i}", {0: node, 1: side(i, 2)})
    return DecisionTree(space, [0, 1, 2], node)


def wide_tree(seed=1, distribution="exact"):
    """Numeric features with 41 values and categorical ones with 15: over 200 encoding variables."""
    rng = random.Random(seed)
    feats = [Feature.numeric(f"n{i}", [float(t) for t in range(40)]) for i in range(6)]
    feats += [Feature.categorical(f"c{i}", [f"v{k}" for k in range(15)]) for i in range(3)]
    dist = None
    if distribution == "exact":
        dist = [[Fraction(rng.randint(1, 9), rng.randint(1, 7)) for _ in range(f.size)] for f in feats]
    space = FeatureSpace(feats, distribution=dist)

    def grow(depth):
        if depth == 0 or rng.random() < 0.1:
            return Leaf("abc"[rng.randrange(3)])
        i = rng.randrange(len(feats))
        if i < 6:
            return Split.threshold(f"n{i}", float(rng.randrange(40)), grow(depth - 1), grow(depth - 1))
        vals = [f"v{k}" for k in range(15)]
        rng.shuffle(vals)
        cut = rng.randrange(1, 14)
        return Split(f"c{i - 6}", [(vals[:cut], grow(depth - 1)), (vals[cut:], grow(depth - 1))])

    return DecisionTree(space, ["a", "b", "c"], grow(9))


def _check(tree, language, options, n_queries=25, seed=3):
    rng = random.Random(seed)
    if options.get("order") == "sifted":
        pytest.importorskip("dd.cudd")
        from kcxai.compilers.obdd import sifted_order

        options = {**options, "order": sifted_order(tree)}
    compiled = kcxai.compile_model(tree, language, **options)
    oracle = compiled.oracle
    space = tree.space
    n = space.n_features
    assert space.total_weight > 2 ** 64
    for q in range(n_queries):
        point = tuple(rng.randrange(f.size) for f in space.features)
        label = rng.randrange(3)
        fixed = frozenset() if q == 0 else frozenset(range(n)) if q == 1 else \
            frozenset(f for f in range(n) if rng.random() < [0.2, 0.5, 0.9][q % 3])
        got = oracle.disagree_weight(point, label, fixed)
        assert type(got) is int
        assert got == path_count(tree, point, label, fixed), (language, options, q)
    # a deletion-loop session over every feature, checked at every step
    point = tuple(rng.randrange(f.size) for f in space.features)
    label = tree.predict_point(point)
    fixed = set(range(n))
    session = oracle.session(point, label, frozenset(fixed))
    for i in rng.sample(range(n), n):
        w = session.weight_if_freed(i)
        assert w == path_count(tree, point, label, fixed - {i})
        if rng.random() < 0.6:
            session.free(i)
            fixed.discard(i)
            assert session.weight() == w
    return compiled


@pytest.mark.parametrize("language, options", LANGS, ids=IDS)
def test_80_binary_features_uniform(language, options):
    tree = ladder_tree(80)
    compiled = _check(tree, language, options)
    if language != "dt":
        assert compiled.stats["variables"] == 80


@pytest.mark.parametrize("language, options", LANGS, ids=IDS)
def test_80_binary_features_weighted(language, options):
    rng = random.Random(7)
    dist = [[rng.randint(1, 5), rng.randint(1, 5)] for _ in range(80)]
    tree = ladder_tree(80, distribution=dist, seed=2)
    _check(tree, language, options, n_queries=15)


WIDE = [("dt", {}), ("sdd", {"encoding": "order"}), ("obdd", {"encoding": "order"}),
        ("obdd", {"backend": "autoref", "order": "sifted", "encoding": "order"}),
        ("obdd", {"encoding": "onehot"}), ("sdd", {}), ("obdd", {})]


@pytest.mark.parametrize("language, options", WIDE, ids=[
    "dt", "sdd-order", "obdd-order", "obdd-autoref-order", "obdd-onehot", "sdd-log", "obdd-log"])
def test_over_200_encoding_variables(language, options):
    """285 variables in the order encoding, 291 one-hot (48 in the default log encoding)."""
    tree = wide_tree()
    compiled = _check(tree, language, options, n_queries=15)
    if language != "dt" and options.get("encoding") in ("order", "onehot"):
        assert compiled.stats["variables"] >= 200


def test_brute_force_refuses_these_spaces():
    with pytest.raises(kcxai.ProblemTooLargeError, match="max_points"):
        kcxai.compile_model(ladder_tree(80), "brute")


def test_explanations_agree_on_the_large_trees():
    for tree in (ladder_tree(80), wide_tree()):
        rng = random.Random(11)
        compiled = {lang: kcxai.compile_model(tree, lang) for lang in ("dt", "sdd", "obdd")}
        for _ in range(3):
            point = tuple(rng.randrange(f.size) for f in tree.space.features)
            x = [f.values[k] if not f.is_numeric else (f.values[k].high if k < f.size - 1 else 1e6)
                 for f, k in zip(tree.space.features, point)]
            for delta in (0, Fraction(1, 100), Fraction(1, 4)):
                found = {lang: kcxai.min_idrs(c, x, delta) for lang, c in compiled.items()}
                assert len({(e.features, e.error) for e in found.values()}) == 1
