"""The ``ddnnf`` language: the CNF of every model family against enumeration, d-DNNF counting (smoothing,
conditioning, sessions) against brute force, and its limits and failures as named errors with nothing on
standard output. (The cross-language conformance suite holds it to brute force too, from the registry.)"""

from __future__ import annotations

import os
import sys
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pysat.solvers import Solver

import kcxai
from kcxai.compilers import _d4, ddnnf
from kcxai.engines import LANGUAGES
from kcxai.compilers._cnf import PAIRWISE_MAX, CnfBuilder, model_cnf
from kcxai.compilers._d4 import Dnnf, parse_nnf
from kcxai.compilers._dnnf_count import DnnfCircuit, DnnfOracle
from kcxai.compilers._limits import LimitHit
from tests._support import reference as ref
from tests._support.languages import MISSING_OPTIONAL
from tests._support.model_strategies import (bdd_models, boosted_models, decision_lists, forests, linear_models,
                                             naive_bayes_models, rule_sets)
from tests._support.strategies import DISTRIBUTIONS, points, trees

pytestmark = pytest.mark.skipif("ddnnf" in MISSING_OPTIONAL, reason="d4 (the d4 extra) is not installed")

FAMILIES = st.one_of(trees(distributions=DISTRIBUTIONS), decision_lists(distributions=DISTRIBUTIONS),
                     rule_sets(distributions=DISTRIBUTIONS), bdd_models(distributions=DISTRIBUTIONS),
                     linear_models(distributions=DISTRIBUTIONS), naive_bayes_models(distributions=DISTRIBUTIONS),
                     forests(distributions=DISTRIBUTIONS, max_trees=3), boosted_models(max_trees=3))


def _binary_space(n: int) -> kcxai.FeatureSpace:
    return kcxai.FeatureSpace([kcxai.Feature.categorical(f"b{i}", [0, 1]) for i in range(n)])


# -- the CNF --------------------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(model=FAMILIES, encoding=st.sampled_from(["auto", "onehot", "order", "log"]))
def test_cnf_models_are_the_points_with_their_class(model, encoding):
    """Every model of the CNF encodes one point, every point is one model, the class roots say the model's
    class and the value indicators the point's values."""
    space = model.space
    if space.size > 300:
        return
    cnf = model_cnf(model, CnfBuilder(space, encoding))
    seen = set()
    mention = [[v, 1] for v in range(2, cnf.n_vars + 1)]  # true (variable 1 is): each variable in the solver
    with Solver(name="m22", bootstrap_with=[*cnf.clauses(), *mention]) as solver:
        for m in solver.enum_models():
            true = {x for x in m if x > 0} | {x for x in m if x < 0}
            point = tuple(next(k for k, lit in enumerate(ind) if lit in true) if ind else 0
                          for ind in cnf.indicators)
            for ind, k in zip(cnf.indicators, point):
                assert [lit in true for lit in ind] == [j == k for j in range(len(ind))]
            label = model.predict_point(point)
            assert [r in true for r in cnf.roots] == [c == label for c in range(len(cnf.roots))]
            assert [s in true for s in cnf.selectors] == [c == label for c in range(len(cnf.roots))]
            assert point not in seen
            seen.add(point)
    assert len(seen) == space.size


def test_cnf_flattens_chains_and_numbers_without_gaps():
    space = _binary_space(6)
    b = CnfBuilder(space)
    f = b.false()
    for i in range(6):
        f = b.disj(f, b.value_in(i, 0b10))
    cnf = b.cnf([b.neg(f), f])
    assert any(len(ins) == 6 for _, _, ins in cnf.gates)  # one OR gate of 6 inputs, not 5 binary ones
    assert not any(len(ins) == 2 and all(abs(x) <= 7 for x in ins) for _, _, ins in cnf.gates)
    used = {abs(x) for cl in cnf.clauses() for x in cl}
    assert used == set(range(1, cnf.n_vars + 1))


def test_large_one_hot_features_get_a_ladder():
    feats = [kcxai.Feature.categorical("x", list(range(PAIRWISE_MAX + 4)))]
    space = kcxai.FeatureSpace(feats)
    b = CnfBuilder(space)
    cnf = b.cnf([b.value_in(0, 1), b.neg(b.value_in(0, 1))])
    assert len(cnf.constraints) < space.size * (space.size - 1) // 2  # a ladder, not pairwise
    with Solver(name="m22", bootstrap_with=list(cnf.clauses())) as solver:
        assert sum(1 for _ in solver.enum_models()) == space.size


