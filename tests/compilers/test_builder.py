"""The SDD and OBDD builders against the truth-table builder, on random formulas.

Every encoding (order, one-hot, auto), both dd backends and every vtree shape: a random formula
built with the backend's builder must hold at exactly the points where the truth-table builder's
holds, evaluated with the backend's own operations (dd's ``let``; an SDD walk over primes and
subs) on the point's encoding. The same formulas, as two-class models, are then compiled and
counted against brute force, which exercises ``neg`` and ``switch`` through the whole pipeline.
"""

import importlib.util

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai import Feature, FeatureSpace
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.compilers._encoding import Encoding
from kcxai.compilers._orders import ProbeBuilder, feature_order
from kcxai.compilers.obdd import BddBuilder
from kcxai.compilers.sdd import SddBuilder, _manager, vtree_text
from kcxai.models.classifier import Classifier
from tests._support.strategies import feature_spaces, points

ENCODINGS = ["log", "order", "onehot"]  # "auto" is "log"
BDD_BACKENDS = ["dd.autoref"] + (["dd.cudd"] if importlib.util.find_spec("dd.cudd") else [])


@st.composite
def formulas(draw, space, depth=4):
    """A random expression over ``space``: nested tuples naming the builder operations."""
    n = space.n_features
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        kind = draw(st.sampled_from(["in", "in", "in", "true", "false"]))
        if kind != "in":
            return (kind,)
        f = draw(st.integers(0, n - 1))
        return ("in", f, draw(st.integers(0, (1 << space.features[f].size) - 1)))
    kind = draw(st.sampled_from(["and", "or", "not", "switch"]))
    if kind == "not":
        return ("not", draw(formulas(space, depth - 1)))
    if kind == "switch":
        f = draw(st.integers(0, n - 1))
        return ("switch", f, tuple(draw(formulas(space, depth - 1)) for _ in range(space.features[f].size)))
    return (kind, draw(formulas(space, depth - 1)), draw(formulas(space, depth - 1)))


def build(b, e):
    kind = e[0]
    if kind == "true":
        return b.true()
    if kind == "false":
        return b.false()
    if kind == "in":
        return b.value_in(e[1], e[2])
    if kind == "not":
        return b.neg(build(b, e[1]))
    if kind == "switch":
        return b.switch(e[1], [build(b, c) for c in e[2]])
    a, c = build(b, e[1]), build(b, e[2])
    return b.conj(a, c) if kind == "and" else b.disj(a, c)


def holds(e, point):
    """Direct evaluation (independent of every builder)."""
    kind = e[0]
    if kind in ("true", "false"):
        return kind == "true"
    if kind == "in":
        return bool(e[2] >> point[e[1]] & 1)
    if kind == "not":
        return not holds(e[1], point)
    if kind == "switch":
        return holds(e[2][point[e[1]]], point)
    a, c = holds(e[1], point), holds(e[2], point)
    return (a and c) if kind == "and" else (a or c)


def assignment(enc, point):
    """The Boolean variables' values in the encoding of ``point``."""
    return {v: bool(enc.var_true[v] >> point[enc.var_feature[v]] & 1) for v in range(enc.n_vars)}


def sdd_holds(node, values):
    if node.is_true():
        return True
    if node.is_false():
        return False
    if node.is_literal():
        lit = node.literal
        return values[abs(lit) - 1] == (lit > 0)
    for p, s in node.elements():
        if sdd_holds(p, values):
            return sdd_holds(s, values)
    raise AssertionError("no prime holds: not an SDD")


@settings(max_examples=40)
@given(space=feature_spaces(max_features=4), data=st.data())
def test_truth_table_builder_matches_direct_evaluation(space, data):
    e = data.draw(formulas(space))
    tt = TruthTableBuilder(space)
    f = build(tt, e)
    for p in tt.points:
        assert tt.holds(f, p) == holds(e, p)


