"""The experiment runners (kcxai.experiments): data preparation, metrics, the paper-table and
languages runs on small samples, their checks, outputs and CLI. Anchor only if alibi imports."""

import csv
import io
import json
import sys
from fractions import Fraction

import numpy as np
import pytest

import kcxai
from kcxai.cli import main
from kcxai.experiments import (
    ExperimentCheckError,
    LanguagesConfig,
    PaperTableConfig,
    discretise,
    explained_instances,
    prepare_data,
    run_languages,
    run_paper_table,
    sampled_precision,
    subsample,
    train_tree,
)
from kcxai.experiments import paper_table as pt
from tests._support.paths import REPO

SMALL = ("allhyper", "ann_thyroid")  # the two datasets that load in well under a second


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# -- data preparation ----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(5))
def test_discretise_is_monotone_and_uses_every_bin(seed):
    rng = np.random.default_rng(seed)
    col = np.round(rng.exponential(size=500), 1 + seed % 2)  # ties and skew
    bins = int(rng.integers(2, 12))
    codes, labels = discretise(col, bins)
    assert len(labels) == codes.max() + 1 <= bins
    assert set(codes.tolist()) == set(range(len(labels)))
    order = np.argsort(col, kind="stable")
    assert np.all(np.diff(codes[order]) >= 0)  # a larger value never gets a smaller bin
    for k, lab in enumerate(labels):  # every value lies in the interval its label prints
        lo, hi = lab[1:-1].split(", ")
        vals = col[codes == k]
        assert lo == "-inf" or np.all(vals > float(lo))
        assert hi == "inf" or np.all(vals <= float(hi))


def test_discretise_constant_column_and_bad_bins():
    codes, labels = discretise([3.0, 3.0, 3.0], 10)
    assert codes.tolist() == [0, 0, 0] and labels == ("(-inf, inf)",)
    with pytest.raises(kcxai.InvalidInputError, match="'bins'"):
        discretise([1.0], 0)


def test_explained_instances_follows_the_protocol():
    assert len(explained_instances(9_999)) == round(0.3 * 9_999)
    assert len(explained_instances(10_000)) == 300
    rows = explained_instances(7_129, seed=3)
    assert len(rows) == 2_139 and len(set(rows.tolist())) == len(rows)
    assert rows.min() >= 0 and rows.max() < 7_129
    assert np.array_equal(rows, explained_instances(7_129, seed=3))
    assert not np.array_equal(rows, explained_instances(7_129, seed=4))
    with pytest.raises(kcxai.InvalidTypeError, match="'n_rows'"):
        explained_instances(0)


def test_subsample_is_a_seeded_subset():
    rows = np.arange(100, 200)
    s = subsample(rows, 10, seed=1)
    assert len(s) == 10 and set(s.tolist()) <= set(rows.tolist())
    assert np.array_equal(s, subsample(rows, 10, seed=1))
    assert np.array_equal(subsample(rows, 1000), rows)


def test_prepare_data_codes_and_split():
    data = prepare_data("ann_thyroid")
    assert data.X.dtype == np.int64 and data.X.shape == (7_129, 21)
    for j, size in enumerate(data.domain_sizes):
        assert set(data.X[:, j].tolist()) == set(range(size))
        assert len(data.labels[j]) == size
    assert len(set(data.train.tolist()) & set(data.test.tolist())) == 0
    assert len(data.train) + len(data.test) == data.n_rows
    with pytest.raises(kcxai.InvalidInputError, match="'test_size'"):
        prepare_data("allhyper", test_size=1.5)


@pytest.mark.parametrize("name", SMALL)
def test_tree_in_the_papers_range_and_predicts_like_sklearn(name):
    data = prepare_data(name)
    t = train_tree(data)
    assert 14 <= t.depth <= 60 and 49 <= t.n_nodes <= 9_969 and t.test_accuracy > 0.73
    assert t.tree.n_nodes == t.n_nodes and t.tree.depth == t.depth
    rows = np.random.default_rng(0).choice(data.n_rows, 300, replace=False)
    skl = t.clf.predict(data.X[rows])
    assert [t.tree.predict(data.X[r].tolist()) for r in rows] == skl.tolist()


