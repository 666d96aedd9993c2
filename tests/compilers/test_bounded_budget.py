"""The bounded language's budget counts work, not seconds: the same input gives the same diagram whatever the clock.

Nothing here asserts a time. The clock the construction's guard reads is replaced (frozen, ten thousand times
slower, jumping) or the CPU is shared with a busy thread, and the diagram must be identical: the same schedule,
the same work, the same unknown weight and the same bounds on every query. The wall-clock safety limit is the
one thing that may stop a construction by the clock; when it does, the result says it is not reproducible.
"""

from __future__ import annotations

import itertools
import random
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kcxai
from kcxai.compilers import _limits, bounded
from kcxai.compilers._ensemble import ensemble_order
from kcxai.compilers._ensemble.bounded import compile_bounded
from kcxai.compilers._ensemble.stopped import Stopped
from kcxai.compilers._ensemble.threshold import BRANCH_WORK
from kcxai.compilers._limits import Guard
from kcxai.models import RandomForest
from tests._support.model_strategies import boosted_models, forests


def _forest(n_trees: int = 40, n_features: int = 9, seed: int = 3) -> RandomForest:
    """A soft-voting forest whose exact diagram needs far more work than the budgets used here."""
    rng = random.Random(seed)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", list(range(4))) for i in range(n_features)])
    trees, scores = [], []
    for _ in range(n_trees):
        a, b = rng.sample(range(n_features), 2)
        sub = {v: kcxai.Split(f"x{b}", {w: kcxai.Leaf(rng.randrange(2)) for w in range(4)}) for v in range(4)}
        tree = kcxai.DecisionTree(space, [0, 1], kcxai.Split(f"x{a}", sub))
        trees.append(tree)
        scores.append({leaf: [rng.randint(0, 97) / 97, rng.randint(0, 89) / 89] for leaf in tree.leaves})
    return RandomForest(space, [0, 1], trees, voting="soft", leaf_scores=scores)


#: A budget (seconds of work) under which :func:`_forest` is bounded, with several rounds.
SMALL = 0.1


def _answers(compiled: kcxai.CompiledModel, seed: int = 0) -> list[object]:
    """The bounds of a fixed set of queries (the diagram, as far as counting can tell)."""
    rng = random.Random(seed)
    n = compiled.model.space.n_features
    out: list[object] = []
    for _ in range(25):
        p = tuple(rng.randrange(4) for _ in range(n))
        s = frozenset(rng.sample(range(n), rng.randint(0, n)))
        out.append(compiled.oracle.disagree_bounds(p, 1, s))
    return out


def _fingerprint(compiled: kcxai.CompiledModel) -> tuple[object, ...]:
    st_ = compiled.stats
    return (st_["schedule"], st_["work"], st_["unknown_weight"], st_["diagram_nodes"], st_["exact"],
            st_["reproducible"], _answers(compiled))


@pytest.fixture
def no_safety(monkeypatch: pytest.MonkeyPatch) -> None:
    """A safety limit no clock reaches: any difference in the diagram would then come from the clock."""
    monkeypatch.setattr(bounded, "SAFETY_FLOOR", 1e12)


def _clocked(monkeypatch: pytest.MonkeyPatch, clock) -> None:
    monkeypatch.setattr(_limits.time, "perf_counter", clock)


def test_the_forest_is_really_bounded_under_the_small_budget():
    compiled = kcxai.compile_model(_forest(), "bounded", max_seconds=SMALL)
    st_ = compiled.stats
    assert st_["exact"] is False and st_["reproducible"] is True and len(st_["schedule"]) >= 2
    assert st_["max_work"] == bounded.work_budget(SMALL) and 0 < st_["work"]


