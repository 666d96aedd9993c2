"""Rules side by side: kcxai's C-delta sets, the same sets inflated, and Anchor, on the same rows and trees.

For each dataset: the paper-table tree (:func:`~kcxai.experiments.train_tree`), a mixture of ``K``
products fitted on the training rows, and the side-by-side run's instances (a seeded subsample of the
protocol's, seed ``seed + 1``). Each instance is explained by :func:`kcxai.local_cdrs` at precision
``delta`` from its path (today's rules: each feature fixed to the instance's bin), that set is widened by
:func:`kcxai.inflate`, and Anchor (alibi's ``AnchorTabular``, threshold ``delta``, every feature
categorical) is run on the same instances in its own environment, a subprocess
(:func:`kcxai.experiments._anchor.run_anchor`). All three rules are measured by the same code
(:class:`~kcxai.experiments._settings.HeldOut`) on the same held-out test rows: precision among the rows
meeting the rule, and coverage. kcxai's rules also carry their exact precision and coverage under the
mixture; Anchor's carry alibi's sampled estimates.

Targets (issue 20), measured and printed: held-out precision of inflated rules >= 95% on average on
every dataset; held-out coverage of inflated rules >= 3x today's rules', and >= Anchor's on at least 4 of
5 datasets at equal or higher held-out precision; inflation time <= 2x the set's own.
"""

from __future__ import annotations

import datetime
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import kcxai
from kcxai._errors import InvalidInputError
from kcxai.experiments import _anchor as anchors
from kcxai.experiments._data import explained_instances, prepare_data, subsample
from kcxai.experiments._settings import HeldOut, with_fitted_distribution
from kcxai.experiments._trees import train_tree
from kcxai.explain.inflate import box_of

if TYPE_CHECKING:  # pragma: no cover
    pass
    from kcxai.experiments._data import PreparedData
    from kcxai.experiments._trees import TrainedTree

__all__ = ["RulesConfig", "run_rules", "rules_markdown"]


@dataclass
class RulesConfig:
    """Settings of :func:`run_rules`.

    Attributes
    ----------
    datasets : tuple of str
    delta : Fraction
        The precision bound of the C-delta sets, and Anchor's threshold.
    components : int
        ``K`` of the mixture fitted on the training rows.
    max_instances : int
        Instances per dataset (the side-by-side run's subsample).
    anchor_python : str or None
        The Python of the separate Anchor environment; ``None``: no Anchor.
    seed, bins : int
        As in :class:`~kcxai.experiments.PaperTableConfig`.
    out : str
        Output directory; Anchor's results are kept per dataset (``anchor/<dataset>/``) and reused when
        the instances, tree and threshold are the same.
    """

    datasets: tuple[str, ...] = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
    delta: Fraction = Fraction(95, 100)
    components: int = 8
    max_instances: int = 300
    anchor_python: str | None = "/work/venvs/anchor/bin/python"
    seed: int = 0
    bins: int = 10
    out: str = "results/rules"
    progress: bool = field(default=True, repr=False)


def _explain_kcxai(data: PreparedData, trained: TrainedTree, rows: Sequence[int], delta: Fraction, held: HeldOut
                   ) -> list[dict[str, Any]]:
    compiled = kcxai.compile_model(trained.tree, "dt")
    space = compiled.oracle.space
    predict = trained.clf.predict
    out = []
    for r in rows:
        x = data.X[r]
        t0 = time.process_time()
        e = kcxai.local_cdrs(compiled, x.tolist(), delta, start="path")
        t1 = time.process_time()
        wide = kcxai.inflate(compiled, e)
        t2 = time.process_time()
        pred = predict(x.reshape(1, -1))[0]
        if e.prediction != pred or wide.precision is None or wide.precision < delta:
            raise InvalidInputError(f"{data.name} row {r}: the inflated rule breaks its bound or the prediction.")
        rec: dict[str, Any] = {"row": int(r), "len": len(e), "len_inflated": len(wide),
                               "cpu_set": t1 - t0, "cpu_inflate": t2 - t1,
                               "exact_prec": float(e.precision or 0), "exact_cov": float(e.coverage or 0),
                               "exact_prec_inflated": float(wide.precision),
                               "exact_cov_inflated": float(wide.coverage or 0),
                               "rule_inflated": _readable(data, wide)}
        for key, box in (("", box_of(space, e)), ("_inflated", box_of(space, wide))):
            matching, agreeing = held.measure_box(box, pred)
            rec["data_matching" + key] = matching
            rec["data_prec" + key] = agreeing / matching if matching else None
        out.append(rec)
    return out