# -- Anchor's sampled precision -----------------------------------------------------------


def test_sampled_precision_estimates_exact_precision_on_the_full_grid():
    # Sampling rows of the whole (uniform) feature space is sampling the uniform
    # distribution, so the estimate must be close to kcxai's exact precision.
    from sklearn.tree import DecisionTreeClassifier

    rng = np.random.default_rng(0)
    sizes = (3, 2, 4, 2)
    grid = np.array(np.meshgrid(*[range(s) for s in sizes], indexing="ij")).reshape(len(sizes), -1).T
    y = rng.integers(0, 3, size=len(grid))
    clf = DecisionTreeClassifier(random_state=0, max_depth=4).fit(grid, y)
    tree = kcxai.DecisionTree.from_sklearn(clf, domains=[list(range(s)) for s in sizes])
    n = 20_000
    for _ in range(10):
        x = grid[rng.integers(len(grid))]
        feats = [i for i in range(len(sizes)) if rng.random() < 0.5]
        exact = float(kcxai.precision(tree, x.tolist(), feats))
        est = sampled_precision(clf.predict, grid, x, feats, n_samples=n, rng=rng)
        assert abs(est - exact) <= 5 * (exact * (1 - exact) / n) ** 0.5 + 1e-9


def test_sampled_precision_bad_input():
    with pytest.raises(kcxai.InvalidInputError, match="'n_samples'"):
        sampled_precision(lambda X: X[:, 0], np.zeros((2, 2)), np.zeros(2), [0], n_samples=0)
    with pytest.raises(kcxai.InvalidInputError, match="'data'"):
        sampled_precision(lambda X: X[:, 0], np.zeros((2, 3)), np.zeros(2), [0])


# -- the paper-table run -------------------------------------------------------------------


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("paper")
    cfg = PaperTableConfig(datasets=SMALL, anchor=False, quick=True, out=str(out), progress=False,
                           plots=_have_matplotlib(), n_samples=200)
    return out, run_paper_table(cfg)


def _have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_quick_run_writes_the_tables(quick_run):
    out, res = quick_run
    for f in ("table.md", "table.csv", "table.tex", "comparison.md", "run.json"):
        assert (out / f).stat().st_size > 0
    table = _read_csv(out / "table.csv")
    assert [(r["dataset"], Fraction(r["delta"])) for r in table] == [
        (d, delta) for d in SMALL for delta in pt.DELTAS]
    info = json.loads((out / "run.json").read_text())
    assert info["trees"]["allhyper"]["kcxai_instances"] == PaperTableConfig.QUICK[0]
    assert "1113 / 20" in (out / "comparison.md").read_text()  # the paper's #I beside ours
    if _have_matplotlib():
        for f in ("length_vs_delta.png", "runtime.png"):
            assert (out / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_delta_zero_sets_are_exactly_precise(quick_run):
    out, _ = quick_run
    for name in SMALL:
        recs = pt.read_records(out / "records" / f"{name}.kcxai.csv")
        zero = [r for r in recs if r["delta"] == 0]
        assert len(zero) == PaperTableConfig.QUICK[0]
        assert all(Fraction(r["precision_exact_fraction"]) == 1 for r in zero)
    for r in _read_csv(out / "table.csv"):
        if Fraction(r["delta"]) == 0:
            assert float(r["exact_min"]) == 100.0


def test_records_are_minimal_sets_and_summaries_match(quick_run):
    out, res = quick_run
    for name in SMALL:
        data = prepare_data(name)
        tree = train_tree(data).tree
        recs = pt.read_records(out / "records" / f"{name}.kcxai.csv")
        for r in recs[::7]:
            x = data.X[r["row"]].tolist()
            feats = [int(f) for f in r["features"].split()]
            delta = Fraction(r["delta"]).limit_denominator(1000)
            assert kcxai.is_min_idrs(tree, x, feats, delta)
            assert float(kcxai.precision(tree, x, feats)) == pytest.approx(r["precision_exact"])
        for row in res["rows"]:
            if row["dataset"] != name:
                continue
            sel = [r for r in recs if r["delta"] == row["delta"]]
            assert row["len_avg"] == pytest.approx(np.mean([r["length"] for r in sel]))
            assert row["len_max"] == max(r["length"] for r in sel)
            assert row["time_max"] == pytest.approx(max(r["seconds"] for r in sel))
            assert row["cpu_avg"] == pytest.approx(np.mean([r["cpu_seconds"] for r in sel]))


def test_parallel_run_gives_the_same_sets(quick_run, tmp_path):
    out, _ = quick_run
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=False, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=200, n_jobs=2)
    run_paper_table(cfg)
    def key(r):
        return (r["row"], r["delta"], r["features"], r["precision_exact_fraction"], r["precision_sampled"])

    a = pt.read_records(out / "records" / "allhyper.kcxai.csv")
    b = pt.read_records(tmp_path / "records" / "allhyper.kcxai.csv")
    assert sorted(map(key, a)) == sorted(map(key, b))