@pytest.mark.parametrize("clock", ["frozen", "slow", "fast", "jumpy"])
def test_the_same_budget_gives_the_same_diagram_whatever_the_clock(monkeypatch, no_safety, clock):
    model = _forest()
    want = _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=SMALL))
    real = time.perf_counter
    start = real()
    ticks = itertools.count()
    clocks = {"frozen": lambda: start, "slow": lambda: start + 1e4 * (real() - start),
              "fast": lambda: start + 1e-4 * (real() - start), "jumpy": lambda: start + 7.0 * next(ticks)}
    _clocked(monkeypatch, clocks[clock])
    assert _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=SMALL)) == want


def test_the_same_budget_gives_the_same_diagram_with_a_busy_cpu():
    model = _forest()
    want = _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=SMALL))
    stop = threading.Event()

    def burn() -> None:
        x = 0
        while not stop.is_set():
            x = (x * 31 + 7) % 1_000_003

    burners = [threading.Thread(target=burn, daemon=True) for _ in range(2)]
    for t in burners:
        t.start()
    try:
        got = _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=SMALL))
    finally:
        stop.set()
        for t in burners:
            t.join()
    assert got == want


def test_a_larger_budget_leaves_no_more_unknown():
    model = _forest()
    weights = [kcxai.compile_model(model, "bounded", max_seconds=b).stats["unknown_weight"]
               for b in (SMALL / 4, SMALL, 4 * SMALL)]
    assert weights[0] >= weights[1] >= weights[2] and weights[0] > weights[2]


def _overshoot_bound(spec, max_work: int) -> int:
    """What the construction may use past ``max_work``: its last state (every branch) and the values grouped
    for it, at most every value of every tree at one level."""
    sizes = [f.size for f in spec.space.features]
    return BRANCH_WORK * max(sizes) + len(spec.trees) * 2 * max(sizes)


@settings(max_examples=15, deadline=None)
@given(data=st.data(), family=st.sampled_from([forests, boosted_models]), max_work=st.integers(50, 20_000))
def test_the_work_budget_is_held_within_one_state(data, family, max_work):
    """The construction stops at the first counted state past the budget: it uses at most the budget plus one
    state's work (the stated factor: 1 plus that state's share of the budget)."""
    model = data.draw(family(max_trees=6))
    spec = model.additive_trees()
    order = ensemble_order(spec)
    try:
        built = compile_bounded(spec, order, Guard("bounded", None, None), max_work=max_work)
    except Stopped as e:  # the trees' own diagrams took the budget (the language keeps the diagram of nothing)
        assert "trees' diagrams" in str(e)
        return
    assert built.stats["work"] <= max_work + _overshoot_bound(spec, max_work)
    again = compile_bounded(spec, order, Guard("bounded", None, None), max_work=max_work)
    assert (again.schedule, again.stats["work"], again.exact) == (built.schedule, built.stats["work"], built.exact)


def test_a_planted_clock_read_in_the_round_decision_is_caught(monkeypatch, no_safety):
    """Plant the old rule (a round is started if its predicted seconds fit the seconds left): the slow clock
    then changes the diagram, which the clock tests above would report."""
    from kcxai.compilers._ensemble import bounded as construction

    model = _forest()
    real_run = construction.Tests.run

    def run_by_the_clock(self, guard, theta=0.0, max_work=None):
        if theta and guard is not None and guard.seconds > 0.5:  # the clock decides: no more rounds
            raise construction.Stopped(-1, 0, "out of seconds")
        return real_run(self, guard, theta, max_work)

    monkeypatch.setattr(construction.Tests, "run", run_by_the_clock)
    want = _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=SMALL))
    real = time.perf_counter
    start = real()
    _clocked(monkeypatch, lambda: start + 1e4 * (real() - start))
    assert _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=SMALL)) != want


