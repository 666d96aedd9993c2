"""Fuzzing the JSON model format: mutated files of every family load or raise a KcxaiError, quickly.

For each family a hypothesis strategy draws a random model (multi-valued and numeric features,
uniform, exact and float distributions, 2-3 classes); its JSON is mutated several times (see
:mod:`fuzz_mutations`) and each mutant is written to a file and loaded with ``kcxai.load_model``.
A mutant must either load, and then predict, print and save without error, or raise a
:class:`kcxai.KcxaiError` with a one-line message; nothing may take more than
``KCXAI_FUZZ_SECONDS``. ``KCXAI_FUZZ_EXAMPLES=2000`` makes the long run.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kcxai
from kcxai.models import model_from_dict
from tests._support.fuzz_mutations import EXAMPLES, MUTANTS, Tally, mutate_json, run_one
from tests._support.model_strategies import (bdd_models, decision_lists, forests, linear_models, naive_bayes_models,
    rule_sets)
from tests._support.strategies import trees

DISTS = ("uniform", "exact", "float")
FAMILIES = {
    "decision_tree": trees(distributions=DISTS),
    "decision_list": decision_lists(distributions=DISTS),
    "rule_set": rule_sets(distributions=DISTS),
    "bdd": bdd_models(distributions=DISTS),
    "linear": linear_models(distributions=DISTS),
    "naive_bayes": naive_bayes_models(distributions=DISTS),
    "random_forest": forests(distributions=DISTS, max_trees=3),
}
TALLIES: dict[str, Tally] = {}


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    for t in TALLIES.values():
        print("\n" + t.line())


def _use(model: kcxai.Classifier, path: str) -> None:
    """What a user does with a loaded model: predict, print it, save it again."""
    space = model.space
    point = tuple(0 for _ in space.features)
    model.predict_point(point)
    model.predict(space.decode(point))
    repr(model)
    model.save(path)
    again = kcxai.load_model(path)
    assert again.to_dict() == model.to_dict()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_mutated_json_models_load_or_raise_a_kcxai_error(family, tmp_path_factory):
    tally = TALLIES.setdefault(family, Tally(f"JSON {family}"))
    where = tmp_path_factory.mktemp(family)
    path, out = where / "m.json", where / "again.json"

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(model=FAMILIES[family], seed=st.integers(0, 2**32 - 1))
    def check(model: kcxai.Classifier, seed: int) -> None:
        original = model.to_dict()
        assert model_from_dict(original).to_dict() == original
        rng = random.Random(seed)
        for k in range(MUTANTS):
            path.write_bytes(mutate_json(original, rng))

            def load() -> None:
                m = kcxai.load_model(path)
                _use(m, str(out))

            run_one(tally, f"{family} mutant {k} of seed {seed}: {path.read_bytes()[:300]!r}", load)

    check()
    assert tally.tries >= EXAMPLES * MUTANTS * 0.9 and tally.rejected > 0


@pytest.mark.parametrize("text, match", [
    ('{"w": ' + "[" * 5000 + "]" * 5000 + "}", "nested deeper than 32 levels"),
    ('{"w": ' + "9" * 5000 + "}", "1:7: an integer with 5000 digits"),
    ('{"w": [1,\n 1e400]}', "2:2: the number 1e400 is beyond the range of a float"),
    ('{"w": NaN}', "NaN is not a number JSON allows"),
])
def test_json_bounds_name_the_place(tmp_path, text, match):
    (tmp_path / "m.json").write_text(text)
    with pytest.raises(kcxai.ModelFormatError, match=match):
        kcxai.load_model(tmp_path / "m.json")


def test_the_issue_cases(tmp_path):
    """The inputs issue 14 reported: each is now a ModelFormatError naming the field, found at once."""
    from fractions import Fraction

    from kcxai import Feature, FeatureSpace
    from kcxai.models import LinearClassifier, NaiveBayes

    space = FeatureSpace([Feature.categorical("a", [0, 1]), Feature.categorical("b", [0, 1, 2])])
    lin = LinearClassifier(space, ["n", "y"], [[[0, 1], [1, 0]], [[0, 1, 2], [2, 1, 0]]], [0, Fraction(1, 2)])
    d = lin.to_dict()
    for bad, match in [("1e10000000", "exponent of at most 1000"), ("1e100000000", "exponent of at most 1000"),
                       ("1/0", "an exact number like '3/4'"), ("9" * 2000, "at most 1000 characters")]:
        d2 = {**d, "weights": [[[bad, "1"], ["1", "0"]], d["weights"][1]]}
        with pytest.raises(kcxai.ModelFormatError, match=match):
            model_from_dict(d2)
    nb = NaiveBayes(space, ["n", "y"], [1, 1], [[[1, 1], [1, 1]], [[1, 1, 1], [1, 1, 1]]])
    d = nb.to_dict()
    with pytest.raises(kcxai.ModelFormatError, match="space.distribution\\[0\\]\\[1\\] must be an exact number"):
        model_from_dict({**d, "space": {**d["space"], "distribution": [["1", "1e99999999"], None]}})
    with pytest.raises(kcxai.ModelFormatError, match="'space' object with a 'features' list"):
        model_from_dict({**d, "space": {"features": 3}})
    with pytest.raises(kcxai.ModelFormatError, match="'priors' must be a list"):
        model_from_dict({**d, "priors": 7})
    rules = kcxai.DecisionList.from_text("IF a = 1 THEN y\nELSE n", space)
    d = rules.to_dict()
    d["rules"][0]["conditions"] = [[0]]
    with pytest.raises(kcxai.ModelFormatError, match="a condition must be \\[feature index, \\[value indices\\]\\]"):
        model_from_dict(d)
