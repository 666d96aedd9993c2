"""Hypothesis strategies: random feature spaces, distributions, trees and instances.

Shared by every test module. Random trees have 1-4 values per feature
(categorical or numeric), 2-3 classes, re-tested features, edges that list
values already excluded by an ancestor (as IAI trees do), and uniform, exact
non-uniform or float distributions.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

from kcxai import DecisionTree, Feature, FeatureSpace
from kcxai.distribution import Mixture, Product, Uniform

DISTRIBUTIONS = ("uniform", "exact", "float", "mixture", "float_mixture")
#: What the property tests draw from by default: exact distributions of every kind.
EXACT_KINDS = ("uniform", "exact", "mixture")


@st.composite
def feature_spaces(draw: Any, *, min_features: int = 1, max_features: int = 5, max_values: int = 4,
                   distributions: tuple[str, ...] = EXACT_KINDS) -> FeatureSpace:
    """A random feature space with a random distribution: uniform, product ("exact" or "float") or a
    mixture of 1-3 products ("mixture" exact, "float_mixture")."""
    n = draw(st.integers(min_features, max_features))
    feats = []
    for i in range(n):
        size = draw(st.integers(1, max_values))
        if draw(st.booleans()):
            feats.append(Feature.categorical(f"f{i}", [f"v{k}" for k in range(size)] if i % 2 else list(range(size))))
        else:
            feats.append(Feature.numeric(f"f{i}", [10 * k + 0.5 for k in range(size - 1)]))
    kind = draw(st.sampled_from(distributions))
    if kind == "uniform":
        return FeatureSpace(feats)
    if kind in ("mixture", "float_mixture"):
        return FeatureSpace(feats, distribution=draw(mixtures([f.size for f in feats], exact=kind == "mixture")))
    dist = []
    for f in feats:
        if draw(st.booleans()) and kind != "float":
            dist.append(None)
            continue
        if kind == "exact":
            ws = draw(st.lists(st.fractions(min_value=Fraction(1, 7), max_value=5, max_denominator=9),
                               min_size=f.size, max_size=f.size))
        else:
            ws = draw(st.lists(st.floats(min_value=0.05, max_value=3.0), min_size=f.size, max_size=f.size))
        dist.append(ws)
    return FeatureSpace(feats, distribution=dist)


@st.composite
def mixtures(draw: Any, sizes: list[int], *, exact: bool = True, max_components: int = 3) -> Mixture:
    """A random mixture of 1-``max_components`` product distributions (some components uniform)."""
    k = draw(st.integers(1, max_components))
    if exact:
        weight = st.fractions(min_value=Fraction(1, 7), max_value=4, max_denominator=7)
    else:
        weight = st.floats(min_value=0.05, max_value=3.0)
    parts: list[Any] = []
    for _ in range(k):
        if exact and draw(st.integers(0, 4)) == 0:
            parts.append(Uniform(sizes))
        else:
            parts.append(Product([draw(st.lists(weight, min_size=s, max_size=s)) for s in sizes]))
    return Mixture(draw(st.lists(weight, min_size=k, max_size=k)), parts)


@st.composite
def components(draw: Any, sizes: list[int], k: int, *, exact: bool = True) -> Product | Mixture:
    """A distribution of exactly ``k`` product components: a mixture of ``k`` random products, or for ``k = 1``
    a product or a mixture of one (whose coefficient need not be 1)."""
    if exact:
        weight = st.fractions(min_value=Fraction(1, 7), max_value=4, max_denominator=7)
    else:
        weight = st.floats(min_value=0.05, max_value=3.0)
    parts = [Product([draw(st.lists(weight, min_size=s, max_size=s)) for s in sizes]) for _ in range(k)]
    if k == 1 and draw(st.booleans()):
        return parts[0]
    return Mixture(draw(st.lists(weight, min_size=k, max_size=k)), parts)


@st.composite
def trees(draw: Any, *, space: FeatureSpace | None = None, n_classes: int | None = None,
          max_depth: int = 5, distributions: tuple[str, ...] = EXACT_KINDS) -> DecisionTree:
    """A random decision tree over a random (or the given) space."""
    if space is None:
        space = draw(feature_spaces(distributions=distributions))
    if n_classes is None:
        n_classes = draw(st.integers(2, 3))
    classes = list(range(n_classes)) if draw(st.booleans()) else [f"c{k}" for k in range(n_classes)]
    feat: list[int] = []
    label: list[int] = []
    branches: list[tuple[tuple[int, int], ...]] = []
    full = [(1 << f.size) - 1 for f in space.features]

    def build(allowed: list[int], depth: int) -> int:
        nid = len(feat)
        feat.append(-1)
        label.append(-1)
        branches.append(())
        splittable = [i for i, m in enumerate(allowed) if bin(m).count("1") >= 2]
        if depth >= max_depth or not splittable or draw(st.integers(0, 3)) == 0:
            label[nid] = draw(st.integers(0, n_classes - 1))
            return nid
        f = draw(st.sampled_from(splittable))
        vals = [k for k in range(space.features[f].size) if allowed[f] >> k & 1]
        groups = draw(st.lists(st.integers(0, len(vals) - 1), min_size=len(vals), max_size=len(vals)))
        used = sorted(set(groups))  # a single group makes a node with one reachable branch
        masks = []
        for g in used:
            masks.append(sum(1 << v for v, gv in zip(vals, groups) if gv == g))
        excluded = full[f] & ~allowed[f]
        if excluded and draw(st.booleans()):
            if draw(st.booleans()):  # list excluded values too, on the first branch (IAI style)
                masks[0] |= excluded
            else:  # a branch no point can take (unreachable subtree)
                masks.append(excluded)
        feat[nid] = f
        out = []
        for m in masks:
            child_allowed = list(allowed)
            child_allowed[f] = allowed[f] & m
            out.append((m, build(child_allowed, depth + 1)))
        branches[nid] = tuple(out)
        return nid

    build(list(full), 0)
    return DecisionTree._from_arrays(space, classes, feat, label, branches)


@st.composite
def set_split_trees(draw: Any, *, space: FeatureSpace, n_classes: int | None = None, max_depth: int = 3
                    ) -> DecisionTree:
    """A random tree each of whose nodes splits a feature's still allowed values in two sets that are
    seldom ranges: one value against the others (a one-hot encoder's ``x == v``), or a random subset
    against the rest. Any domain size (64 values and more too: the subset is one random integer)."""
    if n_classes is None:
        n_classes = draw(st.integers(2, 3))
    classes = list(range(n_classes)) if draw(st.booleans()) else [f"c{k}" for k in range(n_classes)]
    feat: list[int] = []
    label: list[int] = []
    branches: list[tuple[tuple[int, int], ...]] = []

    def build(allowed: list[int], depth: int) -> int:
        nid = len(feat)
        feat.append(-1)
        label.append(-1)
        branches.append(())
        splittable = [i for i, m in enumerate(allowed) if bin(m).count("1") >= 2]
        if depth >= max_depth or not splittable or (depth and draw(st.integers(0, 4)) == 0):
            label[nid] = draw(st.integers(0, n_classes - 1))
            return nid
        f = draw(st.sampled_from(splittable))
        vals = [k for k in range(space.features[f].size) if allowed[f] >> k & 1]
        if draw(st.booleans()):
            pick = 1 << draw(st.integers(0, len(vals) - 1))
        else:
            pick = draw(st.integers(1, (1 << len(vals)) - 2))
        mask = sum(1 << v for k, v in enumerate(vals) if pick >> k & 1)
        feat[nid] = f
        out = []
        for m in (mask, allowed[f] & ~mask):
            child_allowed = list(allowed)
            child_allowed[f] = m
            out.append((m, build(child_allowed, depth + 1)))
        branches[nid] = tuple(out)
        return nid

    build([(1 << f.size) - 1 for f in space.features], 0)
    return DecisionTree._from_arrays(space, classes, feat, label, branches)


@st.composite
def points(draw: Any, space: FeatureSpace) -> tuple[int, ...]:
    """A random point (tuple of value indices)."""
    return tuple(draw(st.integers(0, s - 1)) for s in space.domain_sizes)


def instance_of(space: FeatureSpace, point: tuple[int, ...]) -> list[Any]:
    """User values for a point (a number inside each interval of numeric features)."""
    out = []
    for f, k in zip(space.features, point):
        if f.is_numeric:
            iv = f.values[k]
            out.append(iv.high if iv.high != float("inf") else (iv.low + 1 if iv.low != float("-inf") else 0.0))
        else:
            out.append(f.values[k])
    return out


@st.composite
def tree_and_instance(draw: Any, **kwargs: Any) -> tuple[DecisionTree, list[Any]]:
    """A random tree and a random instance of its space."""
    tree = draw(trees(**kwargs))
    return tree, instance_of(tree.space, draw(points(tree.space)))


deltas = st.one_of(st.just(Fraction(0)), st.fractions(min_value=0, max_value=1, max_denominator=64),
                   st.sampled_from([0.01, 0.05, 0.1, 0.25]))
