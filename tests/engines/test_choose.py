"""The exact probe of a tree ensemble counts work (kcxai/engines/choose.py): the same model and probe budget give
the same choice whatever the clock says, and only a runaway stops at the wall-clock safety limit (then the
refusal says it is not reproducible). The clock is patched (frozen, slowed), never waited on."""

from __future__ import annotations

import time

import pytest

import kcxai
from kcxai.compilers import _limits
from kcxai.compilers.bounded import BUILD_SHARE, WORK_PER_SECOND, work_budget
from kcxai.engines.choose import PROBE, ProbeBudget, choose


def _forest():
    """A fresh 6x3 forest on breast_cancer (the chooser's cache lives on the model: a new one is probed anew)."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    est = RandomForestClassifier(n_estimators=6, max_depth=3, random_state=0).fit(X, y)
    return kcxai.from_sklearn(est, X)


def _work_of_exact() -> int:
    c = choose(_forest(), "counts")
    assert c.language == "obdd" and c.compiled is not None
    return int(c.compiled.stats["work"])


def _budget_for(work: int, share: float) -> ProbeBudget:
    """A probe budget whose counted work is ``share`` times ``work``."""
    return ProbeBudget(max_seconds=share * work / (BUILD_SHARE * WORK_PER_SECOND))


def _clock(monkeypatch, speed: float | None) -> None:
    """The compile guard's clock frozen (``None``) or running ``speed`` times as fast as the real one."""
    real = time.perf_counter
    start = real()
    fake = (lambda: start) if speed is None else (lambda: start + speed * (real() - start))
    monkeypatch.setattr(_limits.time, "perf_counter", fake)


def test_the_probe_of_a_tree_ensemble_is_counted_work():
    forest = _forest()
    options = PROBE.options("obdd", forest)
    assert options["max_work"] == work_budget(PROBE.max_seconds) and options["max_seconds"] >= 10 * PROBE.max_seconds
    work = _work_of_exact()
    assert 0 < work <= PROBE.max_work()
    refused = choose(_forest(), "counts", probe=_budget_for(work, 0.5))
    assert refused.language is None and "units of counted work" in refused.reason and refused.limited
    assert not choose(_forest(), "counts", probe=_budget_for(work, 1.5)).limited
    assert "max_work=" in refused.reason and "safety limit" not in refused.reason
    tree = kcxai.datasets.running_example_tree()  # no construction counting work: the clock is the limit
    assert "max_work" not in PROBE.options("obdd", tree)


@pytest.mark.parametrize("speed", [None, 2.0])  # frozen; every second seen as 2 (a loaded machine)
def test_the_same_model_and_budget_give_the_same_choice_whatever_the_clock(monkeypatch, speed):
    work = _work_of_exact()
    fits, short = _budget_for(work, 1.5), _budget_for(work, 0.5)
    want = [choose(_forest(), "counts", probe=p).language for p in (fits, short)]
    assert want == ["obdd", None]
    _clock(monkeypatch, speed)
    got = [choose(_forest(), "counts", probe=p) for p in (fits, short)]
    assert [c.language for c in got] == want
    assert got[0].compiled.stats["work"] == work  # the same construction, to the unit


def test_a_probe_stopped_by_the_safety_clock_says_it_is_not_reproducible(monkeypatch):
    work = _work_of_exact()
    _clock(monkeypatch, 1e6)  # hours per second: the safety limit is reached long before the counted work
    c = choose(_forest(), "counts", probe=_budget_for(work, 1.5))
    assert c.language is None and "safety limit" in c.reason and "another run may compile it" in c.reason


@pytest.mark.parametrize("options, message", [
    ({"max_work": 0}, r"'max_work' must be a positive int or None. Got 0"),
    ({"max_work": 10, "construction": "builder"}, r"'max_work'=10 applies to construction='ensemble'"),
])
def test_max_work_is_checked(options, message):
    with pytest.raises(kcxai.InvalidInputError, match=message):
        kcxai.compile_model(_forest(), "obdd", **options)


def test_max_work_on_a_model_built_through_dd_is_refused():
    with pytest.raises(kcxai.InvalidInputError, match="'max_work' applies to tree ensembles"):
        kcxai.compile_model(kcxai.datasets.running_example_tree(), "obdd", max_work=10)


@pytest.mark.parametrize("options, name", [({"max_seconds": 0}, "max_seconds"), ({"max_seconds": -1}, "max_seconds"),
                                           ({"max_seconds": float("inf")}, "max_seconds"),
                                           ({"bounded_seconds": 0}, "bounded_seconds"),
                                           ({"max_memory": 0}, "max_memory"), ({"max_seconds": "3"}, "max_seconds")])
def test_a_probe_budget_of_zero_or_below_names_the_argument(options, name):
    with pytest.raises(kcxai.KcxaiError, match=f"'{name}' must be"):
        ProbeBudget(**options)
