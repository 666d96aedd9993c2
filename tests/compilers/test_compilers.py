"""One conformance suite for every language (dt, sdd, obdd, brute), against brute-force enumeration.

Random trees over random spaces (multi-valued categorical and numeric features, 2-3 classes,
uniform, exact non-uniform and float distributions): every oracle answer (``disagree_weight``,
and the sessions' ``weight`` / ``weight_if_freed`` / ``free`` sequences) equals brute force, and
``min_idrs`` gives the same set, error and precision in every language for the same order.
Then the running example in every language, the compiled models' predictions, option variants
of the SDD and OBDD compilers, the compile guards and the language/option errors.
"""

from fractions import Fraction

import pytest
from tests._support import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st
from tests._support.strategies import deltas, instance_of, points, tree_and_instance, trees

import kcxai
from kcxai.engines import LANGUAGES
from tests._support.languages import EXACT
from tests._support.paths import REPO

ALL = EXACT
#: Option variants of the diagram compilers (the defaults are covered by ALL).
VARIANTS = [
    ("sdd", {"vtree": "right", "encoding": "onehot"}),
    ("sdd", {"encoding": "order"}),
    ("sdd", {"vtree": "left", "order": "index", "encoding": "order"}),
    ("obdd", {"backend": "autoref"}),
    ("obdd", {"reorder": True, "encoding": "onehot"}),
    ("sdd", {"order": "dfs"}),
    ("obdd", {"reorder": False, "order": "index", "encoding": "order"}),
]
V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


def _check_oracle(oracle, brute, space, data, n_sets=4):
    n = space.n_features
    for _ in range(n_sets):
        p = data.draw(points(space))
        label = data.draw(st.integers(0, brute.n_classes - 1))
        s = frozenset(data.draw(st.sets(st.integers(0, n - 1))))
        got, want = oracle.disagree_weight(p, label, s), brute.disagree_weight(p, label, s)
        assert ref.close(got, want), (p, label, s, got, want)
        if space.is_exact:
            assert type(got) is int


def _check_session(oracle, brute, space, data):
    n = space.n_features
    p = data.draw(points(space))
    label = data.draw(st.integers(0, brute.n_classes - 1))
    s = set(data.draw(st.sets(st.integers(0, n - 1))))
    session = oracle.session(p, label, frozenset(s))
    for _ in range(data.draw(st.integers(1, 2 * n + 2))):
        op = data.draw(st.sampled_from(["weight", "if_freed", "free"]))
        i = data.draw(st.integers(0, n - 1))
        if op == "weight":
            assert ref.close(session.weight(), brute.disagree_weight(p, label, frozenset(s)))
        elif op == "if_freed":
            assert ref.close(session.weight_if_freed(i), brute.disagree_weight(p, label, frozenset(s - {i})))
        else:
            session.free(i)
            s.discard(i)
        assert session.fixed == frozenset(s)


@pytest.mark.parametrize("language", ALL)
@given(tree=trees(distributions=("uniform", "exact", "float", "mixture", "float_mixture")), data=st.data())
def test_oracle_equals_brute_force(language, tree, data):
    compiled = kcxai.compile_model(tree, language)
    brute = kcxai.compile_model(tree, "brute").oracle
    assert compiled.language == compiled.oracle.language == language
    assert compiled.oracle.n_classes == len(tree.classes)
    _check_oracle(compiled.oracle, brute, tree.space, data)
    _check_session(compiled.oracle, brute, tree.space, data)


@pytest.mark.parametrize("language, options", VARIANTS, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(VARIANTS)])
@settings(max_examples=25)
@given(tree=trees(distributions=("uniform", "exact", "float", "mixture", "float_mixture")), data=st.data())
def test_option_variants_equal_brute_force(language, options, tree, data):
    compiled = kcxai.compile_model(tree, language, **options)
    brute = kcxai.compile_model(tree, "brute").oracle
    _check_oracle(compiled.oracle, brute, tree.space, data, n_sets=2)
    _check_session(compiled.oracle, brute, tree.space, data)
    for p in ref.all_points(tree.space)[:50]:
        assert compiled.oracle.predict_point(p) == tree.predict_point(p)


