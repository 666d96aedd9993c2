"""``kcxai experiment ensembles``: a tiny grid end to end through the CLI, the cross-check (and that it can
fail), compile limits and the skips they cause, the per-cell budget, resume, and bad options."""

import csv
import dataclasses
import json
import math
import time
from fractions import Fraction

import pytest

import kcxai
from kcxai.cli import main
from kcxai.experiments import ensembles as ens
from kcxai.experiments._budget import OverBudget, deadline
from kcxai.experiments._ensemble_models import MODEL_KINDS
from kcxai.experiments.ensembles import ENSEMBLE_COLUMNS, EnsemblesConfig, run_ensembles


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _cfg(tmp_path, **kw):
    base = dict(dataset="adult", models=("rf-hard",), trees=(2,), depths=(2,), languages=("obdd", "sat"),
                deltas=(Fraction(0),), instances=2, max_seconds=10.0, budget=30.0, out=str(tmp_path),
                progress=False)
    base.update(kw)
    return EnsemblesConfig(**base)


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ensembles")
    code = main(["experiment", "ensembles", "--dataset", "adult", "--models", "rf-soft", "rf-hard", "gb",
                 "--trees", "2", "--depths", "2", "3", "--instances", "2", "--max-seconds", "10", "--budget", "30",
                 "--max-samples", "512",
                 "--no-progress", "--out", str(out)])
    return code, out


def test_cli_tiny_grid_writes_every_field_and_exact_languages_agree(cli_run, capsys):
    code, out = cli_run
    assert code == 0
    rows = _read_csv(out / "ensembles.csv")
    assert rows and set(rows[0]) == set(ENSEMBLE_COLUMNS)
    models = {(r["model"], r["trees"], r["depth"]) for r in rows}
    assert models == {(k, "2", d) for k in ("rf-soft", "rf-hard", "gb") for d in ("2", "3")}
    for model in models:
        mine = [r for r in rows if (r["model"], r["trees"], r["depth"]) == model]
        # sat runs at delta 0 only, sampling at delta > 0 only, the diagrams at both
        assert sorted((r["language"], r["delta"]) for r in mine) == sorted(
            [("obdd", "0"), ("sdd", "0"), ("sat", "0"), ("obdd", "1/20"), ("sdd", "1/20"), ("sampling", "1/20")])
        assert all(int(r["nodes"]) >= 3 * 2 and float(r["import_seconds"]) >= 0 for r in mine)
        assert all(r["library_agrees"] == "2/2" for r in mine)
    for r in rows:
        assert r["status"] in ("ok", "limit", "skipped: a smaller model hit the limit"), r
        if r["status"] == "ok":
            assert r["explanations"] == "2" and float(r["median_ms"]) <= float(r["max_ms"])
            assert float(r["compile_seconds"]) >= 0 and r["size_unit"] and r["backend"]
        if r["language"] == "sampling":
            assert r["exact"] == "False" and r["confidence"] == "0.95"
        else:
            assert r["exact"] == "True" and r["confidence"] == ""
            assert r["approx_not_relevant"] == ""
    # at delta 0 the three exact languages check each other: some checks, no disagreement
    exact0 = [r for r in rows if r["delta"] == "0" and r["status"] == "ok"]
    assert sum(int(r["checks"]) for r in exact0 if r["checks"]) >= 2 * 2 * 6
    assert all(r["disagreements"] in ("", "0") for r in rows)
    assert {r["language"] for r in exact0 if r["checks"]} == {"obdd", "sdd", "sat"}
    md = (out / "ensembles.md").read_text(encoding="utf-8")
    assert "sampling (approximate, confidence 0.95)" in md and "disagreements: 0." in md
    info = json.loads((out / "ensembles.json").read_text(encoding="utf-8"))
    assert info["config"]["trees"] == [2] and len(info["rows"]) == len(rows)
    assert len(list((out / "records").glob("*.json"))) == 6


