"""What a result says of how it was decided: a sampled result names why each sampled test was not proven
(:attr:`kcxai.Explanation.missed`), the limit it stopped at and the option that raises it, through every
door (the functional API, the Explainer on a scikit-learn Pipeline, batches, the command line).

Sampling is forced by shrinking the refinement budgets (counted in boxes and nodes: the same on any
machine); the clock's reasons ("box deadline", "conditioned clock") by making the branch and bound or
the conditioned compile report that stop, never by timing.
"""

from __future__ import annotations

import functools
import json
from fractions import Fraction


import kcxai
from kcxai.cli import main
from kcxai.compilers._limits import LimitHit
from kcxai.engines._box_bounds import STOPS, BoxBounds, WeightBounds
from kcxai.engines.choose import ProbeBudget
from kcxai.explain import _proven
from kcxai.explain.explanation import MISSED_LIMITS, format_missed, missed_options
from kcxai.explanation_set import Unpacker, pack

#: No refinement: every test whose interval straddles its bound is sampled.
NONE = _proven.RefineBudget(conditioned_nodes=1, count_nodes=1, box_boxes=1, final_boxes=1)
#: The exact probe refused at once (the bounded form within the fit budget is used).
REFUSED = ProbeBudget(max_seconds=1e-9)


@functools.cache
def _pipeline():
    """A small forest behind an imputer on breast_cancer, its training table and three rows."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import make_pipeline
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    pipe = make_pipeline(SimpleImputer(), RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0))
    return pipe.fit(X, y), X


@functools.cache
def _explainer():
    """The pipeline's Explainer with no exact form (the bounded one), built once (the tests only explain)."""
    pipe, X = _pipeline()
    return kcxai.Explainer(pipe, X, probe=REFUSED, fit_budget=2, progress=False)


def _check_said(e: kcxai.Explanation) -> None:
    """A result's ``missed`` agrees with how it was decided, and every door shows it."""
    if e.decided != "sampled":
        assert e.missed == () and e.to_dict()["missed"] == {} and "not proven" not in str(e)
        return
    assert e.missed and sum(n for _, n in e.missed) == e.sampled
    assert list(e.missed) == sorted(e.missed)
    d = e.to_dict()
    assert d["missed"] == dict(e.missed) and d["missed_options"] == list(missed_options(e.missed))
    json.dumps(d)
    said = format_missed(e.missed)
    assert said in str(e) and said.split(";")[0] in e._repr_html_()
    for option in missed_options(e.missed):
        assert f"{option}=" in str(e)


def test_every_reason_the_prover_gives_has_its_limit_and_option():
    stops = [f"box {s}" for s in STOPS] + ["box none"]
    for reason in [f"{b}, conditioned {c}" for b in stops for c in ("limit", "clock", "skipped")]:
        for step in reason.split(", "):
            if step in ("box exact", "box margin", "box decided"):  # these decide the test: never a miss
                continue
            limit, option, clock = MISSED_LIMITS[step]
            assert option in ("fit_budget", "max_seconds", "probe") and limit
            assert clock == (step in ("box deadline", "conditioned clock"))
    assert missed_options((("box deadline, conditioned skipped", 1), ("box max_boxes, conditioned limit", 2))) == (
        "max_seconds", "fit_budget")
    assert "another run may prove them" in format_missed((("box max_boxes, conditioned clock", 1),))
    assert "another run" not in format_missed((("box max_boxes, conditioned limit", 1),))
    assert format_missed(()) == ""


def test_the_explainer_on_a_pipeline_says_why_sampled_rows_were_not_proven(monkeypatch):
    monkeypatch.setattr(_proven, "REFINE", NONE)
    pipe, X = _pipeline()
    explainer = _explainer()
    assert explainer.language_ == "bounded"
    result = explainer.explain(X.iloc[:3], method="local_cdrs", precision=0.95)
    frame = result.to_frame()
    sampled = [e for e in result.explanations if e.decided == "sampled"]
    assert sampled  # no refinement: the straddling tests were sampled
    for k, e in enumerate(result.explanations):
        _check_said(e)
        if e.decided == "sampled":
            assert frame["missed"][k] == "; ".join(f"{r}: {n}" for r, n in e.missed)
            assert frame["missed_options"][k] == "fit_budget"  # counted budgets: a larger fit budget
            assert all(r.startswith("box max_boxes") for r, _ in e.missed)
        else:
            assert frame["missed"][k] is None
        # what a worker process sends back keeps it
        assert Unpacker(explainer.model_.space)(pack(e, e.instance, Unpacker(explainer.model_.space)),
                                                e.instance) == e
    again = explainer.explain(X.iloc[:3], method="local_cdrs", precision=0.95)
    assert [e.missed for e in again.explanations] == [e.missed for e in result.explanations]


