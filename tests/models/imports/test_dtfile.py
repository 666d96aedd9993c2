"""Decision trees: construction checks, .dt/.map files, scikit-learn import, JSON round trip."""

import json
import textwrap
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai import DecisionTree, Feature, FeatureSpace, Leaf, ModelFormatError, Split
from tests._support import reference as ref
from tests._support.strategies import instance_of, trees

EXAMPLE_DT = """\
5
1
I 1 2
T 3 4 5
3 T 0
4 T 1
5 T 1
1 f0 0 3
1 f0 1 2
2 f1 0 4
2 f1 1 5
2 f1 2 5
"""
EXAMPLE_MAP = "Categorical\n2\nf0 0 =no\nf0 1 =yes\nf1 0 =low\nf1 1 =mid\nf1 2 =high\n"


def write(tmp_path, dt, mp=EXAMPLE_MAP):
    (tmp_path / "t.dt").write_text(dt)
    (tmp_path / "t.map").write_text(mp)
    return tmp_path / "t.dt", tmp_path / "t.map"


def test_dt_example(tmp_path):
    tree = DecisionTree.from_dt(*write(tmp_path, EXAMPLE_DT))
    assert tree.space.names == ("f0", "f1")
    assert tree.space.domain_sizes == (2, 3)
    assert tree.classes == ("0", "1")
    assert [tree.predict([a, b]) for a in (0, 1) for b in (0, 1, 2)] == ["0"] * 3 + ["1"] * 3
    e = kcxai.min_idrs(tree, [1, 2], 0)
    assert e.features == (0,) and e.literals == ("f0 = yes",)
    assert kcxai.idrs_error(tree, [1, 2], []) == Fraction(1, 2)


def test_dt_comments_and_retested_features(tmp_path):
    # node 2 re-tests f0, listing the whole domain again (IAI style); comments anywhere
    dt = textwrap.dedent("""\
        # a tree
        5
        1
        I 1 2
        T 3 4 5
        3 T a
        # leaves
        4 T b
        5 T a
        1 f0 0 3
        1 f0 1 2
        1 f0 2 2
        2 f0 0 4
        2 f0 1 4
        2 f0 2 5
        """)
    mp = "# map\nCategorical\n1\nf0 0 =x\nf0 1 =y\nf0 2 =z\nf0 1 !=y\n"
    tree = DecisionTree.from_dt(*write(tmp_path, dt, mp))
    assert [tree.predict([v]) for v in (0, 1, 2)] == ["a", "b", "a"]
    assert [p.masks for p in tree.paths if p.label == 1] == [((0, 0b010),)]


@pytest.mark.parametrize("dt, match", [
    (EXAMPLE_DT.replace("5\n1\n", "6\n1\n", 1), "header says 6 nodes"),
    (EXAMPLE_DT.replace("2 f1 2 5\n", ""), "no branch for the values"),
    (EXAMPLE_DT.replace("2 f1 2 5", "2 f1 2 4\n2 f1 2 5"), "down more than one branch"),
    (EXAMPLE_DT.replace("5 T 1\n", ""), "leaf 5 has no class"),
    (EXAMPLE_DT.replace("1 f0 1 2", "1 f0 7 2"), "value 7 of f0 is not in its domain"),
    (EXAMPLE_DT.replace("1 f0 1 2", "1 fx 1 2"), "expected a feature"),
    (EXAMPLE_DT.replace("1 f0 1 2", "1 f1 1 2"), "tests both f0 and f1"),
    (EXAMPLE_DT.replace("1 f0 1 2", "1 f0 1 9"), "child 9 is not among"),
    (EXAMPLE_DT.replace("I 1 2", "X 1 2"), "expected the line of internal nodes"),
    ("3\n", "too short"),
])
def test_dt_malformed(tmp_path, dt, match):
    with pytest.raises(ModelFormatError, match=match):
        DecisionTree.from_dt(*write(tmp_path, dt))


@pytest.mark.parametrize("mp, match", [
    ("OHE\n2\n", "only 'Categorical' maps"),
    ("Categorical\nx\n", "must be an integer"),
    ("Categorical\n2\nf0 0 =no\nf0 1 =yes\n", "f1 has no values"),
    ("Categorical\n1\nf0 0 no\n", "must start with '=' or '!='"),
    ("Categorical\n100000000\nf0 0 =a\n", "declares 100000000 features but has only 1 value lines"),
    ("Categorical\n1\nf\u00b2 0 =a\n", "expected a feature like 'f3'"),
    ("Categorical\n1\nf0 \u00b2 =a\n", "a tree value must be an integer"),
    ("Categorical\n1\nf0 " + "9" * 5000 + " =a\n", "at most 18 digits"),
])
def test_map_malformed(tmp_path, mp, match):
    with pytest.raises(ModelFormatError, match=match):
        DecisionTree.from_dt(*write(tmp_path, EXAMPLE_DT, mp))