def test_resume_reuses_records_and_new_settings_do_not(tmp_path, monkeypatch):
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=False, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=50, max_instances=4)
    run_paper_table(cfg)
    before = (tmp_path / "records" / "allhyper.kcxai.csv").read_text()

    def boom(*args, **kwargs):
        raise RuntimeError("explain_kcxai must not run when resuming")

    monkeypatch.setattr(pt, "explain_kcxai", boom)
    cfg.resume = True
    run_paper_table(cfg)
    assert (tmp_path / "records" / "allhyper.kcxai.csv").read_text() == before
    cfg.max_instances = 5  # other instances: the old records do not apply
    with pytest.raises(RuntimeError, match="must not run"):
        run_paper_table(cfg)
    cfg.max_instances = 4  # a truncated record file (a run killed mid-write by an older kcxai) is redone
    (tmp_path / "records" / "allhyper.kcxai.csv").write_text(before[: len(before) // 2])
    with pytest.raises(RuntimeError, match="must not run"):
        run_paper_table(cfg)
    monkeypatch.undo()
    run_paper_table(cfg)
    again = pt.read_records(tmp_path / "records" / "allhyper.kcxai.csv")
    assert [(r["row"], r["delta"], r["features"]) for r in again] == [
        (r["row"], r["delta"], r["features"]) for r in csv.DictReader(io.StringIO(before, newline=""))
        for r in [{**r, "row": int(r["row"]), "delta": float(r["delta"])}]]


def test_the_delta_zero_check_can_fail(tmp_path, monkeypatch):
    real = kcxai.min_idrs
    monkeypatch.setattr(kcxai, "min_idrs", lambda obj, x, d, **kw: real(obj, x, Fraction(1, 2), **kw))
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=False, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=10)
    with pytest.raises(ExperimentCheckError, match="exact precision"):
        run_paper_table(cfg)


def test_bad_config():
    with pytest.raises(kcxai.InvalidInputError, match="'datasets'"):
        run_paper_table(PaperTableConfig(datasets=("iris",), anchor=False, progress=False))
    with pytest.raises(kcxai.InvalidInputError, match="'n_jobs'"):
        run_paper_table(PaperTableConfig(datasets=("allhyper",), n_jobs=0, anchor=False, progress=False))


# -- fitted distributions, the C-delta mode, held-out rows --------------------------------------


def _fitted_tree(name, kind, k):
    data = prepare_data(name)
    trained = train_tree(data)
    dist = kcxai.fit_distribution(trained.tree, data.X[data.train], kind=kind, n_components=k, random_state=0)
    return data, trained, trained.tree.with_distribution(dist)


@pytest.fixture(scope="module")
def mixture_cdrs_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixture")
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=False, quick=True, out=str(out), progress=False, plots=False,
                           n_samples=50, max_instances=8, distribution="mixture", components=2, mode="cdrs",
                           deltas=(Fraction(95, 100), Fraction(99, 100)))
    return out, run_paper_table(cfg)