def _readable(data: PreparedData, e: Any) -> str:
    """A widened rule with the data's labels of the codes (the bins' intervals, the categories)."""
    conds = [f"{c.name} in {{{', '.join(data.labels[c.feature][k] for k in c.values)}}}" if len(c.values) > 1
             else f"{c.name} = {data.labels[c.feature][c.values[0]]}" for c in e.conditions]
    return f"IF {' AND '.join(conds) or 'TRUE'} THEN class = {e.prediction}"


def _anchor(cfg: RulesConfig, data: PreparedData, trained: TrainedTree, rows: Sequence[int], held: HeldOut
            ) -> list[dict[str, Any]]:
    assert cfg.anchor_python is not None
    job = Path(cfg.out) / "anchor" / data.name
    key = {"rows": [int(r) for r in rows], "threshold": float(cfg.delta), "seed": cfg.seed, "bins": cfg.bins,
           "n_nodes": trained.n_nodes}
    cached = job / "key.json"
    if cached.exists() and (job / "anchors.json").exists() and json.loads(cached.read_text()) == key:
        result = json.loads((job / "anchors.json").read_text(encoding="utf-8"))
    else:
        result = anchors.run_anchor(cfg.anchor_python, job, clf=trained.clf, train=data.X[data.train],
                                    instances=data.X[rows], rows=rows, feature_names=data.feature_names,
                                    labels=data.labels, threshold=float(cfg.delta), seed=cfg.seed)
        cached.write_text(json.dumps(key), encoding="utf-8")
    out = []
    for a in result["anchors"]:
        x = data.X[a["row"]]
        box = tuple(((1 << k) if f in a["features"] else -1) for f, k in enumerate(x.tolist()))
        matching, agreeing = held.measure_box(box, a["prediction"])
        out.append({"row": a["row"], "len": len(a["features"]), "cpu": a["cpu_seconds"], "seconds": a["seconds"],
                    "alibi_prec": a["precision"], "alibi_cov": a["coverage"], "data_matching": matching,
                    "data_prec": agreeing / matching if matching else None})
    return out


def _mean(xs: Any) -> float | str:
    xs = [x for x in xs if x is not None]
    return float(statistics.fmean(xs)) if xs else ""


def _summary(name: str, n_test: int, recs: list[dict[str, Any]], anchors: list[dict[str, Any]]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "dataset": name, "n_instances": len(recs), "n_test": n_test,
        "len_avg": _mean(r["len"] for r in recs), "len_inflated_avg": _mean(r["len_inflated"] for r in recs),
        "exact_prec_avg": 100 * _mean(r["exact_prec"] for r in recs),
        "exact_prec_inflated_avg": 100 * _mean(r["exact_prec_inflated"] for r in recs),
        "exact_cov_avg": 100 * _mean(r["exact_cov"] for r in recs),
        "exact_cov_inflated_avg": 100 * _mean(r["exact_cov_inflated"] for r in recs),
        "data_prec_avg": 100 * _mean(r["data_prec"] for r in recs),
        "data_prec_inflated_avg": 100 * _mean(r["data_prec_inflated"] for r in recs),
        "data_cov_avg": 100 * _mean(r["data_matching"] / n_test for r in recs),
        "data_cov_inflated_avg": 100 * _mean(r["data_matching_inflated"] / n_test for r in recs),
        "no_match": sum(r["data_matching"] == 0 for r in recs),
        "no_match_inflated": sum(r["data_matching_inflated"] == 0 for r in recs),
        "cpu_set_ms": 1000 * _mean(r["cpu_set"] for r in recs),
        "cpu_inflate_ms": 1000 * _mean(r["cpu_inflate"] for r in recs)}
    row["inflate_time_ratio"] = row["cpu_inflate_ms"] / row["cpu_set_ms"] if row["cpu_set_ms"] else ""
    if anchors:
        row.update({
            "anchor_instances": len(anchors), "anchor_len_avg": _mean(a["len"] for a in anchors),
            "anchor_alibi_prec_avg": 100 * _mean(a["alibi_prec"] for a in anchors),
            "anchor_alibi_cov_avg": 100 * _mean(a["alibi_cov"] for a in anchors),
            "anchor_data_prec_avg": 100 * _mean(a["data_prec"] for a in anchors),
            "anchor_data_cov_avg": 100 * _mean(a["data_matching"] / n_test for a in anchors),
            "anchor_no_match": sum(a["data_matching"] == 0 for a in anchors),
            "anchor_cpu_ms": 1000 * _mean(a["cpu"] for a in anchors)})
    return row