# -- counting on a d-DNNF --------------------------------------------------------------------------------


def test_counting_smooths_what_an_or_edge_leaves_free():
    """Class 1 is ``a = 1 or b = 1`` over two binary features (selector 5), class 0 the rest (selector 4); the
    d-DNNF is written by hand: the edge with ``a = 1`` leaves ``b`` free."""
    space = kcxai.FeatureSpace([kcxai.Feature.categorical("a", [0, 1]), kcxai.Feature.categorical("b", [0, 1])],
                               distribution=[[1, 2], [3, 5]])
    nnf = parse_nnf("o 1 0\nt 2 0\n1 2 2 5 -4 0\n1 2 -2 3 5 -4 0\n1 2 -2 -3 4 -5 0\n", 5)
    circuit = DnnfCircuit(Dnnf(*nnf, 5, {}), ((-2, 2), (-3, 3)), (4, 5))
    oracle = DnnfOracle(space, circuit, space.distribution.components[0][1])
    full = oracle.masks((0, 0), ())
    # class 1: 2 * (3 + 5) + 1 * 5 = 21 of the total 3 * 8 = 24
    assert oracle.class_count(full, [1]) == 21 and oracle.class_count(full, [0]) == 3
    assert oracle.class_count(full, [0, 1]) == 24
    assert oracle.disagree_weight((1, 0), 1, frozenset({1})) == 1 * 3  # b = 0: only a = 0 disagrees
    assert circuit.unit_count() == 4
    s = oracle.session((1, 1), 0, frozenset({0, 1}))
    assert s.weight() == 2 * 5 and s.weight_if_freed(0) == 3 * 5 and s.weight_if_freed(1) == 2 * 8


@pytest.mark.parametrize("text", ["o 1 0\nt 2 0\n1 3 0\n", "x 1 0\n", "o 1 0\nt 2 0\n1 2 9 0\n",
                                  "o 1 0\no 2 0\n1 2 0\n2 1 0\n", "o 1 0\nt 2 0\n"])
def test_malformed_nnf_is_a_backend_error(text):
    with pytest.raises(kcxai.BackendError, match="d4"):
        parse_nnf(text, 3)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_sessions_and_boxes_equal_brute_force(data):
    """Every order of freeing (each answer and each committed state), box weights, predictions."""
    model = data.draw(FAMILIES)
    if model.space.size > 2000:
        return
    c = kcxai.compile_model(model, "ddnnf", remove_gates=data.draw(st.booleans()))
    b = kcxai.compile_model(model, "brute")
    space = model.space
    p = data.draw(points(space))
    assert c.oracle.predict_point(p) == model.predict_point(p)
    label = data.draw(st.integers(0, len(model.classes) - 1))
    fixed = frozenset(range(space.n_features))
    s, sb = c.oracle.session(p, label, fixed), b.oracle.session(p, label, fixed)
    for i in data.draw(st.permutations(sorted(fixed))):
        assert ref.close(space.probability(s.weight_if_freed(i)), space.probability(sb.weight_if_freed(i)))
        if data.draw(st.booleans()):
            s.free(i)
            sb.free(i)
            assert s.fixed == sb.fixed
            assert ref.close(space.probability(s.weight()), space.probability(sb.weight()))
    box = tuple(data.draw(st.integers(1, (1 << f.size) - 1)) for f in space.features)
    got, want = c.oracle.box_weights(box, label), b.oracle.box_weights(box, label)
    assert all(ref.close(space.probability(x), space.probability(y)) for x, y in zip(got, want))


def test_exact_counts_past_64_bits():
    """80 binary features, a tree testing two: counts are exact Python ints beyond 2**64."""
    space = _binary_space(80)
    tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split("b3", {0: kcxai.Leaf(0), 1: kcxai.Split(
        "b70", {0: kcxai.Leaf(0), 1: kcxai.Leaf(1)})}))
    c = kcxai.compile_model(tree, "ddnnf")
    point = (1,) * 80
    w = c.oracle.disagree_weight(point, 1, frozenset())
    assert isinstance(w, int) and w == 3 * 2**78
    assert c.oracle.disagree_weight(point, 1, frozenset({3})) == 2**78