@pytest.mark.parametrize("backend", BDD_BACKENDS)
@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=30)
@given(space=feature_spaces(max_features=4), data=st.data())
def test_bdd_builder_equals_truth_table(backend, encoding, space, data):
    import importlib

    mod = importlib.import_module(backend)
    e = data.draw(formulas(space))
    order = data.draw(st.permutations(range(space.n_features)))
    enc = Encoding(space, encoding, order)
    bdd = mod.BDD()
    if enc.n_vars:
        bdd.declare(*(f"v{i}" for i in range(enc.n_vars)))
    b = BddBuilder(bdd, enc)
    u = build(b, e)
    tt = TruthTableBuilder(space)
    f = build(tt, e)
    for p in tt.points:
        values = {f"v{v}": x for v, x in assignment(enc, p).items()}
        got = bdd.let(values, u) if values else u
        assert got in (bdd.true, bdd.false)
        assert (got == bdd.true) == tt.holds(f, p), (e, p)
    del u, got, b


@pytest.mark.parametrize("shape", ["balanced", "right", "left"])
@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=30)
@given(space=feature_spaces(max_features=4), data=st.data())
def test_sdd_builder_equals_truth_table(shape, encoding, space, data):
    e = data.draw(formulas(space))
    order = data.draw(st.permutations(range(space.n_features)))
    enc = Encoding(space, encoding, order)
    mgr = _manager(enc, order, shape)
    u = build(SddBuilder(mgr, enc), e)
    tt = TruthTableBuilder(space)
    f = build(tt, e)
    for p in tt.points:
        assert sdd_holds(u, assignment(enc, p)) == tt.holds(f, p), (e, p)


class FormulaModel(Classifier):
    """Two classes: ``not phi`` and ``phi``."""

    model_type = ""

    def __init__(self, space, expr):
        self.space = space
        self.expr = expr
        self._init_classes([False, True])

    def predict_point(self, point):
        return int(holds(self.expr, point))

    def build(self, builder):
        f = build(builder, self.expr)
        return [builder.neg(f), f]

    def with_distribution(self, distribution):  # pragma: no cover - not used
        return FormulaModel(self.space.with_distribution(distribution), self.expr)

    def _body_to_dict(self):  # pragma: no cover - not used
        raise NotImplementedError

    @classmethod
    def _from_body(cls, space, classes, body):  # pragma: no cover - not used
        raise NotImplementedError


@pytest.mark.parametrize("language, options", [
    ("sdd", {}), ("sdd", {"encoding": "onehot", "vtree": "right"}), ("obdd", {}),
    ("obdd", {"backend": "autoref", "encoding": "order"}), ("obdd", {"encoding": "onehot", "reorder": False}),
])
@settings(max_examples=30)
@given(space=feature_spaces(max_features=4, distributions=("uniform", "exact", "float")), data=st.data())
def test_formula_models_count_like_brute_force(language, options, space, data):
    model = FormulaModel(space, data.draw(formulas(space)))
    compiled = kcxai.compile_model(model, language, **options)
    brute = kcxai.compile_model(model, "brute").oracle
    for p in ref.all_points(space):
        assert compiled.oracle.predict_point(p) == model.predict_point(p)
    for _ in range(3):
        p = data.draw(points(space))
        label = data.draw(st.integers(0, 1))
        s = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
        assert ref.close(compiled.oracle.disagree_weight(p, label, s), brute.disagree_weight(p, label, s))


# -- encodings, orders, vtrees -------------------------------------------------------