def test_disagreements_are_counted_and_fail_the_cli(tmp_path, monkeypatch, capsys):
    # a wrong obdd answer (its set minus one feature) must be caught by sat's check
    real = kcxai.min_idrs

    def wrong(obj, x, d, **kw):
        e = real(obj, x, d, **kw)
        if getattr(obj, "language", "") == "obdd" and e.features:
            return dataclasses.replace(e, features=e.features[1:])
        return e

    monkeypatch.setattr(kcxai, "min_idrs", wrong)
    code = main(["experiment", "ensembles", "--models", "rf-hard", "--trees", "3", "--depths", "3", "--languages",
                 "obdd", "sat", "--delta", "0", "--instances", "2", "--no-progress", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "not relevant (a bug)" in err and "find obdd's set not relevant" in err
    rows = {r["language"]: r for r in _read_csv(tmp_path / "ensembles.csv")}
    assert int(rows["obdd"]["disagreements"]) > 0 and rows["sat"]["disagreements"] == "0"


def test_sampling_sets_an_exact_language_rejects_are_counted_apart(tmp_path, monkeypatch):
    # sampling's sets are only relevant with some confidence: a wrong one is counted, not a disagreement
    real = kcxai.min_idrs

    def careless(obj, x, d, **kw):
        e = real(obj, x, d, **kw)
        return dataclasses.replace(e, features=()) if getattr(obj, "language", "") == "sampling" else e

    monkeypatch.setattr(kcxai, "min_idrs", careless)
    rows = run_ensembles(_cfg(tmp_path, trees=(3,), depths=(3,), languages=("obdd", "sampling"),
                              deltas=(Fraction(1, 100),), max_samples=256))
    by = {r["language"]: r for r in rows}
    assert by["sampling"]["checks"] == 2 and 0 < by["sampling"]["approx_not_relevant"] <= 2
    assert by["sampling"]["disagreements"] == "" and by["obdd"]["checks"] == ""  # no other exact language
    assert by["sampling"]["exact"] is False and by["sampling"]["confidence"] == 0.95


def test_sampling_decisions_are_replayed_exactly(tmp_path, monkeypatch):
    rows = run_ensembles(_cfg(tmp_path, trees=(3,), depths=(3,), languages=("obdd", "sampling"),
                              deltas=(Fraction(1, 20),), max_samples=256))
    by = {r["language"]: r for r in rows}
    n = 14  # adult's features: one decision each per explanation
    assert by["sampling"]["decisions"] == 2 * n and 0 <= by["sampling"]["decisions_differ"] <= 2 * n
    assert by["obdd"]["construction"] == "ensemble" and int(by["obdd"]["diagram_nodes"]) > 2  # terminals + a test
    md = (tmp_path / "ensembles.md").read_text(encoding="utf-8")
    assert f"decisions replayed exactly: {2 * n}" in md
    real = kcxai.min_idrs

    def careless(obj, x, d, **kw):  # sampling keeps every feature: each exact "free" decision differs
        e = real(obj, x, d, **kw)
        return dataclasses.replace(e, features=tuple(range(n))) if getattr(obj, "language", "") == "sampling" else e

    monkeypatch.setattr(kcxai, "min_idrs", careless)
    rows = run_ensembles(_cfg(tmp_path, trees=(3,), depths=(3,), languages=("obdd", "sampling"),
                              deltas=(Fraction(1, 20),), max_samples=256))
    obdd = next(r for r in rows if r["language"] == "obdd")
    sampling = next(r for r in rows if r["language"] == "sampling")
    # the first feature the exact loop frees is freed from the full set, where sampling now keeps it
    assert obdd["median_size"] < n and sampling["decisions_differ"] >= 1


def test_the_builder_construction_is_an_option(tmp_path):
    rows = run_ensembles(_cfg(tmp_path, construction="builder", languages=("obdd", "sdd")))
    assert {r["construction"] for r in rows} == {"builder"} and all(r["status"] == "ok" for r in rows)
    assert {r["backend"] for r in rows if r["language"] == "obdd"} <= {"dd.cudd", "dd.autoref"}


def test_a_limit_skips_the_larger_models_of_that_kind_only(tmp_path):
    rows = run_ensembles(_cfg(tmp_path, trees=(1, 2), depths=(2, 3), max_nodes=1))
    obdd = {(r["trees"], r["depth"]): r for r in rows if r["language"] == "obdd"}
    assert obdd[(1, 2)]["status"] == "limit" and "max_nodes" in obdd[(1, 2)]["note"]
    for size in ((2, 2), (1, 3), (2, 3)):
        assert obdd[size]["status"] == "skipped: a smaller model hit the limit"
        assert obdd[size]["note"] == "the 1x2 model hit a compilation limit" and obdd[size]["explanations"] == 0
    assert all(r["status"] == "ok" and r["explanations"] == 2 for r in rows if r["language"] == "sat")


def test_the_budget_stops_a_cell_inside_an_explanation(tmp_path, monkeypatch):
    def endless(*a, **kw):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(kcxai, "ensemble_axp", endless)
    rows = run_ensembles(_cfg(tmp_path, budget=0.2))
    sat = next(r for r in rows if r["language"] == "sat")
    assert sat["status"] == "skipped: over budget" and sat["explanations"] == 0
    assert sat["note"].startswith("0 of 2 explained in ") and sat["note"].endswith("(budget 0.2 s)")
    obdd = next(r for r in rows if r["language"] == "obdd")
    # the interrupted engine is no checker; obdd has no other exact language to check it against
    assert obdd["status"] == "ok" and obdd["checks"] == ""
    md = (tmp_path / "ensembles.md").read_text(encoding="utf-8")
    assert "| skipped: over budget: 0 of 2 explained" in md


def test_checks_under_the_budget_and_an_interrupted_checker_is_not_used_again(tmp_path, monkeypatch):
    def endless(*a, **kw):
        while True:
            time.sleep(0.01)

    monkeypatch.setattr(kcxai, "is_idrs", endless)  # obdd's checks of the sat sets never end
    rows = run_ensembles(_cfg(tmp_path, budget=0.3, deltas=(Fraction(0), Fraction(1, 20))))
    by = {(r["language"], r["delta"]): r for r in rows}
    assert by[("obdd", "0")]["status"] == "ok" and by[("obdd", "0")]["checks"] == 2  # sat checked obdd's sets
    assert by[("obdd", "0")]["disagreements"] == 0 and by[("obdd", "0")]["note"] == ""
    assert by[("sat", "0")]["status"] == "ok" and by[("sat", "0")]["note"] == "checks stopped at the budget"
    assert by[("obdd", "1/20")]["status"] == "skipped: over budget"
    assert by[("obdd", "1/20")]["note"] == "interrupted at an earlier delta"


def test_training_over_budget_skips_the_model_and_the_larger_ones_of_its_family(tmp_path, monkeypatch):
    real = ens.train_ensemble

    def slow_gb(data, family, *a, **kw):
        while family == "gb":
            time.sleep(0.01)
        return real(data, family, *a, **kw)

    monkeypatch.setattr(ens, "train_ensemble", slow_gb)
    rows = run_ensembles(_cfg(tmp_path, models=("rf-hard", "gb"), trees=(1, 2), train_budget=0.2))
    gb = {(r["trees"], r["language"]): r for r in rows if r["model"] == "gb"}
    assert len(gb) == 4 and all(r["status"] == "skipped: training over budget" for r in gb.values())
    assert gb[(1, "obdd")]["note"].startswith("training stopped after ") and gb[(1, "obdd")]["nodes"] == ""
    assert gb[(2, "sat")]["note"] == "training the 1x2 model ran over budget"
    assert all(r["status"] == "ok" for r in rows if r["model"] == "rf-hard")
    assert "| gb | 2 | 2 |  | not trained | not trained |" in (tmp_path / "ensembles.md").read_text()


def test_deadline_restores_the_previous_handler():
    import signal

    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(OverBudget):
        with deadline(0.02):
            time.sleep(1)
    with deadline(5):
        pass
    assert signal.getsignal(signal.SIGALRM) == before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_resume_reuses_records_with_the_same_settings_only(tmp_path, monkeypatch):
    first = run_ensembles(_cfg(tmp_path))

    def no_training(*a, **kw):
        raise AssertionError("trained again")

    monkeypatch.setattr(ens, "train_ensemble", no_training)
    again = run_ensembles(_cfg(tmp_path, resume=True))
    assert again == first
    assert json.loads((tmp_path / "ensembles.json").read_text())["resumed_models"] == 1
    with pytest.raises(AssertionError, match="trained again"):  # another instance count: other records
        run_ensembles(_cfg(tmp_path, resume=True, instances=3))


@pytest.mark.parametrize("kw, message", [
    ({"trees": (0,)}, "'trees'"), ({"depths": (3, -1)}, "'depths'"), ({"languages": ("bdd",)}, "'languages'"),
    ({"models": ("svm",)}, "'models'"), ({"max_seconds": math.nan}, "'max_seconds'"),
    ({"budget": math.inf}, "'budget'"), ({"train_budget": 0}, "'train_budget'"), ({"dataset": "iris"}, "'dataset'"),
    ({"confidence": 1.0}, "'confidence'"),
    ({"deltas": ()}, "'deltas'"), ({"instances": 0}, "'instances'"), ({"sat_engine": "z3"}, "'sat_engine'"),
    ({"construction": "fast"}, "'construction'"),
])
def test_bad_config(tmp_path, kw, message):
    with pytest.raises(kcxai.InvalidInputError, match=message):
        run_ensembles(_cfg(tmp_path, **kw))


def test_a_missing_package_says_how_to_install_it(tmp_path, monkeypatch):
    from kcxai.experiments import _ensemble_models as em

    monkeypatch.setattr(em, "_installed", lambda pkg: pkg != "xgboost")
    assert "xgb" not in em.default_kinds() and "rf-soft" in em.default_kinds()
    with pytest.raises(kcxai.MissingDependencyError, match=r"pip install 'kcxai\[boost\]'"):
        run_ensembles(_cfg(tmp_path, models=("xgb",)))


@pytest.mark.parametrize("argv, message", [
    (["--trees", "-1"], "positive integer"),
    (["--depths", "0"], "positive integer"),
    (["--languages", "bdd"], "invalid choice"),
    (["--max-seconds", "nan"], "positive number of seconds"),
    (["--budget", "nan"], "positive number of seconds"),
    (["--budget", "-3"], "positive number of seconds"),
    (["--train-budget", "inf"], "positive number of seconds"),
    (["--confidence", "1"], "strictly between 0 and 1"),
    (["--models", "svm"], "invalid choice"),
    (["--dataset", "iris"], "invalid choice"),
    (["--max-memory", "0"], "positive integer"),
])
def test_cli_bad_options_are_one_line_errors(argv, message, capsys):
    assert main(["experiment", "ensembles", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") == 0


def test_every_kind_is_documented_in_the_help(capsys):
    assert main(["experiment", "ensembles", "--help"]) == 0
    out = capsys.readouterr().out
    assert all(k in out for k in MODEL_KINDS)


def test_a_cell_s_sat_calls_are_limited_to_what_is_left_of_its_budget(tmp_path, monkeypatch):
    # SIGALRM cannot stop a SAT call (the handler runs once the C call returns), so each explanation must be
    # given the rest of the cell's budget as its own max_seconds, and hitting that limit is the cell's budget
    real = kcxai.ensemble_axp
    limits = []

    def spy(*a, **kw):
        limits.append(kw.get("max_seconds", kcxai.explain.ensemble_sat.DEFAULT_SEARCH_SECONDS))
        return real(*a, **kw)

    monkeypatch.setattr(kcxai, "ensemble_axp", spy)
    run_ensembles(_cfg(tmp_path, budget=7.0))
    assert len(limits) == 2 and all(m is not None and 0 < m <= 7.0 for m in limits)


def test_a_search_limit_inside_a_cell_is_the_cell_s_budget_not_a_crash(tmp_path, monkeypatch):
    def limited(*a, **kw):
        raise kcxai.SearchLimitError("stopped", limit="max_seconds", seconds=1.0)

    monkeypatch.setattr(kcxai, "ensemble_axp", limited)
    rows = run_ensembles(_cfg(tmp_path))
    sat = next(r for r in rows if r["language"] == "sat")
    assert sat["status"] == "skipped: over budget" and sat["explanations"] == 0


def test_the_sat_checks_run_under_the_check_budget(tmp_path, monkeypatch):
    from kcxai.engines._ensemble_cnf import EnsembleCnf

    real = EnsembleCnf.changes
    seen = []

    def spy(self, point, label, fixed, deadline=None):
        seen.append(deadline)
        return real(self, point, label, fixed, deadline)

    monkeypatch.setattr(EnsembleCnf, "changes", spy)
    rows = run_ensembles(_cfg(tmp_path, budget=9.0))
    obdd = next(r for r in rows if r["language"] == "obdd")
    assert obdd["checks"] == 2 and obdd["disagreements"] == 0
    checks = [d for d in seen if d is not None and d.what.startswith("the checks")]
    assert checks and all(d.max_seconds == 9.0 for d in checks)