def test_cdrs_records_under_a_fitted_mixture_are_locally_minimal_c_delta_sets(mixture_cdrs_run):
    out, res = mixture_cdrs_run
    data, trained, tree = _fitted_tree("allhyper", "mixture", 2)
    recs = pt.read_records(out / "records" / "allhyper.kcxai-mixture2-cdrs.csv")
    assert len(recs) == 16 and {r["distribution"] for r in recs} == {"mixture of 2"}
    assert {r["mode"] for r in recs} == {"cdrs"}
    for r in recs:
        x = data.X[r["row"]].tolist()
        feats = [int(f) for f in r["features"].split()]
        delta = Fraction(r["delta"]).limit_denominator(100)
        assert Fraction(r["precision_exact_fraction"]) == kcxai.precision(tree, x, feats) >= delta
        assert kcxai.is_cdrs(tree, x, feats, delta)
        assert not any(kcxai.is_cdrs(tree, x, [f for f in feats if f != g], delta) for g in feats)
        e = kcxai.local_cdrs(tree, x, delta, start="path")
        assert list(e.features) == feats and Fraction(r["coverage_exact_fraction"]) == e.coverage
        m = kcxai.evaluate_on_data(trained.tree, e, data.X[data.test])
        assert (r["data_rows"], r["data_matching"]) == (m.rows, m.matching)
        assert r["data_precision"] == ("" if m.precision is None else pytest.approx(float(m.precision)))
        assert r["data_coverage"] == pytest.approx(float(m.coverage))
    row = [t for t in res["rows"] if t["delta"] == 0.95][0]
    sel = [r for r in recs if r["delta"] == 0.95]
    assert (row["distribution"], row["mode"]) == ("mixture of 2", "cdrs")
    assert row["coverage_avg"] == pytest.approx(100 * np.mean([r["coverage_exact"] for r in sel]))
    matched = [r["data_precision"] for r in sel if r["data_precision"] != ""]
    assert row["data_no_match"] == len(sel) - len(matched)
    assert row["data_prec_min"] == pytest.approx(100 * min(matched))
    assert row["cpu_median"] == pytest.approx(np.median([r["cpu_seconds"] for r in sel]))
    assert "mixture of 2 distribution fitted on the training rows" in (out / "table.md").read_text()


def test_product_idrs_records_are_min_idrs_under_the_fitted_product(tmp_path):
    cfg = PaperTableConfig(datasets=("ann_thyroid",), anchor=False, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=50, max_instances=6, distribution="product",
                           deltas=(Fraction(0), Fraction(1, 100)))
    res = run_paper_table(cfg)
    data, _, tree = _fitted_tree("ann_thyroid", "product", 8)
    recs = pt.read_records(tmp_path / "records" / "ann_thyroid.kcxai-product-idrs.csv")
    assert len(recs) == 12 and {r["distribution"] for r in recs} == {"product"}
    for r in recs:
        x = data.X[r["row"]].tolist()
        feats = [int(f) for f in r["features"].split()]
        delta = Fraction(r["delta"]).limit_denominator(100)
        assert kcxai.is_min_idrs(tree, x, feats, delta)
        assert Fraction(r["precision_exact_fraction"]) == kcxai.precision(tree, x, feats)
        if delta == 0:
            assert r["data_precision"] in ("", 1.0)  # a set with error 0 holds on every row
    assert isinstance(res["trees"]["ann_thyroid"]["fit_cpu_seconds"], float)  # measured (rounded to 0.01 s)


