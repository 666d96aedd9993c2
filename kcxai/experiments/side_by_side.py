"""Distributions fitted from data, side by side: the paper-table run under every setting.

For each dataset, the same tree and the same instances are explained under the
uniform distribution (the paper's), a product distribution and a mixture of ``K``
products fitted on the training rows, each with min-I-delta-relevant sets (the
paper's deltas 0.01 and 0.05) and with locally minimal C-delta-relevant sets
(precision bound 0.95). Each setting is one :func:`run_paper_table` run (its
records and tables in a subdirectory); this module gathers them into one table
with Anchor's figures beside, read from an earlier paper-table run's
``table.csv`` (Anchor itself needs alibi, which is not run here).
"""

from __future__ import annotations

import csv
import datetime
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from kcxai._errors import InvalidInputError
from kcxai.experiments._settings import DISTRIBUTIONS
from kcxai.experiments.paper_table import PaperTableConfig, machine_info, run_paper_table

__all__ = ["SideBySideConfig", "run_side_by_side", "SETTINGS", "SIDE_COLUMNS", "read_anchor_table"]

#: ``(mode, deltas)`` run under every distribution.
SETTINGS: tuple[tuple[str, tuple[Fraction, ...]], ...] = (
    ("idrs", (Fraction(1, 100), Fraction(5, 100))),
    ("cdrs", (Fraction(95, 100),)),
)

#: Columns of ``side_by_side.csv``: precisions and coverages in %, times in CPU milliseconds.
SIDE_COLUMNS = (
    "dataset", "distribution", "mode", "delta", "n_instances", "len_avg", "len_max", "exact_prec_avg",
    "exact_prec_min", "sampled_prec_avg", "data_prec_avg", "data_prec_min", "data_prec_min_30", "data_below_80",
    "data_no_match",
    "coverage_avg", "data_cov_avg",
    "cpu_ms_avg", "cpu_ms_median", "fit_cpu_seconds", "data_rows",
    "anchor_instances", "anchor_len_avg", "anchor_len_max", "anchor_prec_sampled_avg", "anchor_exact_uniform_avg",
    "anchor_exact_uniform_min", "anchor_cpu_ms_avg", "ratio_cpu_anchor_kcxai",
)


@dataclass
class SideBySideConfig:
    """Settings of :func:`run_side_by_side`.

    Attributes
    ----------
    datasets : tuple of str
    distributions : tuple of str
        Among ``"uniform"``, ``"product"``, ``"mixture"``.
    components : int
        ``K`` of the mixture.
    settings : tuple of (mode, deltas)
        Default :data:`SETTINGS`.
    max_instances : int or None
        Instances per dataset: a seeded subsample of the protocol's with seed
        ``seed + 1``, i.e. the instances a full-protocol paper-table run with
        ``--anchor-max-instances`` of the same number gave Anchor.
    anchor_table : str or None
        ``table.csv`` of an earlier paper-table run with Anchor, whose Anchor
        columns are shown beside (``None``: no Anchor columns).
    seed, bins, n_samples, n_jobs, out, quick, progress
        As in :class:`PaperTableConfig`.
    """

    datasets: tuple[str, ...] = ("adult", "allhyper", "ann_thyroid", "fars", "kddcup")
    distributions: tuple[str, ...] = DISTRIBUTIONS
    components: int = 8
    settings: tuple[tuple[str, tuple[Fraction, ...]], ...] = SETTINGS
    max_instances: int | None = 300
    anchor_table: str | None = "docs/results/table.csv"
    seed: int = 0
    bins: int = 10
    n_samples: int = 1000
    n_jobs: int = 1
    out: str = "results/side-by-side"
    quick: bool = False
    progress: bool = field(default=True, repr=False)


def read_anchor_table(path: str | Path) -> dict[str, dict[str, Any]]:
    """Per dataset, the Anchor columns of a paper-table ``table.csv`` (empty when it has none)."""
    out: dict[str, dict[str, Any]] = {}
    with Path(path).open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row["dataset"] in out or not row.get("anchor_instances") or row["anchor_instances"] == "0":
                continue
            out[row["dataset"]] = {
                "anchor_instances": int(row["anchor_instances"]), "anchor_len_avg": float(row["anchor_len_avg"]),
                "anchor_len_max": int(row["anchor_len_max"]),
                "anchor_prec_sampled_avg": float(row["anchor_prec_avg"]),
                "anchor_exact_uniform_avg": float(row["anchor_exact_avg"]),
                "anchor_exact_uniform_min": float(row["anchor_exact_min"]),
                "anchor_cpu_ms_avg": 1000 * float(row["anchor_cpu_avg"])}
    return out