@given(ti=tree_and_instance(), delta=deltas, data=st.data())
def test_min_idrs_is_the_same_in_every_language(ti, delta, data):
    tree, x = ti
    order = data.draw(st.permutations(range(tree.space.n_features)))
    start = data.draw(st.sampled_from([None, "path"]))
    results = {lang: kcxai.min_idrs(kcxai.compile_model(tree, lang), x, delta, order=order, start=start)
               for lang in ALL}
    assert len({(e.features, e.error, e.precision) for e in results.values()}) == 1, results
    assert {lang: e.language for lang, e in results.items()} == {lang: lang for lang in ALL}
    e = results["brute"]
    assert e.error == ref.error(tree, tree.space.encode(x), set(e.features))


@pytest.mark.parametrize("language", ["sdd", "obdd"])
@settings(max_examples=30)
@given(ti=tree_and_instance(distributions=("float",)), delta=deltas, data=st.data())
def test_min_idrs_in_float_spaces(language, ti, delta, data):
    """Float weights: a relevant, subset-minimal set whose error is within 1e-9 of brute force;
    delta = 0 gives exactly the brute-force set (an empty set of points weighs exactly 0.0)."""
    tree, x = ti
    point = tree.space.encode(x)
    order = data.draw(st.permutations(range(tree.space.n_features)))
    e = kcxai.min_idrs(kcxai.compile_model(tree, language), x, delta, order=order)
    assert isinstance(e.error, float)
    assert ref.close(e.error, ref.error(tree, point, set(e.features)))
    assert ref.error(tree, point, set(e.features)) <= float(delta) + 1e-9
    zero = kcxai.min_idrs(kcxai.compile_model(tree, language), x, 0, order=order)
    assert zero.features == kcxai.min_idrs(kcxai.compile_model(tree, "brute"), x, 0, order=order).features
    assert zero.error == 0.0


@pytest.mark.parametrize("language", ALL)
@settings(max_examples=20)
@given(tree=trees(distributions=("uniform", "exact", "float")))
def test_compiled_predict_equals_model_predict(language, tree):
    compiled = kcxai.compile_model(tree, language)
    for p in ref.all_points(tree.space):
        assert compiled.oracle.predict_point(p) == tree.predict_point(p)
        x = instance_of(tree.space, p)
        assert compiled.predict(x) == tree.predict(x)


# -- the running example in every language -------------------------------------

@pytest.fixture(scope="module")
def running():
    return kcxai.datasets.running_example_tree()


@pytest.mark.parametrize("language", ALL)
def test_running_example_table3(running, language):
    compiled = kcxai.compile_model(running, language)
    # Table 3 with the definition's values: the set after each try, and the decisions
    trace = [(0, {1, 2, 3, 8}, Fraction(1, 32), "keep"), (1, {0, 2, 3, 8}, Fraction(1, 256), "drop"),
             (2, {0, 3, 8}, Fraction(1, 128), "drop"), (3, {0, 8}, Fraction(7, 512), "drop"),
             (8, {0}, Fraction(15, 256), "keep")]
    total = running.space.total_weight
    session = compiled.oracle.session(V, 1, frozenset({0, 1, 2, 3, 8}))
    assert session.weight() == 0
    for i, _, err, decision in trace:
        assert Fraction(session.weight_if_freed(i), total) == err
        if decision == "drop":
            session.free(i)
    assert session.fixed == {0, 8}
    for _, s, err, _ in trace:
        assert kcxai.idrs_error(compiled, V, s) == err
    e = kcxai.min_idrs(compiled, V, 0.03, start="path", order=[0, 1, 2, 3, 8])
    assert (e.features, e.error, e.language) == ((0, 8), Fraction(7, 512), language)
    assert kcxai.min_idrs(compiled, V, 0).features == (0, 1, 2, 7, 8)


# -- stats -------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["sdd", "obdd"])
def test_stats(running, language):
    c = kcxai.compile_model(running, language)
    for key in ("size", "nodes", "edges", "variables", "compile_seconds", "counting_nodes", "order"):
        assert key in c.stats
    assert c.stats["variables"] == 9 and c.stats["size"] > 0 and c.stats["compile_seconds"] >= 0
    assert c.backend in (("pysdd",) if language == "sdd" else ("dd.cudd", "dd.autoref"))
    assert language in str(c) and "<table>" in c._repr_html_()