def test_the_default_is_the_papers_setting(quick_run):
    out, res = quick_run
    recs = pt.read_records(out / "records" / "allhyper.kcxai.csv")
    assert {r["distribution"] for r in recs} == {"uniform"} and {r["mode"] for r in recs} == {"idrs"}
    assert {r["distribution"] for r in res["rows"]} == {"uniform"}
    data = prepare_data("allhyper")
    tree = train_tree(data).tree
    for r in recs[::9]:
        e = kcxai.min_idrs(tree, data.X[r["row"]].tolist(), Fraction(r["delta"]).limit_denominator(100),
                           start="path", inflate=False)
        assert Fraction(r["coverage_exact_fraction"]) == e.coverage == Fraction(1, np.prod(
            [data.domain_sizes[f] for f in e.features], dtype=object))


def test_the_cdrs_bound_check_can_fail(tmp_path, monkeypatch):
    real = kcxai.local_cdrs
    monkeypatch.setattr(kcxai, "local_cdrs", lambda obj, x, d, **kw: real(obj, x, Fraction(1, 2), **kw))
    cfg = PaperTableConfig(datasets=("ann_thyroid",), anchor=False, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=10, mode="cdrs", deltas=(Fraction(999, 1000),))
    with pytest.raises(ExperimentCheckError, match="break its bound"):
        run_paper_table(cfg)


@pytest.mark.parametrize("field, value", [("distribution", "normal"), ("mode", "anchor"), ("components", 0),
                                          ("sample_seed", 1.5)])
def test_bad_setting(field, value):
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=False, progress=False)
    setattr(cfg, field, value)
    with pytest.raises(kcxai.InvalidInputError, match=f"'{field}'"):
        run_paper_table(cfg)


def test_held_out_matches_evaluate_on_data():
    from kcxai.experiments._settings import HeldOut

    data = prepare_data("allhyper")
    trained = train_tree(data)
    held = HeldOut.of(data, trained)
    for row in explained_instances(data.n_rows)[:5]:
        x = data.X[row]
        for delta in (0, Fraction(5, 100)):
            e = kcxai.min_idrs(trained.tree, x.tolist(), delta, start="path", inflate=False)
            m = kcxai.evaluate_on_data(trained.tree, e, data.X[data.test])
            assert held.measure(x, e.features, e.prediction) == (m.matching, m.agreeing)


def test_anchor_records_carry_held_out_figures_under_a_fitted_distribution(tmp_path, monkeypatch):
    """The Anchor wiring without alibi: a stand-in baseline that always anchors on feature 0."""
    from kcxai.experiments import _anchor

    class Stub:
        def __init__(self, predict, train, names, labels, *, threshold):
            pass

        def explain(self, x, *, seed):
            return _anchor.AnchorResult(features=(0,), precision=0.97, coverage=0.1, seconds=0.5, cpu_seconds=0.5)

    monkeypatch.setattr(_anchor, "import_anchor_tabular", lambda: None)
    monkeypatch.setattr(_anchor, "AnchorBaseline", Stub)
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=True, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=20, max_instances=4, anchor_max_instances=3,
                           distribution="product", mode="cdrs", deltas=(Fraction(95, 100),))
    res = run_paper_table(cfg)
    data, trained, tree = _fitted_tree("allhyper", "product", 8)
    recs = pt.read_records(tmp_path / "records" / "allhyper.anchor.csv")
    assert len(recs) == 3 and {r["distribution"] for r in recs} == {"product"}
    for r in recs:
        x = data.X[r["row"]]
        assert Fraction(r["precision_exact_fraction"]) == kcxai.precision(tree, x.tolist(), [0])
        mask = data.X[data.test][:, 0] == x[0]
        agree = trained.clf.predict(data.X[data.test][mask]) == r["prediction"]
        assert r["data_matching"] == mask.sum() and r["data_precision"] == pytest.approx(agree.mean())
    row = res["rows"][0]
    assert row["anchor_data_prec_avg"] == pytest.approx(100 * np.mean([r["data_precision"] for r in recs]))
    assert row["ratio_cpu_anchor_kcxai"] == pytest.approx(0.5 / row["kcxai_cpu_avg_same_instances"])