def test_the_safety_limit_stops_a_runaway_and_says_the_result_is_not_reproducible(monkeypatch):
    real = time.perf_counter
    start = real()
    reads = itertools.count()
    _clocked(monkeypatch, lambda: start + 50.0 * max(0, next(reads) - 40))  # hours pass once the build runs
    compiled = kcxai.compile_model(_forest(), "bounded", max_seconds=1.0)
    st_ = compiled.stats
    assert st_["reproducible"] is False and not st_["exact"]
    assert "not reproducible" in st_["stopped"] and "safety limit" in st_["stopped"]
    assert "max_seconds" in st_["stopped"]


def test_the_safety_limit_is_a_multiple_of_the_budget_with_a_floor():
    assert bounded.safety_seconds(100.0) == bounded.SAFETY * 100.0
    assert bounded.safety_seconds(1e-3) == bounded.SAFETY_FLOOR
    assert bounded.work_budget(2.0) == round(bounded.BUILD_SHARE * 2.0 * bounded.WORK_PER_SECOND)


def test_a_replayed_schedule_gives_the_budgeted_diagram():
    model = _forest()
    first = kcxai.compile_model(model, "bounded", max_seconds=SMALL)
    again = kcxai.compile_model(model, "bounded", schedule=first.stats["schedule"])
    assert _answers(again) == _answers(first) and again.stats["unknown_weight"] == first.stats["unknown_weight"]


def test_max_nodes_stops_a_pass_at_a_counted_state_whatever_the_clock(monkeypatch, no_safety):
    model = _forest()
    want = _fingerprint(kcxai.compile_model(model, "bounded", max_seconds=1.0, max_nodes=300))
    real = time.perf_counter
    start = real()
    _clocked(monkeypatch, lambda: start + 1e4 * (real() - start))
    got = kcxai.compile_model(model, "bounded", max_seconds=1.0, max_nodes=300)
    assert _fingerprint(got) == want and got.stats["reproducible"]


def _three_classes(n_trees: int = 6, seed: int = 5) -> RandomForest:
    """A hard-voting forest over three classes: its class functions are conjunctions of pairwise tests."""
    rng = random.Random(seed)
    space = kcxai.FeatureSpace([kcxai.Feature.categorical(f"x{i}", list(range(3))) for i in range(5)])
    trees = []
    for _ in range(n_trees):
        a, b = rng.sample(range(5), 2)
        sub = {v: kcxai.Split(f"x{b}", {w: kcxai.Leaf(rng.randrange(3)) for w in range(3)}) for v in range(3)}
        trees.append(kcxai.DecisionTree(space, [0, 1, 2], kcxai.Split(f"x{a}", sub)))
    return RandomForest(space, [0, 1, 2], trees, voting="hard")


def test_the_class_conjunctions_are_counted_work_and_stop_at_the_budget():
    """More than two classes: the conjunctions making each class function from its pairwise tests count against
    ``max_work`` (CONJ_WORK a step); a budget that the tests fit but the conjunctions do not stops there, the
    same way every time, and its replay gives the same diagram."""
    from kcxai.compilers._ensemble.diagram import CONJ_WORK

    spec = _three_classes().additive_trees()
    order = ensemble_order(spec)
    whole = compile_bounded(spec, order, Guard("bounded", None, None), max_work=10**9)
    steps = whole.diagram.and_steps
    assert whole.exact and steps > 1
    before = whole.stats["work"] - CONJ_WORK * steps  # the trees' diagrams and the tests' passes
    short = compile_bounded(spec, order, Guard("bounded", None, None), max_work=before + CONJ_WORK)
    assert not short.exact and "class functions" in short.stopped
    assert short.stats["work"] <= before + CONJ_WORK + _overshoot_bound(spec, before + CONJ_WORK)  # (a round after)
    again = compile_bounded(spec, order, Guard("bounded", None, None), max_work=before + CONJ_WORK)
    assert (again.schedule, again.stats["work"]) == (short.schedule, short.stats["work"])
    replayed = compile_bounded(spec, order, Guard("bounded", None, None), schedule=short.schedule)
    assert replayed.exact == short.exact and replayed.theta == short.theta