def test_obdd_backends_agree(running):
    pytest.importorskip("dd.cudd")
    a = kcxai.compile_model(running, "obdd")
    b = kcxai.compile_model(running, "obdd", backend="autoref")
    assert (a.backend, b.backend) == ("dd.cudd", "dd.autoref")
    assert b.stats["sifting"] is False and a.stats["sifting_while_building"] is True
    assert kcxai.compile_model(running, "sdd").stats["order_from_obdd"] is True
    for s in [set(), {0}, {0, 8}, {1, 2, 3}]:
        assert a.oracle.disagree_weight(V, 1, frozenset(s)) == b.oracle.disagree_weight(V, 1, frozenset(s))


# -- guards ----------------------------------------------------------------------

@pytest.mark.parametrize("language", ["sdd", "obdd"])
def test_max_nodes_guard(running, language):
    with pytest.raises(kcxai.CompilationLimitError, match=r"exceeded max_nodes=3"):
        kcxai.compile_model(running, language, max_nodes=3)


@pytest.mark.parametrize("language", ["sdd", "obdd"])
def test_max_seconds_guard(running, language):
    with pytest.raises(kcxai.CompilationLimitError, match=r"exceeded max_seconds=1e-09"):
        kcxai.compile_model(running, language, max_seconds=1e-9)


def test_guard_during_a_large_build():
    """The limit stops a build that keeps growing (checked between operations)."""
    import random

    from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, Split

    rng = random.Random(5)
    space = FeatureSpace([Feature.numeric(f"x{i}", [float(t) for t in range(40)]) for i in range(12)])

    def grow(depth):
        if depth == 0:
            return Leaf(rng.randint(0, 2))
        return Split.threshold(f"x{rng.randrange(12)}", float(rng.randrange(40)), grow(depth - 1), grow(depth - 1))

    tree = DecisionTree(space, [0, 1, 2], grow(11))
    for language in ("sdd", "obdd"):
        with pytest.raises(kcxai.CompilationLimitError, match="max_nodes=2000") as info:
            kcxai.compile_model(tree, language, max_nodes=2000, order="index")
        assert "'order'" in str(info.value) and "'dt'" in str(info.value)


# -- errors --------------------------------------------------------------------

def test_unknown_language(running):
    known = r"\['bounded', 'brute', 'ddnnf', 'dt', 'obdd', 'sampling', 'sat', 'sdd', 'search'\]"
    with pytest.raises(kcxai.UnknownLanguageError, match=r"Unknown language 'zdd'.*" + known):
        kcxai.compile_model(running, "zdd")


def test_unavailable_language(running, monkeypatch):
    import dataclasses

    monkeypatch.setitem(LANGUAGES, "sdd", dataclasses.replace(LANGUAGES["sdd"], package="no_such_package_kcxai"))
    with pytest.raises(kcxai.MissingDependencyError, match=r"pip install pysdd"):
        kcxai.compile_model(running, "sdd")
    assert kcxai.available_languages()["sdd"] is False


def test_dt_needs_a_tree():
    from kcxai import DecisionList, Feature, FeatureSpace

    space = FeatureSpace([Feature.categorical("a", [0, 1])])
    model = DecisionList(space, ["n", "y"], [([("a", [1])], "y")], "n")
    with pytest.raises(kcxai.InvalidTypeError, match="'dt' language does not compile DecisionList models"):
        kcxai.compile_model(model, "dt")
    for language in ("sdd", "obdd"):
        c = kcxai.compile_model(model, language)
        assert [c.predict([0]), c.predict([1])] == ["n", "y"]