def test_explanations_and_stats():
    tree = kcxai.datasets.running_example_tree()
    c = kcxai.compile_model(tree, "ddnnf")
    e = kcxai.min_idrs(c, (1, 1, 1, 1, 0, 0, 0, 0, 1), Fraction(3, 100), start="path")
    assert (e.names, e.error, e.language) == (("x1", "x9"), Fraction(7, 512), "ddnnf")
    st_ = c.stats
    assert st_.size_unit == "d-DNNF nodes" and st_.size == st_["nodes"] > 0 and st_["edges"] > 0
    assert st_["cnf_clauses"] > 0 and st_["d4_version"]


# -- limits, failures, output -------------------------------------------------------------------------------


def test_nothing_reaches_standard_output(capfd):
    kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf")
    out, _ = capfd.readouterr()
    assert out == ""


@pytest.mark.parametrize("option, value", [("max_clauses", 50), ("max_variables", 30), ("max_nodes", 3)])
def test_size_limits_name_the_model_the_language_and_the_limit(option, value):
    tree = kcxai.datasets.running_example_tree()
    with pytest.raises(kcxai.CompilationLimitError) as info:
        kcxai.compile_model(tree, "ddnnf", **{option: value})
    msg = str(info.value)
    assert "DecisionTree (9 features, 2 classes)" in msg and "'ddnnf'" in msg and f"{option}={value}" in msg
    assert isinstance(info.value, LimitHit) and info.value.limit == option


def _fake_d4(tmp_path, body: str):
    """A child that records its process id, then runs ``body`` (in place of d4)."""
    child = tmp_path / "child.py"
    pid_file = tmp_path / "pid"
    child.write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n{body}\n")
    return child, pid_file


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("option, value, body", [
    ("max_seconds", 1, "time.sleep(60)"),
    ("max_memory", 64 << 20, "block = bytearray(512 << 20)\ntime.sleep(60)"),
])
def test_the_limits_kill_d4s_process(monkeypatch, tmp_path, option, value, body):
    child, pid_file = _fake_d4(tmp_path, body)
    monkeypatch.setattr(_d4, "_CHILD", child)
    want = rf"DecisionTree .*'ddnnf' exceeded {option}=.* while d4"
    with pytest.raises(kcxai.CompilationLimitError, match=want) as info:
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf", **{option: value})
    assert info.value.limit == option
    assert _gone(int(pid_file.read_text()))


def test_the_memory_limit_kills_d4():
    # d4's process alone (Python and d4's tables) is resident well beyond 1 MiB
    with pytest.raises(kcxai.CompilationLimitError, match=r"max_memory=1 MiB while d4") as info:
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf", max_memory=1 << 20)
    assert info.value.limit == "max_memory"


def test_a_failing_d4_is_a_backend_error(monkeypatch, tmp_path):
    child = tmp_path / "child.py"
    child.write_text("import sys\nprint('some d4 statistics')\nsys.stderr.write('d4 gave up')\nsys.exit(3)\n")
    monkeypatch.setattr(_d4, "_CHILD", child)
    with pytest.raises(kcxai.BackendError, match=r"d4 failed .*DecisionTree .*'ddnnf'.*exit status 3.*d4 gave up"):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf")


def test_a_missing_d4_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "py_d4", None)  # import py_d4 now raises ImportError
    with pytest.raises(kcxai.MissingDependencyError, match=r'pip install "kcxai\[d4\]"'):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf")
    monkeypatch.setattr(ddnnf.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(kcxai.MissingDependencyError, match="d4Solver"):
        ddnnf.compile(kcxai.datasets.running_example_tree())


def test_options_are_checked():
    assert set(LANGUAGES["ddnnf"].option_names()) == {"remove_gates", "max_clauses", "max_variables", "max_nodes",
                                                      "max_seconds", "max_memory"}
    with pytest.raises(kcxai.InvalidInputError, match="max_clauses"):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf", max_clauses=0)
    with pytest.raises(kcxai.InvalidInputError, match="max_seconds"):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "ddnnf", max_seconds=-1)