def test_side_by_side_quick(tmp_path):
    from kcxai.experiments.side_by_side import SideBySideConfig, run_side_by_side

    anchor = tmp_path / "anchor.csv"
    anchor.write_text("dataset,anchor_instances,anchor_len_avg,anchor_len_max,anchor_prec_avg,anchor_exact_avg,"
                      "anchor_exact_min,anchor_cpu_avg\nallhyper,300,1.5,4,98.0,90.0,40.0,0.5\n", encoding="utf-8")
    cfg = SideBySideConfig(datasets=("allhyper",), distributions=("uniform", "mixture"), components=2,
                           max_instances=5, anchor_table=str(anchor), n_samples=20, out=str(tmp_path / "out"),
                           progress=False)
    res = run_side_by_side(cfg)
    rows = res["rows"]
    assert [(r["distribution"], r["mode"], r["delta"]) for r in rows] == [
        ("uniform", "idrs", 0.01), ("uniform", "idrs", 0.05), ("uniform", "cdrs", 0.95),
        ("mixture of 2", "idrs", 0.01), ("mixture of 2", "idrs", 0.05), ("mixture of 2", "cdrs", 0.95)]
    for r in rows:
        assert r["anchor_len_avg"] == 1.5 and r["anchor_cpu_ms_avg"] == pytest.approx(500)
        assert r["ratio_cpu_anchor_kcxai"] == pytest.approx(500 / r["cpu_ms_avg"])
    # the instances are those the earlier run gave Anchor: the protocol subsampled with seed + 1
    recs = pt.read_records(tmp_path / "out" / "mixture-cdrs" / "records" / "allhyper.kcxai-mixture2-cdrs.csv")
    data = prepare_data("allhyper")
    assert sorted({r["row"] for r in recs}) == subsample(explained_instances(data.n_rows), 5, seed=1).tolist()
    t = res["targets"]["mixture_cdrs_0.95"]["allhyper"]
    cd = rows[-1]
    assert t["avg_ok"] == (cd["data_prec_avg"] >= 95) and t["shorter_ok"] == (cd["len_avg"] < 1.5)
    text = (tmp_path / "out" / "side_by_side.md").read_text(encoding="utf-8")
    assert "| allhyper | uniform | min_idrs delta=0.01 | 5 |" in text and "Targets" in text
    assert len(_read_csv(tmp_path / "out" / "side_by_side.csv")) == 6


# -- optional dependencies --------------------------------------------------------------------


def test_missing_alibi_is_a_clear_error_before_any_work(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "alibi", None)
    monkeypatch.setitem(sys.modules, "alibi.explainers", None)
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=True, quick=True, out=str(tmp_path), progress=False)
    with pytest.raises(kcxai.MissingDependencyError, match=r"kcxai\[anchor\].*--no-anchor"):
        run_paper_table(cfg)
    assert not (tmp_path / "records").exists()


def test_missing_matplotlib_is_a_clear_error(monkeypatch):
    from kcxai.experiments._plots import require_matplotlib

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(kcxai.MissingDependencyError, match=r"kcxai\[plot\].*--no-plots"):
        require_matplotlib()