@pytest.mark.parametrize("name, nodes, depth", [("IAI12", 849, 12), ("IAI14", 1241, 14), ("SKL14", 1369, 14)])
def test_reference_trees(name, nodes, depth):
    tree = kcxai.datasets.reference_tree(name)
    assert (tree.n_nodes, tree.depth, tree.n_leaves) == (nodes, depth, len(tree.paths))
    assert tree.space.domain_sizes == (4, 9, 7, 4, 9, 6, 5, 2, 3, 3, 3, 11)
    X = kcxai.datasets.reference_instances(name)
    for x in X[:40]:
        e = kcxai.min_idrs(tree, x, 0, start="path")
        assert e.error == 0 and kcxai.is_min_idrs(tree, x, e.features, 0)
        # the pruned traversal agrees with the paper's path formula, sum of ||R_j|| over other-class paths
        point = tree.space.encode(x)
        for s in (set(e.features), set(range(0, 12, 2)), {1, 4}):
            assert kcxai.idrs_error(tree, x, s) == path_formula_error(tree, point, s)


def path_formula_error(tree, point, fixed):
    """Pr(kappa != c, x_S = v_S) as the sum over other-class paths of prod_f d_f / |D_f| (uniform)."""
    c = tree.predict_point(point)
    total = Fraction(0)
    for p in tree.paths:
        if p.label == c:
            continue
        masks = dict(p.masks)
        prob = Fraction(1)
        for f, size in enumerate(tree.space.domain_sizes):
            m = masks.get(f, (1 << size) - 1)
            prob *= Fraction(int(m >> point[f] & 1) if f in fixed else bin(m).count("1"), size)
        total += prob
    return total


def test_constructor_errors():
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2]), Feature.numeric("b", [1.0])])
    with pytest.raises(ModelFormatError, match="no branch for the values \\[2\\]"):
        DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Leaf(1)}))
    with pytest.raises(kcxai.InvalidInputError, match="Unknown class 7"):
        DecisionTree(space, [0, 1], Leaf(7))
    with pytest.raises(kcxai.InvalidInputError, match="Unknown feature 'zz'"):
        DecisionTree(space, [0, 1], Split("zz", {0: Leaf(0)}))
    with pytest.raises(kcxai.InvalidInputError, match="cuts the interval"):
        DecisionTree(space, [0, 1], Split.threshold("b", 0.5, Leaf(0), Leaf(1)))
    with pytest.raises(kcxai.InvalidTypeError, match="must be a Leaf or Split"):
        DecisionTree(space, [0, 1], Split("a", {0: "x", 1: Leaf(0), 2: Leaf(1)}))
    t = DecisionTree(space, ["n", "y"], Split.threshold("b", 1.0, Leaf("n"), Leaf("y")))
    assert [t.predict([0, b]) for b in (-3, 1.0, 1.5)] == ["n", "n", "y"]
    assert kcxai.min_idrs(t, [0, 2.0], 0).literals == ("b > 1",)


@settings(max_examples=30)
@given(trees(distributions=("uniform", "exact", "float")))
def test_json_round_trip(tree):
    back = kcxai.models.model_from_dict(json.loads(tree.to_json()))
    assert back.space == tree.space and back.classes == tree.classes
    for p in ref.all_points(tree.space):
        assert back.predict_point(p) == tree.predict_point(p)


def test_json_file_and_errors(tmp_path):
    tree = kcxai.datasets.running_example_tree(distribution=[[Fraction(1, 3), Fraction(2, 3)]] + [None] * 8)
    tree.save(tmp_path / "m.json")
    back = kcxai.load_model(tmp_path / "m.json")
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    assert kcxai.idrs_error(back, v, [0, 8]) == kcxai.idrs_error(tree, v, [0, 8])
    d = tree.to_dict()
    assert d["format"] == "kcxai-model" and d["version"] == 1 and d["type"] == "decision_tree"
    for bad, match in [({**d, "version": 99}, "Unsupported kcxai model version 99"),
                       ({**d, "format": "x"}, "Not a kcxai model"),
                       ({**d, "type": "nope"}, "Unknown model type 'nope'"),
                       ({**d, "nodes": [{"feature": 0, "branches": [[[0, 5], 1]]}]},
                        "a value index of feature 0 .* Got 5"),
                       ({**d, "nodes": [{"class": 0.5}]}, "'class' \\(a class index\\) must be an integer"),
                       ({**d, "root": True}, "'root' must be an integer"),
                       ({**d, "nodes": [{"feature": 0, "branches": [[[0], 1, 2]]}]}, "a branch must be")]:
        with pytest.raises(ModelFormatError, match=match):
            kcxai.models.model_from_dict(bad)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        kcxai.load_model(tmp_path / "bad.json")