def targets(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets, per dataset and overall."""
    per = {}
    for r in rows:
        cov_ratio = r["data_cov_inflated_avg"] / r["data_cov_avg"] if r["data_cov_avg"] else float("inf")
        t = {"prec_ok": r["data_prec_inflated_avg"] != "" and r["data_prec_inflated_avg"] >= 95,
             "cov_ratio": cov_ratio, "cov_3x_ok": cov_ratio >= 3,
             "time_ok": r["inflate_time_ratio"] != "" and r["inflate_time_ratio"] <= 2}
        if "anchor_data_cov_avg" in r:
            t["beats_anchor"] = (r["data_cov_inflated_avg"] >= r["anchor_data_cov_avg"]
                                 and r["data_prec_inflated_avg"] >= r["anchor_data_prec_avg"])
        per[r["dataset"]] = t
    n_beat = sum(bool(t.get("beats_anchor")) for t in per.values())
    return {"per_dataset": per, "beats_anchor_on": n_beat,
            "anchor_ok": n_beat >= min(4, len(per)) if any("beats_anchor" in t for t in per.values()) else None}


def run_rules(cfg: RulesConfig) -> dict[str, Any]:
    """Run the comparison and write ``rules.md`` / ``rules.json`` (and per-instance ``records/``) in ``cfg.out``.

    Examples
    --------
    >>> import tempfile
    >>> from kcxai.experiments.rules import RulesConfig, run_rules
    >>> with tempfile.TemporaryDirectory() as out:
    ...     res = run_rules(RulesConfig(datasets=("allhyper",), max_instances=3, anchor_python=None, out=out,
    ...                                 components=2, progress=False))
    >>> res["rows"][0]["n_instances"], res["rows"][0]["exact_prec_inflated_avg"] >= 95
    (3, True)
    """
    out = Path(cfg.out)
    (out / "records").mkdir(parents=True, exist_ok=True)
    rows, seconds = [], {}
    for name in cfg.datasets:
        t0 = time.perf_counter()
        data = prepare_data(name, bins=cfg.bins, seed=cfg.seed)
        trained, _ = with_fitted_distribution(data, train_tree(data, seed=cfg.seed), "mixture",
                                              components=cfg.components, seed=cfg.seed)
        protocol = explained_instances(data.n_rows, seed=cfg.seed)
        picked = subsample(protocol, cfg.max_instances, seed=cfg.seed + 1)
        held = HeldOut.of(data, trained)
        recs = _explain_kcxai(data, trained, picked.tolist(), cfg.delta, held)
        anchors = _anchor(cfg, data, trained, picked.tolist(), held) if cfg.anchor_python is not None else []
        (out / "records" / f"{name}.json").write_text(json.dumps({"kcxai": recs, "anchor": anchors}),
                                                      encoding="utf-8")
        rows.append(_summary(name, len(held.X), recs, anchors))
        seconds[name] = round(time.perf_counter() - t0, 1)
        if cfg.progress:
            print(f"{name}: done in {seconds[name]} s", flush=True)
    info: dict[str, Any] = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "config": {**asdict(cfg), "delta": str(cfg.delta)}, "seconds": seconds, "load": _load()}
    info["config"].pop("progress", None)
    tg = targets(rows)
    (out / "rules.json").write_text(json.dumps({"info": info, "rows": rows, "targets": tg}, indent=1),
                                    encoding="utf-8")
    (out / "rules.md").write_text(rules_markdown(rows, tg, info), encoding="utf-8")
    return {"rows": rows, "targets": tg, "info": info}


def _load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text(encoding="utf-8").split()[:3])
    except OSError:  # pragma: no cover - not Linux
        return ""


def _f(v: Any, digits: int = 1) -> str:
    if v == "" or v is None:
        return "–"
    return f"{v:.{digits}f}" if abs(v) >= 0.1 or v == 0 else f"{v:.2g}"


def rules_markdown(rows: list[dict[str, Any]], tg: dict[str, Any], info: dict[str, Any]) -> str:
    """One table with both tools, and the targets."""
    head = ["Dataset", "Rules", "#I", "Len avg", "Exact prec avg (mixture)", "Exact cov avg (mixture)",
            "Held-out prec avg", "Held-out cov avg", "no held-out match", "CPU ms avg"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([r["dataset"], "kcxai local_cdrs (instance's bins)", str(r["n_instances"]),
                                        _f(r["len_avg"], 2), _f(r["exact_prec_avg"]), _f(r["exact_cov_avg"], 2),
                                        _f(r["data_prec_avg"]), _f(r["data_cov_avg"], 2), str(r["no_match"]),
                                        _f(r["cpu_set_ms"], 2)]) + " |")
        lines.append("| " + " | ".join(["", "kcxai local_cdrs, inflated", str(r["n_instances"]),
                                        _f(r["len_inflated_avg"], 2), _f(r["exact_prec_inflated_avg"]),
                                        _f(r["exact_cov_inflated_avg"], 2), _f(r["data_prec_inflated_avg"]),
                                        _f(r["data_cov_inflated_avg"], 2), str(r["no_match_inflated"]),
                                        f"+{_f(r['cpu_inflate_ms'], 2)}"]) + " |")
        if "anchor_instances" in r:
            lines.append("| " + " | ".join([
                "", "Anchor (alibi; sampled estimates)", str(r["anchor_instances"]), _f(r["anchor_len_avg"], 2),
                f"{_f(r['anchor_alibi_prec_avg'])} (alibi)", f"{_f(r['anchor_alibi_cov_avg'], 2)} (alibi)",
                _f(r["anchor_data_prec_avg"]), _f(r["anchor_data_cov_avg"], 2), str(r["anchor_no_match"]),
                _f(r["anchor_cpu_ms"], 1)]) + " |")
    t = ["| Dataset | held-out prec of inflated >= 95 | held-out cov inflated / today (>= 3x) "
         "| >= Anchor's cov at >= its prec | inflation / set CPU (<= 2x) |", "|---|---|---|---|---|"]
    ok = lambda b: "–" if b is None else ("yes" if b else "**no**")  # noqa: E731
    for r in rows:
        p = tg["per_dataset"][r["dataset"]]
        t.append(f"| {r['dataset']} | {_f(r['data_prec_inflated_avg'])} {ok(p['prec_ok'])} "
                 f"| {_f(p['cov_ratio'], 1)}x {ok(p['cov_3x_ok'])} | {ok(p.get('beats_anchor'))} "
                 f"| {_f(r['inflate_time_ratio'], 2)}x {ok(p['time_ok'])} |")
    c = info["config"]
    return (f"# Rules side by side: C-delta sets, inflated, and Anchor\n\n{info['date']}; delta = {c['delta']}, "
            f"mixture of K = {c['components']} fitted on the training rows, {c['max_instances']} instances per "
            f"dataset, seed {c['seed']}; load average at the end {info['load']}.\n"
            "Held-out figures: the same code (HeldOut.measure_box) on the same test rows for every rule; "
            "precision averages over rules matched by at least one row. Percentages.\n\n"
            + "\n".join(lines) + "\n\n" + "\n".join(t)
            + f"\n\nInflated rules match or beat Anchor on {tg['beats_anchor_on']} of {len(rows)} datasets.\n")