def _bounded_model():
    explainer = _explainer()
    return explainer, explainer.model_, explainer.instances(_pipeline()[1].iloc[:2])


def test_the_clock_reasons_reach_the_result_and_say_so(monkeypatch):
    """The branch and bound stopped by the row's deadline, the conditioned compile by its safety limit in
    seconds: each reported by the step itself (forced here), and named in the result with its option."""
    def at_deadline(self, box, label, threshold, *, deadline=None, max_boxes=None, **limits):
        space = self.space
        return WeightBounds(0, space.total_weight, space.total_weight, space.total_weight, label,
                            space.distribution.kind, 1, "deadline", 0.0)

    def clock(*args, **kwargs):
        raise LimitHit("Compiling to 'conditioned ensemble' exceeded max_seconds=60", "max_seconds")

    monkeypatch.setattr(_proven, "REFINE", _proven.RefineBudget())
    monkeypatch.setattr(BoxBounds, "decide", at_deadline)
    monkeypatch.setattr(_proven, "conditioned_counts", clock)
    explainer, model, rows = _bounded_model()
    compiled = explainer.engine_for("local_cdrs").compiled
    results = [kcxai.local_cdrs(compiled, row, 0.95) for row in rows]  # the functional door
    sampled = [e for e in results if e.decided == "sampled"]
    assert sampled
    for e in results:
        _check_said(e)
    reasons = {r for e in sampled for r, _ in e.missed}
    assert "box deadline, conditioned clock" in reasons
    assert reasons <= {"box deadline, conditioned clock", "box deadline, conditioned skipped"}
    for e in sampled:
        assert missed_options(e.missed) == ("max_seconds", "fit_budget")
        assert "another run may prove them" in str(e) and "max_seconds=" in str(e)


def test_a_model_answered_by_sampling_alone_names_the_probe(monkeypatch):
    explainer, model, rows = _bounded_model()
    e = kcxai.local_cdrs(kcxai.compile_model(model, "sampling"), rows[0], Fraction(95, 100))
    assert e.decided == "sampled" and e.missed == (("sampling", e.sampled),) and e.sampled > 0
    assert missed_options(e.missed) == ("probe",) and "probe=ProbeBudget" in str(e)
    _check_said(e)


def test_exact_results_miss_nothing():
    tree = kcxai.datasets.running_example_tree()
    e = kcxai.min_idrs(tree, (1, 1, 1, 1, 0, 0, 0, 0, 1), Fraction(3, 100))
    assert e.missed == () and e.to_dict()["missed"] == {} and e.to_dict()["missed_options"] == []
    _check_said(e)


def test_the_command_line_prints_and_writes_why(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(_proven, "REFINE", NONE)
    monkeypatch.setattr("kcxai.explainer.PROBE", REFUSED)  # the command line's Explainer: the bounded form
    explainer, model, rows = _bounded_model()
    path = tmp_path / "forest.json"
    model.save(str(path))
    same = kcxai.Explainer(model, probe=REFUSED, fit_budget=0.5, progress=False)  # what the command line builds
    want = [same.explain_one(row, method="local_cdrs", precision=0.95) for row in rows]
    assert any(e.decided == "sampled" for e in want)
    for row, e in zip(rows, want):
        argv = ["explain", str(path), "--instance", json.dumps([float(v) for v in row]), "--method", "local_cdrs",
                "--precision", "0.95", "--fit-budget", "0.5"]
        assert main(argv + ["--json"]) == 0
        d = json.loads(capsys.readouterr().out)
        assert (d["decided"], d["missed"], d["missed_options"]) == (e.decided, dict(e.missed),
                                                                     list(missed_options(e.missed)))
        assert main(argv) == 0
        shown = capsys.readouterr().out
        assert (format_missed(e.missed) in shown) == bool(e.missed)
    data, out = tmp_path / "rows.csv", tmp_path / "out.csv"
    _pipeline()[1].iloc[:2].to_csv(data, index=False)
    assert main(["explain-csv", str(path), str(data), "--out", str(out), "--method", "local_cdrs",
                 "--precision", "0.95", "--fit-budget", "0.5"]) == 0
    import pandas as pd
    frame = pd.read_csv(out)
    n_sampled = sum(e.decided == "sampled" for e in want)
    assert frame["missed"].notna().sum() == n_sampled
    assert f"{n_sampled} of 2 rows sampled some decisions" in capsys.readouterr().err


def test_the_explainer_says_which_options_would_prove_more():
    reason = _explainer().language_reason_
    assert "fit_budget=" in reason and "probe=ProbeBudget(max_seconds=60)" in reason and "'missed'" in reason