@settings(max_examples=25)
@given(st.integers(0, 10**6), st.integers(2, 3), st.integers(2, 4), st.booleans())
def test_sklearn_import_matches_predict(seed, n_classes, n_values, with_domains):
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(seed)
    n_features = 4
    X = rng.integers(0, n_values, size=(60, n_features)).astype(float)
    y = rng.integers(0, n_classes, size=60)
    clf = DecisionTreeClassifier(random_state=seed, max_depth=int(rng.integers(1, 6))).fit(X, y)
    domains = [list(range(n_values))] * n_features if with_domains else None
    tree = DecisionTree.from_sklearn(clf, domains=domains)
    assert tree.classes == tuple(clf.classes_.tolist())
    if with_domains:
        grid = np.array(ref.all_points(tree.space), dtype=float)
    else:  # a representative number inside every interval
        grid = np.array([instance_of(tree.space, p) for p in ref.all_points(tree.space)], dtype=float)
    assert tree.predict_many(grid) == clf.predict(grid).tolist()
    assert tree.n_nodes == clf.tree_.node_count


def test_sklearn_import_errors():
    from sklearn.tree import DecisionTreeClassifier

    with pytest.raises(kcxai.InvalidTypeError, match="DecisionTreeClassifier"):
        DecisionTree.from_sklearn(object())
    with pytest.raises(kcxai.InvalidInputError, match="not fitted"):
        DecisionTree.from_sklearn(DecisionTreeClassifier())
    clf = DecisionTreeClassifier().fit([[0, 1], [1, 0]], [0, 1])
    with pytest.raises(kcxai.InvalidInputError, match="'domains' must have 2 entries"):
        DecisionTree.from_sklearn(clf, domains=[[0, 1]])
    with pytest.raises(kcxai.InvalidInputError, match="'feature_names' must have 2 names"):
        DecisionTree.from_sklearn(clf, feature_names=["a"])
    tree = DecisionTree.from_sklearn(clf, feature_names=["a", "b"])
    assert tree.space.names == ("a", "b")


@settings(max_examples=20)
@given(st.integers(0, 10**6))
def test_sklearn_import_float_data_matches_predict(seed):
    # thresholds are float32 midpoints: kcxai must round inputs to float32 as scikit-learn does
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(seed)
    X = rng.random((80, 3))
    y = rng.integers(0, 3, size=80)
    clf = DecisionTreeClassifier(random_state=seed).fit(X, y)
    tree = DecisionTree.from_sklearn(clf)
    probe = np.concatenate([X, rng.random((200, 3))])
    ts = sorted({float(t) for t in clf.tree_.threshold if t != -2})
    probe = np.concatenate([probe, np.array([[t, t, t] for t in ts]), np.array([[np.nextafter(t, 2)] * 3 for t in ts])])
    assert tree.predict_many(probe) == clf.predict(probe).tolist()
    back = kcxai.models.model_from_dict(json.loads(tree.to_json()))
    assert back.predict_many(probe) == clf.predict(probe).tolist()


def test_eighty_boolean_features_exact():
    # a chain x0 & x1 & ... & x79 -> class 1; error(S) = 2^-|S| - 2^-80 for the all-ones instance
    space = FeatureSpace([Feature.categorical(f"x{i}", [0, 1]) for i in range(80)])
    node = Leaf(1)
    for i in reversed(range(80)):
        node = Split(f"x{i}", {0: Leaf(0), 1: node})
    tree = DecisionTree(space, [0, 1], node)
    v = [1] * 80
    for k in (0, 1, 40, 79, 80):
        assert kcxai.idrs_error(tree, v, range(k)) == Fraction(1, 2**k) - Fraction(1, 2**80)
    e = kcxai.min_idrs(tree, v, Fraction(1, 2**70))
    assert e.features == tuple(range(10, 80)) and e.error == Fraction(1, 2**70) - Fraction(1, 2**80)