def _check(cfg: SideBySideConfig) -> None:
    bad = [d for d in cfg.distributions if d not in DISTRIBUTIONS]
    if bad or not cfg.distributions:
        raise InvalidInputError(f"'distributions' must be among {list(DISTRIBUTIONS)}. Got {list(cfg.distributions)}.")
    if not cfg.settings:
        raise InvalidInputError("'settings' must not be empty.")
    if cfg.anchor_table is not None and not Path(cfg.anchor_table).is_file():
        raise InvalidInputError(f"'anchor_table' must be an existing table.csv or None. Got {cfg.anchor_table!r}.")


def run_side_by_side(cfg: SideBySideConfig) -> dict[str, Any]:
    """Run every (distribution, mode) setting and write ``side_by_side.md`` / ``.csv`` / ``.json``.

    Returns
    -------
    dict
        ``rows`` (the table, one row per dataset, setting and delta), ``targets``
        (the issue's targets, measured) and the run's ``info``.

    Examples
    --------
    >>> import tempfile
    >>> from kcxai.experiments import SideBySideConfig, run_side_by_side
    >>> with tempfile.TemporaryDirectory() as out:
    ...     res = run_side_by_side(SideBySideConfig(
    ...         datasets=("allhyper",), distributions=("product",), max_instances=3, anchor_table=None,
    ...         n_samples=20, out=out, progress=False))
    >>> [(r["distribution"], r["mode"], r["delta"]) for r in res["rows"]]
    [('product', 'idrs', 0.01), ('product', 'idrs', 0.05), ('product', 'cdrs', 0.95)]
    """
    _check(cfg)
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    anchor = read_anchor_table(cfg.anchor_table) if cfg.anchor_table is not None else {}
    rows: list[dict[str, Any]] = []
    runs: dict[str, Any] = {}
    for dist in cfg.distributions:
        for mode, deltas in cfg.settings:
            pcfg = PaperTableConfig(
                datasets=cfg.datasets, deltas=deltas, distribution=dist, components=cfg.components, mode=mode,
                seed=cfg.seed, bins=cfg.bins, max_instances=cfg.max_instances, sample_seed=cfg.seed + 1,
                anchor=False, n_samples=cfg.n_samples, n_jobs=cfg.n_jobs, out=str(out / f"{dist}-{mode}"),
                resume=True, quick=cfg.quick, plots=False, progress=cfg.progress)
            res = run_paper_table(pcfg)
            runs[f"{dist}-{mode}"] = {"seconds": res["seconds"], "parts": res["parts"],
                                      "fit_cpu_seconds": {n: t["fit_cpu_seconds"] for n, t in res["trees"].items()}}
            for r in res["rows"]:
                rows.append(_side_row(r, res["trees"][r["dataset"]], anchor.get(r["dataset"], {})))
    order = {n: i for i, n in enumerate(cfg.datasets)}
    rows.sort(key=lambda r: order[r["dataset"]])  # stable: settings stay in run order
    info = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine_info(),
            "config": _config_dict(cfg), "runs": runs}
    targets = measure_targets(rows)
    with (out / "side_by_side.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=SIDE_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in SIDE_COLUMNS})
    (out / "side_by_side.json").write_text(json.dumps({**info, "targets": targets}, indent=1), encoding="utf-8")
    (out / "side_by_side.md").write_text(markdown(rows, targets, info), encoding="utf-8")
    return {"rows": rows, "targets": targets, "info": info}


def _side_row(r: dict[str, Any], tree: dict[str, Any], anchor: dict[str, Any]) -> dict[str, Any]:
    row = {"dataset": r["dataset"], "distribution": r["distribution"], "mode": r["mode"], "delta": r["delta"],
           "n_instances": r["n_instances"], "len_avg": r["len_avg"], "len_max": r["len_max"],
           "exact_prec_avg": r["exact_avg"], "exact_prec_min": r["exact_min"], "sampled_prec_avg": r["prec_avg"],
           "data_prec_avg": r["data_prec_avg"],
           "data_prec_min": r["data_prec_min"], "data_no_match": r["data_no_match"],
           "data_prec_min_30": r["data_prec_min_30"], "data_below_80": r["data_below_80"],
           "coverage_avg": r["coverage_avg"], "data_cov_avg": r["data_cov_avg"], "cpu_ms_avg": 1000 * r["cpu_avg"],
           "cpu_ms_median": 1000 * r["cpu_median"], "fit_cpu_seconds": tree.get("fit_cpu_seconds", ""),
           "data_rows": r["data_rows"], **anchor}
    if anchor and row["cpu_ms_avg"] > 0:
        row["ratio_cpu_anchor_kcxai"] = anchor["anchor_cpu_ms_avg"] / row["cpu_ms_avg"]
    return row


def measure_targets(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets, per dataset, on the rows of the mixture: C-delta at 0.95 (on-data
    precision avg >= 95% and min >= 80%, shorter than Anchor, >= 100x faster) and the median CPU
    time of min_idrs on adult (< 10 ms)."""
    cdrs = [r for r in rows if r["distribution"].startswith("mixture") and r["mode"] == "cdrs"
            and abs(float(r["delta"]) - 0.95) < 1e-9]
    per: dict[str, Any] = {}
    for r in cdrs:
        per[r["dataset"]] = {
            "data_prec_avg": r["data_prec_avg"], "data_prec_min": r["data_prec_min"],
            "avg_ok": r["data_prec_avg"] != "" and r["data_prec_avg"] >= 95,
            "min_ok": r["data_prec_min"] != "" and r["data_prec_min"] >= 80,
            "data_prec_min_30": r["data_prec_min_30"], "data_below_80": r["data_below_80"],
            "n_instances": r["n_instances"],
            "len_avg": r["len_avg"], "anchor_len_avg": r.get("anchor_len_avg", ""),
            "shorter_ok": "anchor_len_avg" in r and r["len_avg"] < r["anchor_len_avg"],
            "ratio_cpu": r.get("ratio_cpu_anchor_kcxai", ""),
            "faster_ok": "ratio_cpu_anchor_kcxai" in r and r["ratio_cpu_anchor_kcxai"] >= 100}
    adult = {f"{float(r['delta']):g}": r["cpu_ms_median"] for r in rows
             if r["dataset"] == "adult" and r["distribution"].startswith("mixture") and r["mode"] == "idrs"}
    return {"mixture_cdrs_0.95": per, "adult_mixture_min_idrs_cpu_ms_median": adult,
            "adult_ok": bool(adult) and all(v < 10 for v in adult.values())}


def _fmt(v: Any, digits: int = 1) -> str:
    if v == "" or v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}" if abs(v) >= 0.1 or v == 0 else f"{v:.2g}"
    return str(v)


def markdown(rows: Sequence[dict[str, Any]], targets: dict[str, Any], info: dict[str, Any]) -> str:
    """The side-by-side table, Anchor's row under each dataset, and the targets."""
    head = ["Dataset", "Distribution", "Setting", "#I", "Len avg", "Len M", "Exact prec avg", "Exact prec min",
            "Sampled prec avg", "Data prec avg", "Data prec min", "min (≥30 rows)", "< 80%", "no match",
            "Exact cov avg", "Data cov avg", "CPU ms avg", "CPU ms median", "Anchor/kcxai CPU"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    prev = None
    for r in rows:
        if prev is not None and r["dataset"] != prev:
            lines.append(_anchor_line([x for x in rows if x["dataset"] == prev][0]))
        first = r["dataset"] != prev
        prev = r["dataset"]
        setting = (f"min_idrs delta={float(r['delta']):g}" if r["mode"] == "idrs"
                   else f"local_cdrs precision>={float(r['delta']):g}")
        ratio = r.get("ratio_cpu_anchor_kcxai", "")
        lines.append("| " + " | ".join([
            r["dataset"] if first else "", r["distribution"], setting, str(r["n_instances"]), _fmt(r["len_avg"], 2),
            str(r["len_max"]), _fmt(r["exact_prec_avg"]), _fmt(r["exact_prec_min"]), _fmt(r["sampled_prec_avg"]),
            _fmt(r["data_prec_avg"]),
            _fmt(r["data_prec_min"]), _fmt(r["data_prec_min_30"]), str(r["data_below_80"]), str(r["data_no_match"]),
            _fmt(r["coverage_avg"], 2),
            _fmt(r["data_cov_avg"], 2), _fmt(r["cpu_ms_avg"], 2), _fmt(r["cpu_ms_median"], 2),
            f"{ratio:,.0f}x" if ratio != "" else "–"]) + " |")
    if prev is not None:
        lines.append(_anchor_line([x for x in rows if x["dataset"] == prev][0]))
    m = info["machine"]
    done = sorted(p["finished"] for run in info["runs"].values() for p in run["parts"].values() if p.get("finished"))
    when = f"Explanations computed {done[0]} to {done[-1]}, tables written {info['date']}" if done else info["date"]
    head_text = (f"{when} on {m['cpu']} ({m['cores']} cores), {m['os']}, Python {m['python']}, "
                 f"numpy {m['numpy']}, scikit-learn {m['scikit-learn']}; n_jobs={info['config']['n_jobs']}, "
                 f"seed={info['config']['seed']}, K={info['config']['components']}.\n\n")
    return ("# Distributions fitted from data, side by side\n\n" + head_text + "\n".join(lines) + "\n\n"
            + targets_markdown(targets))


def _anchor_line(r: dict[str, Any]) -> str:
    if "anchor_instances" not in r:
        return "|  | Anchor | (no earlier record) |" + " |" * 16
    return ("| " + " | ".join([
        "", "Anchor (exact: uniform)", "Anchor, threshold 0.95 (earlier run)", str(r["anchor_instances"]),
        _fmt(r["anchor_len_avg"], 2), str(r["anchor_len_max"]), _fmt(r["anchor_exact_uniform_avg"]),
        _fmt(r["anchor_exact_uniform_min"]), _fmt(r["anchor_prec_sampled_avg"]), "–", "–", "–", "–", "–", "–",
        "–",
        _fmt(r["anchor_cpu_ms_avg"], 1), "–", ""]) + " |")


def targets_markdown(targets: dict[str, Any]) -> str:
    """The targets as a small table plus the adult timing line."""
    lines = ["| Dataset | Data prec avg (>= 95) | Data prec min (>= 80) | min over rules matched by >= 30 rows "
             "| rules < 80% | Len avg / Anchor | Anchor/kcxai CPU (>= 100x) |",
             "|---|---|---|---|---|---|---|"]
    for name, t in targets["mixture_cdrs_0.95"].items():
        ok = lambda b: "yes" if b else "**no**"  # noqa: E731
        ratio = t["ratio_cpu"]
        lines.append(
            f"| {name} | {_fmt(t['data_prec_avg'])} {ok(t['avg_ok'])} | {_fmt(t['data_prec_min'])} {ok(t['min_ok'])} "
            f"| {_fmt(t['data_prec_min_30'])} | {t['data_below_80']} of {t['n_instances']} "
            f"| {_fmt(t['len_avg'], 2)} / {_fmt(t['anchor_len_avg'], 2)} {ok(t['shorter_ok'])} "
            f"| {f'{ratio:,.0f}x' if ratio != '' else '–'} {ok(t['faster_ok'])} |")
    adult = ", ".join(f"δ={d}: {v:.2f} ms" for d, v in targets["adult_mixture_min_idrs_cpu_ms_median"].items())
    return ("Targets (mixture, local_cdrs at 0.95):\n\n" + "\n".join(lines) + "\n\n"
            + f"min_idrs on adult under the mixture, median CPU per explanation: {adult or '–'} "
            + f"(target < 10 ms: {'met' if targets['adult_ok'] else 'not met'}).\n")


def _config_dict(cfg: SideBySideConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d.pop("progress", None)
    d["settings"] = [[m, [str(x) for x in ds]] for m, ds in cfg.settings]
    return d
