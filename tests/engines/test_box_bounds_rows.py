"""The box-bounds engine's work counted in rows (leaves met by the boxes evaluated), and the prover's row budgets.

A search stopped at ``max_rows`` returns an interval that contains the counted weight (enumeration,
``tests._support.reference``) and says so (``"max_rows"``); its rows are what it evaluated, the same whatever
the other limits; a prover whose query has spent its rows sends the next straddling test on (``"box none"``),
and every decision it takes still equals the exact one.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

import kcxai
from kcxai._deadline import Deadline
from kcxai.engines._box_bounds import BoxBounds
from kcxai.explain._proven import REFINE, Prover, Threshold
from tests._support.model_strategies import boosted_models, forests
from tests._support.strategies import DISTRIBUTIONS, EXACT_KINDS, points
from tests.engines.test_box_bounds import examples, exact, queries, within

NO_LIMIT = Deadline(None, what="test", advice="")


@examples(40)
@given(q=queries(distributions=DISTRIBUTIONS), data=st.data())
def test_every_interval_reached_under_a_row_limit_contains_the_weight(q, data):
    model, box, label = q
    engine = BoxBounds(model)
    want, _ = exact(model, box, label)
    whole = engine.bounds(box, label)
    max_rows = data.draw(st.integers(1, max(1, whole.rows)))
    limited = engine.bounds(box, label, max_rows=max_rows)
    assert within(model.space, limited, want)
    if limited.stopped == "max_rows":  # stopped once the rows were reached, within one step's boxes
        assert max_rows <= limited.rows <= whole.rows and not limited.is_exact
        assert limited.boxes <= whole.boxes
    else:  # the whole search fitted the rows
        assert limited.stopped == "exact" and limited.rows == whole.rows


@examples(25)
@given(q=queries(distributions=EXACT_KINDS))
def test_rows_count_the_same_search_whatever_the_box_limit(q):
    """The rows of a search are a count of its work: the same search stopped by boxes or by rows reports the
    rows it evaluated, and the unlimited one at least as many."""
    model, box, label = q
    engine = BoxBounds(model)
    whole = engine.bounds(box, label)
    by_boxes = engine.bounds(box, label, max_boxes=3)
    assert 0 < by_boxes.rows <= whole.rows or by_boxes.boxes == whole.boxes
    assert engine.bounds(box, label, max_boxes=3).rows == by_boxes.rows  # counted, not timed


@examples(25)
@given(data=st.data())
def test_a_prover_out_of_rows_decides_nothing_wrong_and_says_why(data):
    """A query with one row of budget: its first straddling test reads the query's box, and every later one
    finds the pool spent (``box none``); the decisions it takes are the exact ones."""
    model = data.draw(st.one_of(forests(distributions=EXACT_KINDS), boosted_models(distributions=EXACT_KINDS)))
    space = model.space
    oracle = kcxai.compile_model(model, "bounded", schedule=[(0.5, None, None)]).oracle
    brute = kcxai.compile_model(model, "brute").oracle
    p = data.draw(points(space))
    label = model.predict_point(p)
    budget = replace(REFINE, query_rows=1, conditioned_nodes=1, count_nodes=1)
    prover = Prover(oracle, model, p, label, NO_LIMIT, sample=False, what="test", budget=budget)
    for _ in range(4):
        fixed = frozenset(data.draw(st.sets(st.integers(0, space.n_features - 1))))
        test = Threshold.error(space, p, fixed, data.draw(st.fractions(0, 1, max_denominator=20)))
        try:
            got = prover.decide(test)
        except kcxai.NotProvenError:
            continue
        assert got == (brute.disagree_weight(p, label, fixed) <= test.limit)
    assert prover.rows_left <= 0 or prover.proof.by["box"] == 0
    assert all(why.startswith(("box none", "box max_rows")) for why in prover.proof.missed)
