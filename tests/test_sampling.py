"""The approximate 'sampling' language: certified decisions, marked estimates, refusals."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai.compilers.sampling import clopper_pearson
from strategies import instance_of, points, trees


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (17, 400), (250, 256)])
def test_clopper_pearson_is_scipys_exact_interval(k, n):
    from scipy.stats import binomtest

    lo, hi = clopper_pearson(k, n, 0.05)
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    assert abs(lo - ci.low) < 1e-9 and abs(hi - ci.high) < 1e-9


@settings(max_examples=40, derandomize=True, deadline=None)
@given(trees(distributions=("uniform", "exact", "mixture")), st.data())
def test_sampled_min_idrs_is_relevant_and_marked_approximate(tree, data):
    """With confidence 0.999 and fixed seeds, every set returned is I-delta-relevant, checked exactly."""
    point = data.draw(points(tree.space))
    x = instance_of(tree.space, point)
    delta = data.draw(st.sampled_from([Fraction(1, 20), Fraction(1, 5), Fraction(1, 2)]))
    c = kcxai.compile_model(tree, "sampling", confidence=0.999, seed=data.draw(st.integers(0, 5)),
                            initial_samples=64, max_samples=2048)
    e = kcxai.min_idrs(c, x, delta)
    assert e.approximate and e.confidence == 0.999 and e.language == "sampling"
    assert kcxai.is_idrs(tree, x, e.features, delta)
    assert "estimated" in str(e) and "confidence 0.999" in str(e)
    assert e.to_dict()["approximate"] is True


def test_clear_cut_decisions_find_the_exact_set():
    """On the running example, delta far from every error: the sampled loop frees what the exact one frees."""
    tree = kcxai.datasets.running_example_tree()
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    exact = kcxai.min_idrs(tree, v, Fraction(1, 2))
    sampled = kcxai.min_idrs(kcxai.compile_model(tree, "sampling", seed=3), v, Fraction(1, 2))
    assert sampled.features == exact.features


def test_exact_only_explainers_refuse_an_approximate_oracle():
    tree = kcxai.datasets.running_example_tree()
    c = kcxai.compile_model(tree, "sampling")
    v = (1, 1, 1, 1, 0, 0, 0, 0, 1)
    for call in (lambda: kcxai.idrs_error(c, v, [0]), lambda: kcxai.min_cdrs(c, v, 0.9),
                 lambda: kcxai.is_idrs(c, v, [0], 0.1)):
        with pytest.raises(kcxai.InvalidInputError, match="needs exact counts.*'sampling' oracle gives only estimates"):
            call()


@pytest.mark.parametrize("options, message", [
    ({"confidence": 1}, "'confidence' must be a number strictly between 0 and 1. Got 1"),
    ({"confidence": "high"}, "'confidence' must be a number"),
    ({"max_samples": 10, "initial_samples": 20}, "'max_samples' must be at least 'initial_samples'"),
    ({"initial_samples": 0}, "'initial_samples' must be a positive int"),
    ({"samples": 5}, r"does not take the option\(s\) \['samples'\]"),
])
def test_options_are_validated(options, message):
    with pytest.raises(kcxai.InvalidInputError, match=message):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "sampling", **options)