def test_anchor_adapter(tmp_path):
    pytest.importorskip("alibi.explainers", exc_type=ImportError)
    cfg = PaperTableConfig(datasets=("allhyper",), anchor=True, quick=True, out=str(tmp_path), progress=False,
                           plots=False, n_samples=200, max_instances=6, anchor_max_instances=2)
    res = run_paper_table(cfg)
    data = prepare_data("allhyper")
    tree = train_tree(data).tree
    recs = pt.read_records(tmp_path / "records" / "allhyper.anchor.csv")
    assert len(recs) == 2
    kc_rows = {r["row"] for r in pt.read_records(tmp_path / "records" / "allhyper.kcxai.csv")}
    for r in recs:
        assert r["row"] in kc_rows  # Anchor explains a subset of kcxai's instances
        feats = [int(f) for f in r["features"].split()]
        assert all(0 <= f < data.n_features for f in feats)
        x = data.X[r["row"]].tolist()
        assert str(kcxai.precision(tree, x, feats)) == r["precision_exact_fraction"]
        assert 0 <= r["precision_alibi"] <= 1
    assert res["rows"][0]["anchor_instances"] == 2 and res["rows"][0]["ratio_anchor_kcxai"] > 0


# -- languages --------------------------------------------------------------------------------


def test_languages_agree_with_dt_or_say_why_not(tmp_path):
    cfg = LanguagesConfig(datasets=("allhyper",), languages=("dt", "sdd", "obdd"), quick=True, out=str(tmp_path),
                          progress=False, plots=False, families=("tree",))
    rows = run_languages(cfg)
    assert [r["language"] for r in rows] == ["dt", "sdd", "obdd"]
    assert rows[0]["status"] == "ok" and rows[0]["explanations"] == 5 * len(pt.DELTAS)
    for r in rows[1:]:
        if r["status"] == "ok":
            assert r["disagreements"] == 0 and r["explanations"] == rows[0]["explanations"]
            assert r["compile_seconds"] >= 0 and r["size"] != ""
        else:
            assert r["status"].startswith(("unavailable: ", "failed: ", "over limit: ")) and len(r["status"]) > 20
    assert len(_read_csv(tmp_path / "languages.csv")) == 3
    assert "| allhyper | tree |" in (tmp_path / "languages.md").read_text()


@pytest.mark.skipif(not kcxai.available_languages()["ddnnf"], reason="d4 (the d4 extra) is not installed")
def test_languages_compare_every_family_with_the_same_sets(tmp_path):
    cfg = LanguagesConfig(datasets=("allhyper",), languages=("dt", "obdd", "ddnnf"), quick=True, out=str(tmp_path),
                          progress=False, plots=False, instances=3, max_seconds=120,
                          families=("tree", "decision_list", "forest"))  # the score families: test_language_families
    rows = run_languages(cfg)
    assert [(r["family"], r["language"]) for r in rows] == [(f, lang) for f in ("tree", "decision_list", "forest")
                                                           for lang in ("dt", "obdd", "ddnnf")]
    for r in rows:
        if r["language"] == "dt" and r["family"] != "tree":
            assert r["status"].startswith("not applicable: dt does not take")
            continue
        assert r["status"] == "ok", r["status"]
        assert r["size"] != "" and r["edges"] != "" and r["size_unit"]
        first = "dt" if r["family"] == "tree" else "obdd"  # the reference: the first language that compiled it
        if r["language"] == first:
            assert r["reference"] == "" and r["disagreements"] == ""
        else:
            assert r["reference"] == first and r["disagreements"] == 0
    assert "| allhyper | forest |" in (tmp_path / "languages.md").read_text()


def test_languages_count_disagreements_with_dt(tmp_path, monkeypatch, capsys):
    # a fake second language that tries features in reverse order: some sets must differ from dt's
    import dataclasses

    real_compile, real_min = kcxai.compile_model, kcxai.min_idrs

    def fake_compile(tree, lang, **options):
        if lang == "obdd":
            raise kcxai.CompilationLimitError("too big for this test")
        c = real_compile(tree, "dt")
        return c if lang == "dt" else dataclasses.replace(c, language=lang, backend="fake")

    def fake_min(obj, x, d, **kw):
        if obj.language == "dt":
            return real_min(obj, x, d, **kw)
        return real_min(obj, x, d, order=list(range(len(x)))[::-1], **kw)

    monkeypatch.setattr(kcxai, "compile_model", fake_compile)
    monkeypatch.setattr(kcxai, "min_idrs", fake_min)
    rows = run_languages(LanguagesConfig(datasets=("allhyper",), languages=("dt", "brute", "obdd"), instances=30,
                                         out=str(tmp_path), progress=False, plots=False, families=("tree",)))
    assert rows[0]["disagreements"] == "" and rows[1]["backend"] == "fake"
    assert rows[2]["status"] == "over limit: too big for this test"
    assert 0 < rows[1]["disagreements"] <= rows[1]["explanations"]
    assert "differ from dt's" in capsys.readouterr().err


