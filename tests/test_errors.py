"""Bad input raises a clear error naming the argument, the expectation and what was got."""

from fractions import Fraction

import numpy as np
import pytest

import kcxai
from kcxai import Feature, FeatureSpace

V = (1, 1, 1, 1, 0, 0, 0, 0, 1)


@pytest.fixture(scope="module")
def tree():
    return kcxai.datasets.running_example_tree()


@pytest.mark.parametrize("instance, exc, match", [
    ((1, 1, 1), kcxai.InvalidInputError, "'instance' must have 9 values .* Got 3"),
    ((1, 1, 1, 1, 0, 0, 0, 0, 5), kcxai.InvalidInputError,
     "Feature 'x9' must take one of the values \\[0, 1\\]. Got 5"),
    ("110", kcxai.InvalidTypeError, "'instance' must be a sequence"),
    ({"x1": 1}, kcxai.InvalidInputError, "Missing"),
])
def test_bad_instance(tree, instance, exc, match):
    with pytest.raises(exc, match=match):
        kcxai.min_idrs(tree, instance, 0)


@pytest.mark.parametrize("delta, exc, match", [
    (1.5, kcxai.InvalidInputError, "'delta' must be in \\[0, 1\\]. Got 1.5"),
    (-0.1, kcxai.InvalidInputError, "'delta' must be in \\[0, 1\\]"),
    ("0.1", kcxai.InvalidTypeError, "'delta' must be a real number"),
    (True, kcxai.InvalidTypeError, "'delta' must be a real number"),
    (float("nan"), kcxai.InvalidInputError, "Got nan"),
])
def test_bad_delta(tree, delta, exc, match):
    with pytest.raises(exc, match=match):
        kcxai.min_idrs(tree, V, delta)


def test_errors_are_builtin_subclasses():
    assert issubclass(kcxai.InvalidInputError, ValueError)
    assert issubclass(kcxai.InvalidTypeError, TypeError)
    assert issubclass(kcxai.MissingDependencyError, ImportError)
    assert issubclass(kcxai.NotRelevantError, kcxai.KcxaiError)


def test_bad_features_order_start(tree):
    with pytest.raises(kcxai.InvalidInputError, match="Unknown feature 'x10'"):
        kcxai.idrs_error(tree, V, ["x10"])
    with pytest.raises(kcxai.InvalidInputError, match="Feature index must be in \\[0, 8\\]. Got 9"):
        kcxai.precision(tree, V, [9])
    with pytest.raises(kcxai.InvalidInputError, match="'order' must not repeat"):
        kcxai.min_idrs(tree, V, 0, order=[0, 0])
    with pytest.raises(kcxai.InvalidTypeError, match="'start' must be a collection"):
        kcxai.min_idrs(tree, V, 0, start=3)
    with pytest.raises(kcxai.InvalidTypeError, match="'obj' must be a kcxai model"):
        kcxai.min_idrs("tree", V, 0)


def test_accepted_forms(tree):
    # names, numpy rows, mappings, Fractions; float delta read as its decimal
    a = kcxai.min_idrs(tree, np.array(V), Fraction(3, 100), start="path", order=["x1", "x2", "x3", "x4", "x9"])
    b = kcxai.min_idrs(tree, {f"x{i + 1}": v for i, v in enumerate(V)}, 0.03, start="path")
    assert a.features == b.features == (0, 8) and b.delta == Fraction(3, 100)
    assert kcxai.idrs_error(tree, V, {"x1", "x9"}) == Fraction(7, 512)


def test_delta_exactly_at_the_error_is_relevant(tree):
    # error({x1, x9}) = 7/512 = 0.013671875 exactly; a decimal float bound equal to it counts as relevant
    assert kcxai.is_idrs(tree, V, [0, 8], 0.013671875)
    assert not kcxai.is_idrs(tree, V, [0, 8], Fraction(7, 512) - Fraction(1, 10**9))


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"distribution": [[1, 0]] + [None] * 8}, kcxai.InvalidInputError, "must be positive"),
    ({"distribution": [[1, 2, 3]] + [None] * 8}, kcxai.InvalidInputError, "one weight per value \\(2\\). Got 3"),
    ({"distribution": [[True, 1]] + [None] * 8}, kcxai.InvalidTypeError, "must be int, Fraction or float"),
    ({"distribution": [None] * 3}, kcxai.InvalidInputError, "one entry per feature \\(9\\). Got 3"),
    ({"distribution": {"zz": [1, 1]}}, kcxai.InvalidInputError, "unknown features \\['zz'\\]"),
])
def test_bad_distribution(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        kcxai.datasets.running_example_tree(**kwargs)


def test_feature_errors():
    with pytest.raises(kcxai.InvalidInputError, match="strictly increasing"):
        Feature.numeric("a", [2, 1])
    with pytest.raises(kcxai.InvalidInputError, match="appears twice"):
        Feature.categorical("a", [1, 1])
    with pytest.raises(kcxai.InvalidInputError, match="at least one value"):
        Feature.categorical("a", [])
    with pytest.raises(kcxai.InvalidInputError, match="numeric: its value must be a real number"):
        Feature.numeric("a", [1]).index("x")
    with pytest.raises(kcxai.InvalidInputError, match="unique"):
        FeatureSpace([Feature.categorical("a", [0]), Feature.categorical("a", [1])])
    with pytest.raises(kcxai.UnknownLanguageError, match="Available languages are"):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "nnf")


