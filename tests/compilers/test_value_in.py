"""One literal ``x_f in E``, whichever builder makes it: the CNF builder's (gates over the encoding's
variables, :mod:`kcxai.compilers._cnf`) and the diagram builders' (:class:`~kcxai.compilers.builder.DiagramBuilder`,
here on dd's BDDs) both come from :func:`~kcxai.compilers.builder.encoded_literal`. Brute force over small
multi-valued features, every encoding and every mask (with bits past the feature's values, which are ignored):
each literal holds at exactly the points whose value is in the mask, evaluated on the written CNF's gates and
with dd's ``let`` on the point's encoding, and agrees with the truth-table reference."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import dd.autoref
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kcxai import Feature, FeatureSpace, InvalidInputError
from kcxai.compilers._cnf import Cnf, CnfBuilder
from kcxai.compilers._encoding import Encoding
from kcxai.compilers._truth_table import TruthTableBuilder
from kcxai.compilers.obdd import BddBuilder

ENCODINGS = ["onehot", "order", "log"]


@st.composite
def small_spaces(draw: st.DrawFn) -> FeatureSpace:
    """One to three features of 1-9 values (one-hot past 8 values writes a ladder), at most 60 points."""
    sizes = draw(st.lists(st.integers(1, 9), min_size=1, max_size=3).filter(
        lambda s: sum(1 << d for d in s) <= 600 and _product(s) <= 60))
    return FeatureSpace([Feature.categorical(f"f{i}", list(range(d))) for i, d in enumerate(sizes)])


def _product(sizes: Sequence[int]) -> int:
    out = 1
    for d in sizes:
        out *= d
    return out


def _variables(enc: Encoding, point: Sequence[int]) -> dict[int, bool]:
    """The encoding's variables in the encoding of ``point`` (by the definition of each variable's values)."""
    return {v: bool(enc.var_true[v] >> point[enc.var_feature[v]] & 1) for v in range(enc.n_vars)}


def _cnf_holds(cnf: Cnf, literal: int, variables: dict[int, bool]) -> bool:
    """A written CNF's literal at an assignment of the features' variables (DIMACS ``v + 2``; 1 is true),
    the gates evaluated from their definitions."""
    gates = {out: (is_or, ins) for is_or, out, ins in cnf.gates}
    memo: dict[int, bool] = {}

    def value(x: int) -> bool:
        var = abs(x)
        if var not in memo:
            if var == 1:
                memo[var] = True
            elif var - 2 in variables:
                memo[var] = variables[var - 2]
            else:
                is_or, ins = gates[var]
                memo[var] = any(map(value, ins)) if is_or else all(map(value, ins))
        return memo[var] if x > 0 else not memo[var]

    return value(literal)


def _masks(size: int) -> list[int]:
    """Every mask of a feature's values, and two with bits past them (ignored)."""
    return [*range(1 << size), 1 << size, (1 << (size + 2)) - 1 - (1 << 1)]


@pytest.mark.parametrize("encoding", ENCODINGS)
@settings(max_examples=12, deadline=None)
@given(space=small_spaces())
def test_cnf_and_diagram_literals_agree_on_every_mask(encoding: str, space: FeatureSpace) -> None:
    enc = Encoding(space, encoding)
    bdd = dd.autoref.BDD()
    if enc.n_vars:
        bdd.declare(*(f"v{i}" for i in range(enc.n_vars)))
    diagram = BddBuilder(bdd, enc)
    truth = TruthTableBuilder(space)
    points = list(itertools.product(*(range(d) for d in space.domain_sizes)))
    for f, feature in enumerate(space.features):
        for mask in _masks(feature.size):
            cnf_builder = CnfBuilder(space, encoding)
            lit = cnf_builder.value_in(f, mask)
            cnf = cnf_builder.cnf([lit, cnf_builder.neg(lit)])
            u = diagram.value_in(f, mask)
            reference = truth.value_in(f, mask)
            for p in points:
                variables = _variables(enc, p)
                expected = bool(mask >> p[f] & 1)
                at = bdd.let({f"v{v}": x for v, x in variables.items()}, u) if variables else u
                assert at in (bdd.true, bdd.false)
                assert (at == bdd.true) == expected, (encoding, f, bin(mask), p)
                assert _cnf_holds(cnf, cnf.roots[0], variables) == expected, (encoding, f, bin(mask), p)
                assert truth.holds(reference, p) == expected
    del u, at, diagram


def test_the_written_literal_is_the_builder_literal() -> None:
    """The CNF of one literal on a one-hot feature of 4 values: ``x in {0, 1, 3}`` is the negation of value 2's
    variable (the encoding's shorter side), written without a gate."""
    space = FeatureSpace([Feature.categorical("x", [0, 1, 2, 3])])
    b = CnfBuilder(space, "onehot")
    lit = b.value_in(0, 0b1011)
    assert lit == -(b.variable(2))
    assert b.value_in(0, 0b1011) == lit  # made once
    assert b.value_in(0, 0) == -1 and b.value_in(0, 0b1111) == 1 and b.value_in(0, 0b10000) == -1


def _builders(space: FeatureSpace) -> list[object]:
    enc = Encoding(space, "log")
    bdd = dd.autoref.BDD()
    bdd.declare(*(f"v{i}" for i in range(enc.n_vars)))
    return [TruthTableBuilder(space), CnfBuilder(space), BddBuilder(bdd, enc)]


@pytest.mark.parametrize("which", [0, 1, 2])
@pytest.mark.parametrize("feature, mask, named", [(2, 1, "'feature'"), (-1, 1, "'feature'"), (True, 1, "'feature'"),
                                                  (0, -1, "'mask'"), (0, 1.0, "'mask'"), (0, False, "'mask'")])
def test_every_builder_refuses_the_same_literals(which: int, feature: object, mask: object, named: str) -> None:
    space = FeatureSpace([Feature.categorical("a", [0, 1, 2]), Feature.categorical("b", [0, 1])])
    builder = _builders(space)[which]
    with pytest.raises(InvalidInputError, match=f"value_in: {named} must be"):
        builder.value_in(feature, mask)  # type: ignore[attr-defined]
    warm = _builders(space)[which]  # a builder that already holds the literals these keys hash like: no cached bypass
    warm.value_in(0, 1), warm.value_in(1, 1), warm.value_in(0, 0)  # type: ignore[attr-defined]
    with pytest.raises(InvalidInputError, match=f"value_in: {named} must be"):
        warm.value_in(feature, mask)  # type: ignore[attr-defined]