@pytest.mark.parametrize("language, options, message", [
    ("sdd", {"vtre": "balanced"}, r"Unknown option\(s\) \['vtre'\] for the 'sdd' language; its options are"),
    ("obdd", {"vtree": "balanced"}, r"Unknown option\(s\) \['vtree'\] for the 'obdd'"),
    ("sdd", {"vtree": "random"}, r"'vtree' must be one of \['auto', 'balanced', 'right', 'left'\]. Got 'random'"),
    ("sdd", {"encoding": "gray"}, r"'encoding' must be one of \['auto', 'order', 'onehot', 'log'\]. Got 'gray'"),
    ("obdd", {"max_nodes": 0}, r"'max_nodes' must be a positive int or None. Got 0"),
    ("obdd", {"max_nodes": 2.5}, r"'max_nodes' must be a positive int"),
    ("sdd", {"max_seconds": -1}, r"'max_seconds' must be a positive number or None. Got -1"),
    ("obdd", {"backend": "buddy"}, r"'backend' must be 'auto', 'cudd' or 'autoref'. Got 'buddy'"),
    ("obdd", {"reorder": "sift"}, r"'reorder' must be None, True, False or 'dynamic'. Got 'sift'"),
    ("obdd", {"backend": "autoref", "reorder": True}, r"'reorder'=True needs the CUDD backend"),
    ("sdd", {"order": "random"}, r"'order' must be 'auto', 'dfs', 'index' or a sequence of all the features"),
    ("obdd", {"order": [0, 1]}, r"'order' must list every feature exactly once \(9 features\). Missing \['x3'"),
    ("obdd", {"order": [0, 0, 1, 2, 3, 4, 5, 6, 7]}, r"repeated \['x1'\]"),
    ("sdd", {"order": ["x1", "nope"]}, r"Unknown feature 'nope'"),
    ("sdd", {"order": 3}, r"'order' must be 'auto', 'dfs', 'index' or a sequence"),
])
def test_option_errors(running, language, options, message):
    wrong_type = options.get("order") == 3 or options.get("max_nodes") == 2.5  # a value of no accepted type
    with pytest.raises(kcxai.InvalidTypeError if wrong_type else kcxai.InvalidInputError, match=message):
        kcxai.compile_model(running, language, **options)


@pytest.mark.parametrize("language", ["sdd", "obdd"])
def test_explicit_orders(running, language):
    names = tuple(f"x{i}" for i in range(9, 0, -1))
    c = kcxai.compile_model(running, language, order=list(names), reorder=False) if language == "obdd" else \
        kcxai.compile_model(running, language, order=list(names))
    assert c.stats["order"] == names
    assert kcxai.min_idrs(c, V, 0.03, start="path").features == (0, 8)
    idx = kcxai.compile_model(running, language, order="index", **({"reorder": False} if language == "obdd" else {}))
    assert idx.stats["order"] == tuple(f"x{i}" for i in range(1, 10))


class _Broken(kcxai.DecisionTree):
    """A tree whose build returns overlapping class functions."""

    model_type = ""  # not registered for JSON (it would replace DecisionTree)

    def build(self, builder):
        return [builder.true() for _ in self.classes]


class _Short(kcxai.DecisionTree):
    model_type = ""

    def build(self, builder):
        return [builder.true()]


class _BadLiteral(kcxai.DecisionTree):
    model_type = ""

    def build(self, builder):
        return [builder.value_in(99, 1), builder.true()]


class _BadSwitch(kcxai.DecisionTree):
    model_type = ""

    def build(self, builder):
        return [builder.switch(0, [builder.true()]), builder.false()]


@pytest.mark.parametrize("language", ["sdd", "obdd"])
@pytest.mark.parametrize("cls, err, message", [
    (_Broken, kcxai.InvalidInputError, (r"must return class functions that partition feature space; "
                                        r"their weights sum to 1024, not to the total weight 512")),
    (_Short, kcxai.InvalidTypeError, r"_Short.build\(\) must return one function per class \(2\)"),
    (_BadLiteral, kcxai.InvalidInputError, r"value_in: 'feature' must be a feature index in \[0, 8\]. Got 99"),
    (_BadSwitch, kcxai.InvalidInputError, r"switch: feature 'x1' has 2 values, so 'cases' must have 2 entries"),
])
def test_bad_builds(running, language, cls, err, message):
    bad = object.__new__(cls)
    bad.__dict__.update(running.__dict__)
    with pytest.raises(err, match=message):
        kcxai.compile_model(bad, language)


def test_docs_compilers_python_blocks_run(capsys):
    import re

    text = (REPO / "docs" / "compilers.md").read_text(encoding="utf-8")
    code = re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)
    assert code
    namespace: dict = {"__name__": "compilers_md"}
    for k, block in enumerate(code):
        exec(compile(block, f"docs/compilers.md python block {k + 1}", "exec"), namespace)
    out = capsys.readouterr().out
    for language in ("dt", "sdd", "obdd"):
        assert re.search(rf"^{language} \S+ \('x1', 'x9'\) 7/512$", out, flags=re.M), out
