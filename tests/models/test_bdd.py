"""Classifiers given as a BDD: import from dd (autoref and cudd), dd's JSON, build, round trips, errors."""

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import kcxai
from tests._support import reference as ref
from kcxai import Feature, FeatureSpace
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.models import BddClassifier
from tests._support.model_strategies import bdd_models

BACKENDS = ["dd.autoref", "dd.cudd"]


def _dd(name):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:  # dd.cudd ships only in dd's x86_64 wheels
        pytest.skip(f"{name} is not importable here")


def _random_expr(rng, names, depth):
    if depth == 0 or rng.random() < 0.2:
        v = rng.choice(names)
        return v if rng.random() < 0.5 else f"~ {v}"
    op = rng.choice(["/\\", "\\/", "^"])
    return f"({_random_expr(rng, names, depth - 1)} {op} {_random_expr(rng, names, depth - 1)})"


@given(bdd_models(distributions=("uniform", "exact", "float")))
def test_build_is_the_diagram(model):
    b = TruthTableBuilder(model.space)
    b.check_partition(model.build(b), model.predict_point)


@given(bdd_models())
def test_json_and_dd_round_trips(model):
    again = kcxai.models.model_from_dict(model.to_dict())
    assert again.to_dict() == model.to_dict()
    back = BddClassifier.from_dd(model.to_dd(), variables=model.space.names, classes=model.classes)
    for p in ref.all_points(model.space):
        assert again.predict_point(p) == back.predict_point(p) == model.predict_point(p)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seed", range(25))
def test_from_dd_agrees_with_dd_evaluation(backend, seed):
    mod = _dd(backend)
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(rng.randint(1, 7))]
    bdd = mod.BDD()
    bdd.declare(*names)
    u = bdd.add_expr(_random_expr(rng, names, 4))
    model = BddClassifier.from_dd(u)
    assert model.space.names == tuple(sorted(names, key=bdd.level_of_var))
    for bits in itertools.product([0, 1], repeat=len(names)):
        env = {n: bool(b) for n, b in zip(model.space.names, bits)}
        expected = int(bdd.let(env, u) == bdd.true)
        assert model.predict(list(bits)) == expected
    b = TruthTableBuilder(model.space)
    b.check_partition(model.build(b), model.predict_point)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dd_json_dump_loads(tmp_path, backend):
    mod = _dd(backend)
    bdd = mod.BDD()
    bdd.declare("a", "b", "c", "d")
    u = bdd.add_expr(r"(a /\ ~b) \/ (c ^ d)")
    path = tmp_path / "f.json"
    bdd.dump(str(path), [u, ~u])
    m0 = BddClassifier.from_dd_json(path, classes=["no", "yes"])
    m1 = BddClassifier.from_dd_json(path, root=1, classes=["no", "yes"])
    for bits in itertools.product([0, 1], repeat=4):
        a, b_, c, d = bits
        truth = (a and not b_) or (c != d)
        assert m0.predict(list(bits)) == ("yes" if truth else "no")
        assert m1.predict(list(bits)) == ("no" if truth else "yes")
    with pytest.raises(kcxai.InvalidInputError, match="'root' must be an index into the 2 roots"):
        BddClassifier.from_dd_json(path, root=2)


def test_variables_choose_the_features_and_constants_work():
    import dd.autoref

    bdd = dd.autoref.BDD()
    bdd.declare("x", "y", "z")
    u = bdd.add_expr(r"z /\ x")
    m = BddClassifier.from_dd(u, variables=["z", "x", "w"], distribution=[[1, 3], None, None])
    assert m.space.names == ("z", "x", "w") and not m.space.is_uniform
    assert m.predict([1, 1, 0]) == 1 and m.predict([1, 0, 1]) == 0
    with pytest.raises(kcxai.InvalidInputError, match=r"must include the support of 'u'; missing \['z'\]"):
        BddClassifier.from_dd(u, variables=["x", "y"])
    t = BddClassifier.from_dd(bdd.true)
    assert t.root == 1 and t.n_nodes == 0 and t.predict([0, 0, 0]) == 1
    b = TruthTableBuilder(t.space)
    b.check_partition(t.build(b), t.predict_point)


def test_node_table_errors():
    space = FeatureSpace([Feature.categorical("a", [0, 1]), Feature.categorical("b", ["n", "y"])])
    BddClassifier(space, [0, 1], [(0, 0, 1), (1, 2, 1)], 3)
    with pytest.raises(kcxai.InvalidInputError, match="children must be 0, 1 or a smaller node id"):
        BddClassifier(space, [0, 1], [(0, 0, 2)], 2)
    with pytest.raises(kcxai.InvalidInputError, match="feature 5 is not a feature index"):
        BddClassifier(space, [0, 1], [(5, 0, 1)], 2)
    with pytest.raises(kcxai.InvalidInputError, match="'root' must be 0, 1 or a node id up to 2"):
        BddClassifier(space, [0, 1], [(0, 0, 1)], 3)
    with pytest.raises(kcxai.InvalidInputError, match="two classes"):
        BddClassifier(space, [0, 1, 2], [(0, 0, 1)], 2)
    with pytest.raises(kcxai.InvalidInputError, match="feature 'c' has 3"):
        BddClassifier(FeatureSpace([Feature.categorical("c", [0, 1, 2])]), [0, 1], [], 0)
    with pytest.raises(kcxai.InvalidTypeError, match="dd BDD function"):
        BddClassifier.from_dd("x")
    good = BddClassifier(space, [0, 1], [(0, 0, 1)], 2).to_dict()
    with pytest.raises(kcxai.ModelFormatError, match="Malformed bdd model"):
        kcxai.models.model_from_dict({**good, "nodes": [[0, 0, 3]]})


@given(bdd_models(distributions=("exact",)), st.data())
def test_with_distribution_keeps_the_function(model, data):
    uni = model.with_distribution(None)
    for p in ref.all_points(model.space):
        assert uni.predict_point(p) == model.predict_point(p)


def test_dd_json_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"roots": [1]}')
    with pytest.raises(kcxai.ModelFormatError, match="not a BDD in dd's JSON format"):
        BddClassifier.from_dd_json(bad)


def test_dd_json_refuses_pickles_and_named_roots(tmp_path):
    """dd's load() unpickles files named *.p: kcxai reads *.json only, and only a list of roots."""
    import pickle

    import dd.autoref

    bdd = dd.autoref.BDD()
    bdd.declare("a", "b")
    u = bdd.add_expr(r"a /\ ~b")
    good = tmp_path / "f.json"
    bdd.dump(str(good), [u])
    assert BddClassifier.from_dd_json(good).predict([1, 0]) == 1
    for name in ("f.p", "f.pickle"):
        other = tmp_path / name
        other.write_bytes(good.read_bytes() if name == "f.p" else pickle.dumps({"level_of_var": {}}))
        with pytest.raises(kcxai.ModelFormatError, match=r"must be a dd JSON file, named \*\.json"):
            BddClassifier.from_dd_json(other)
    named = tmp_path / "named.json"
    bdd.dump(str(named), {"u": u})
    with pytest.raises(kcxai.ModelFormatError, match="names its roots"):
        BddClassifier.from_dd_json(named)