def test_huge_numbers_are_input_errors(tree):
    num = FeatureSpace([Feature.numeric("x", [1.0]), Feature.categorical("c", [0, 1])])
    with pytest.raises(kcxai.InvalidInputError, match="within the range of a float.*about 400 digits"):
        num.encode([10**400, 0])
    with pytest.raises(kcxai.InvalidInputError, match="an integer of about 5000 digits"):
        num.encode([0, 10**5000])
    assert num.encode([1e308, 1]) == (1, 1) and num.encode([Fraction(10**300, 3), 0]) == (1, 0)
    f32 = Feature.numeric("x", [1.0], float32=True)  # past float32's range: +-inf, no overflow warning
    assert (f32.index(1e308), f32.index(-1e308)) == (1, 0)
    with pytest.raises(kcxai.InvalidInputError, match="Feature 'x1' must take one of the values"):
        tree.predict((10**400,) + V[1:])


def test_series_by_name_or_by_position(tree):
    pd = pytest.importorskip("pandas")
    names = tree.space.names
    by_name = pd.Series(dict(zip(reversed(names), reversed(V))))
    frame = pd.DataFrame([V])  # no column names: its rows are labelled 0..n-1
    assert tree.space.encode(by_name) == tree.space.encode(pd.Series(V)) == tree.space.encode(frame.iloc[0]) \
        == tree.space.encode(V)
    with pytest.raises(kcxai.InvalidInputError, match="labelled \\[8, 7, 6, 5, 4, ...\\]"):
        tree.space.encode(pd.Series(V, index=range(8, -1, -1)))
    with pytest.raises(kcxai.InvalidInputError, match="Missing \\['x9'\\], unexpected \\['zz'\\]"):
        tree.space.encode(pd.Series(dict(zip(names[:-1] + ("zz",), V))))


@pytest.mark.parametrize("save_fails", ["unserialisable", "directory"])
def test_failed_save_keeps_the_old_file(tmp_path, tree, save_fails):
    path = tmp_path / "model.json"
    tree.save(path)
    before = path.read_bytes()
    if save_fails == "unserialisable":
        bad = FeatureSpace([Feature.categorical("a", [(0, 1), 2])])
        model = kcxai.DecisionTree(bad, [0], kcxai.Leaf(0))
        with pytest.raises(kcxai.InvalidTypeError):
            model.save(path)
    else:
        with pytest.raises(kcxai.FileAccessError, match="it is a directory"):
            tree.save(tmp_path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["model.json"]
    assert kcxai.load_model(path).predict(V) == tree.predict(V)


def test_file_errors_name_the_path(tmp_path):
    assert issubclass(kcxai.FileAccessError, OSError) and issubclass(kcxai.FileAccessError, kcxai.KcxaiError)
    with pytest.raises(kcxai.FileAccessError, match="cannot read '.*nope.json': no such file") as e:
        kcxai.load_model(tmp_path / "nope.json")
    assert e.value.filename == str(tmp_path / "nope.json")
    with pytest.raises(kcxai.FileAccessError, match="is a directory"):
        kcxai.load_model(tmp_path)
    (tmp_path / "bin.json").write_bytes(b'{"a": "\xff"}')
    with pytest.raises(kcxai.ModelFormatError, match="not a UTF-8 text JSON model: undecodable byte at offset 7"):
        kcxai.load_model(tmp_path / "bin.json")


def test_explainers_read_a_series_by_position(tree):
    pd = pytest.importorskip("pandas")
    assert kcxai.min_idrs(tree, pd.Series(V), 0).features == kcxai.min_idrs(tree, V, 0).features