def test_languages_bad_input():
    with pytest.raises(kcxai.InvalidInputError, match="'languages'"):
        run_languages(LanguagesConfig(datasets=("allhyper",), languages=("bdd",), progress=False))


# -- CLI ------------------------------------------------------------------------------------------


def test_cli_paper_table(tmp_path, capsys):
    code = main(["experiment", "paper-table", "--quick", "--no-anchor", "--no-plots", "--datasets", "allhyper",
                 "--max-instances", "3", "--samples", "20", "--delta", "0", "1/20", "--out", str(tmp_path)])
    cap = capsys.readouterr()
    assert code == 0
    assert "| allhyper | 29 | 3 | 0 |" in cap.out
    assert "[allhyper kcxai]" in cap.err  # the progress indicator
    assert [r["delta"] for r in _read_csv(tmp_path / "table.csv")] == ["0.0", "0.05"]


def test_cli_paper_table_fitted_cdrs(tmp_path, capsys):
    code = main(["experiment", "paper-table", "--quick", "--no-anchor", "--no-plots", "--no-progress", "--datasets",
                 "allhyper", "--max-instances", "3", "--samples", "20", "--distribution", "mixture",
                 "--components", "2", "--mode", "cdrs", "--out", str(tmp_path)])
    assert code == 0
    table = _read_csv(tmp_path / "table.csv")
    assert [(r["delta"], r["distribution"], r["mode"]) for r in table] == [("0.95", "mixture of 2", "cdrs")]
    assert (tmp_path / "records" / "allhyper.kcxai-mixture2-cdrs.csv").exists()
    assert "local_cdrs" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["experiment", "paper-table", "--n-jobs", "0"], "non-zero"),
    (["experiment", "paper-table", "--datasets", "iris"], "invalid choice"),
    (["experiment", "paper-table", "--delta", "2"], "must be in [0, 1]"),
    (["experiment", "languages", "--instances", "0"], "positive integer"),
    (["experiment", "paper-table", "--distribution", "normal"], "invalid choice"),
    (["experiment", "paper-table", "--components", "0"], "positive integer"),
    (["experiment", "side-by-side", "--max-instances", "0"], "positive integer"),
])
def test_cli_usage_errors(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_cli_experiment_without_subcommand_prints_help(capsys):
    assert main(["experiment"]) == 2
    assert "paper-table" in capsys.readouterr().out


def test_docs_experiments_python_example_runs(capsys):
    import re

    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    section = text[text.index("## From Python"):]
    code = re.findall(r"^```python\n(.*?)^```", section, flags=re.M | re.S)
    assert code
    for block in code:
        exec(compile(block, "docs/experiments.md", "exec"), {"__name__": "docs"})
    last = capsys.readouterr().out.split()[-1]  # a probability (the on-data coverage)
    assert 0.0 <= float(last) <= 1.0


def test_paper_table_takes_the_bound_of_its_mode(capsys):
    from kcxai.cli import main

    assert main(["experiment", "paper-table", "--mode", "cdrs", "--delta", "0.05", "--quick"]) == 2
    assert "--mode cdrs bounds the precision: give --precision" in capsys.readouterr().err
    assert main(["experiment", "paper-table", "--precision", "0.9", "--quick"]) == 2
    assert "--mode idrs bounds the error: give --delta" in capsys.readouterr().err