def test_encoding_kinds_and_variables():
    space = FeatureSpace([Feature.categorical("one", ["a"]), Feature.categorical("two", ["a", "b"]),
                          Feature.categorical("cat", ["a", "b", "c", "d"]), Feature.numeric("num", [1, 2, 3])])
    enc = Encoding(space)
    assert enc.kinds == ("constant", "binary", "log", "log")
    assert [len(b) for b in enc.blocks] == [0, 1, 2, 2]
    # log encoding: the bits of the value number, most significant first
    assert [enc.var_true[v] for v in enc.blocks[2]] == [0b1100, 0b1010]
    order = Encoding(space, "order")
    assert order.kinds == ("constant", "binary", "order", "order")
    assert [len(b) for b in order.blocks] == [0, 1, 3, 3]
    # order encoding: variable t is true for values >= t
    assert [order.var_true[v] for v in order.blocks[3]] == [0b1110, 0b1100, 0b1000]
    onehot = Encoding(space, "onehot")
    assert onehot.kinds[2:] == ("onehot", "onehot") and onehot.n_vars == 9
    with pytest.raises(kcxai.InvalidInputError, match="'encoding' must be one of"):
        Encoding(space, "gray")


def test_threshold_splits_are_single_literals():
    space = FeatureSpace([Feature.numeric("x", [1, 2, 3, 4])])
    enc = Encoding(space, "order")
    for t in range(1, 5):
        below = (1 << t) - 1
        neg_a, cubes_a = enc.terms(0, below)
        neg_b, cubes_b = enc.terms(0, 0b11111 & ~below)
        assert [len(c) for c in cubes_a] == [1] and [len(c) for c in cubes_b] == [1]
        assert cubes_a[0][0][0] == cubes_b[0][0][0]  # the same variable: complementary literals


def test_dfs_order_of_the_running_example():
    tree = kcxai.datasets.running_example_tree()
    assert feature_order(tree, "dfs") == (0, 1, 4, 5, 2, 6, 3, 7, 8)
    assert feature_order(tree, "auto") == feature_order(tree, "dfs")
    assert feature_order(tree, "index") == tuple(range(9))
    assert feature_order(tree, ["x9", 7, "x7", 5, 4, 3, 2, 1, 0]) == (8, 7, 6, 5, 4, 3, 2, 1, 0)
    probe = ProbeBuilder(tree.space)
    roots = tree.build(probe)
    assert probe.first_occurrence(roots) == [0, 1, 4, 5, 2, 6, 3, 7, 8]


def _parse_vtree(text):
    lines = text.strip().splitlines()
    assert lines[0] == f"vtree {len(lines) - 1}"
    leaves, kids = {}, {}
    for ln in lines[1:]:
        parts = ln.split()
        if parts[0] == "L":
            leaves[int(parts[1])] = {int(parts[2])}
        else:
            a, b = int(parts[2]), int(parts[3])
            assert a in leaves and b in leaves  # children before parents
            leaves[int(parts[1])] = leaves[a] | leaves[b]
            kids[int(parts[1])] = (a, b)
    return leaves, kids


@pytest.mark.parametrize("shape", ["balanced", "right", "left"])
def test_vtree_keeps_every_block_together(shape):
    blocks = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10], [11]]
    leaves, kids = _parse_vtree(vtree_text(blocks, shape))
    sets = list(leaves.values())
    for blk in blocks:
        assert set(blk) in sets
    root = max(leaves)
    assert leaves[root] == set(range(1, 12))
    if shape == "right":  # a chain of blocks: every left child is a whole block
        node = root
        while node in kids and leaves[node] not in [set(b) for b in blocks]:
            assert leaves[kids[node][0]] in [set(b) for b in blocks]
            node = kids[node][1]


@pytest.mark.parametrize("d", range(3, 12))
def test_log_encoding_intervals(d):
    """Every set of values, as cubes over the bits, holds exactly on its values' codes."""
    space = FeatureSpace([Feature.categorical("x", list(range(d)))])
    enc = Encoding(space, "log")
    vs = enc.blocks[0]
    for mask in range(1 << d):
        negate, cubes = enc.terms(0, mask)
        for k in range(d):
            values = {v: bool(enc.var_true[v] >> k & 1) for v in vs}
            inside = any(all(values[v] == pol for v, pol in cube) for cube in cubes) != negate
            assert inside == bool(mask >> k & 1), (d, mask, k)