def test_unreachable_and_strict_values(tmp_path):
    dt = EXAMPLE_DT.replace("5\n1\n", "6\n1\n", 1).replace("T 3 4 5", "T 3 4 5 9").replace("5 T 1\n", "5 T 1\n9 T 0\n")
    with pytest.raises(ModelFormatError, match="node 9 is not reachable from the root"):
        DecisionTree.from_dt(*write(tmp_path, dt))
    space = FeatureSpace([Feature.categorical("a", [0, 1])])
    tree = DecisionTree(space, [0, 1], Split("a", {0: Leaf(0), 1: Leaf(1)}))
    with pytest.raises(kcxai.InvalidInputError, match="Got True"):
        tree.predict([True])
    with pytest.raises(kcxai.InvalidInputError, match="Unknown class True"):
        DecisionTree(space, [0, 1], Leaf(True))
    with pytest.raises(kcxai.InvalidTypeError, match="Split branches at root must be a mapping"):
        DecisionTree(space, [0, 1], Split("a", 5))
    with pytest.raises(ModelFormatError, match="the node at root / a = 0 .* no branch"):
        DecisionTree(space, [0, 1], Split("a", {0: Split("a", {1: Leaf(0)}), 1: Leaf(1)}))


def test_series_like_instances_are_read_by_label():
    class Row:  # what pandas.Series offers: labelled values
        def __init__(self, d):
            self.d = d

        def keys(self):
            return list(self.d)

        def tolist(self):
            return list(self.d.values())

        def __getitem__(self, k):
            return self.d[k]

    tree = kcxai.datasets.running_example_tree()
    v = dict(zip([f"x{i}" for i in range(9, 0, -1)], (1, 0, 0, 0, 0, 1, 1, 1, 1)))  # x9 first
    assert kcxai.min_idrs(tree, Row(v), 0).features == (0, 1, 2, 7, 8)


def _threshold_chain(depth: int, n_features: int = 1) -> DecisionTree:
    """A chain ``depth`` tests deep: node k tests feature k % n_features <= k // n_features."""
    per = depth // n_features + 1
    space = FeatureSpace([Feature.numeric(f"x{i}", [float(t) for t in range(per)]) for i in range(n_features)])
    feat, label, branches = [], [], []
    for k in range(depth):
        left = (1 << (k // n_features + 1)) - 1
        feat += [k % n_features, -1]
        label += [-1, k % 2]
        branches += [((left, 2 * k + 1), (((1 << (per + 1)) - 1) ^ left, 2 * k + 2)), ()]
    feat.append(-1)
    label.append(1)
    branches.append(())
    return DecisionTree._from_arrays(space, [0, 1], feat, label, branches)


def test_deep_chains_convert_without_recursion_and_json_stays_linear():
    tree = _threshold_chain(3000)
    assert tree.depth == 3000
    root = tree.to_root()  # recursed before: RecursionError from depth ~1,000
    node, depth = root, 0
    while isinstance(node, Split):
        (values, leaf), (_, node) = node.branches
        assert isinstance(leaf, Leaf) and len(values) == depth + 1
        depth += 1
    assert depth == 3000 and node == Leaf(1)
    text = tree.to_json()  # value runs are [first, last] pairs: one per branch, not thousands of indices
    assert len(text) < 120 * tree.n_nodes
    back = kcxai.models.model_from_dict(json.loads(text))
    assert back.to_json() == text
    for x in (-1.0, 0.5, 1499.5, 2999.0, 5000.0):
        assert back.predict([x]) == tree.predict([x])
    small = _threshold_chain(40)
    assert DecisionTree(small.space, [0, 1], small.to_root()).to_json() == small.to_json()


def test_json_value_runs():
    space = FeatureSpace([Feature.categorical("a", list(range(10)))])
    tree = DecisionTree(space, ["n", "y"], Split("a", [([0, 2, 3, 4, 5, 9], Leaf("y")), ([1, 6, 7, 8], Leaf("n"))]))
    nodes = tree.to_dict()["nodes"]
    assert nodes[0]["branches"] == [[[0, [2, 5], 9], 1], [[1, [6, 8]], 2]]
    d = tree.to_dict()
    d["nodes"][0]["branches"] = [[[0, 2, 3, 4, 5, 9], 1], [[1, 6, 7, 8], 2]]  # plain indices are read too
    assert kcxai.models.model_from_dict(d).to_dict() == tree.to_dict()
    for bad, match in [([[5, 2]], "needs first <= last"), ([[0, 10]], "Got \\[0, 10\\]"), ([[0, 1, 2]], "Got")]:
        d["nodes"][0]["branches"] = [[bad, 1], [[1, 6, 7, 8], 2]]
        with pytest.raises(ModelFormatError, match=match):
            kcxai.models.model_from_dict(d)


@pytest.mark.parametrize("text", ["-9223372036854775808", "1e5", '"a model"', "null", "true", "[1, 2]"])
def test_a_json_file_that_is_not_an_object_is_a_format_error(tmp_path, text):
    path = tmp_path / "m.json"
    path.write_text(text)
    with pytest.raises(kcxai.ModelFormatError, match="must be a JSON object"):
        kcxai.load_model(str(path))
