"""Summary of the experiment's records, and the tables (Markdown, CSV, LaTeX)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kcxai._files import atomic_writer, write_text
from kcxai.experiments._plots import plot_paper_table

__all__ = ["summarise", "write_tables", "PAPER_RESULTS", "TABLE_COLUMNS"]

#: The paper's Table "tab:res" (idrs = the paper's prototype, ITI trees, Anchor
#: on the same trees): per dataset ``(#F, #I, {delta: (len M, len avg, prec avg,
#: prec dev, time m, time M, time avg)}, (anchor len M, len avg, prec avg, prec
#: dev, time m, time M, time avg))``; precision in %, times in seconds.
PAPER_RESULTS: dict[str, tuple[int, int, dict[float, tuple[float, ...]], tuple[float, ...]]] = {
    "adult": (12, 1766, {0.0: (10, 5.1, 100, 0.0, 0.04, 0.07, 0.05), 0.01: (6, 3.3, 85.7, 20.8, 0.04, 0.08, 0.04),
                         0.02: (6, 2.8, 83.0, 16.4, 0.04, 0.08, 0.05), 0.05: (5, 1.9, 77.7, 21.0, 0.04, 0.11, 0.06)},
              (12, 5.3, 87.8, 16.7, 0.14, 2.99, 1.20)),
    "allhyper": (29, 1113, {0.0: (7, 4.4, 100, 0.0, 0.05, 0.05, 0.05), 0.01: (6, 3.0, 98.4, 4.3, 0.04, 0.08, 0.05),
                            0.02: (6, 1.0, 97.7, 6.3, 0.05, 0.07, 0.05), 0.05: (4, 1.0, 97.7, 6.3, 0.04, 0.10, 0.05)},
                 (29, 1.2, 89.5, 7.0, 0.28, 5.75, 0.35)),
    "ann_thyroid": (21, 2139, {0.0: (10, 3.9, 100, 0.0, 0.08, 0.10, 0.08),
                               0.01: (6, 1.4, 96.9, 11.4, 0.07, 0.13, 0.08),
                               0.02: (6, 1.0, 96.8, 11.2, 0.08, 0.12, 0.08),
                               0.05: (5, 0.1, 95.2, 9.9, 0.07, 0.17, 0.10)},
                    (21, 1.3, 96.4, 8.7, 0.22, 8.63, 0.48)),
    "fars": (29, 2790, {0.0: (15, 5.9, 100, 0.0, 0.67, 0.92, 0.69), 0.01: (6, 2.0, 75.2, 30.9, 0.58, 0.81, 0.69),
                        0.02: (6, 2.1, 70.2, 35.5, 0.67, 0.98, 0.71), 0.05: (5, 1.7, 58.6, 38.0, 0.63, 0.89, 0.70)},
             (29, 9.0, 73.5, 40.3, 0.30, 57.43, 7.54)),
    "kddcup": (41, 4368, {0.0: (14, 11.4, 100, 0.0, 0.44, 4.14, 0.46), 0.01: (8, 4.4, 53.7, 42.9, 0.42, 0.84, 0.45),
                          0.02: (7, 4.2, 51.8, 22.0, 0.45, 0.61, 0.46), 0.05: (6, 2.8, 38.7, 22.0, 0.41, 0.54, 0.44)},
               (39, 2.6, 23.1, 19.0, 0.42, 137.3, 10.59)),
}

#: Columns of ``table.csv`` (one row per dataset and delta; Anchor's columns repeat per delta).
#: ``time_*``: wall-clock seconds per explanation; ``cpu_*``: CPU seconds of the process.
TABLE_COLUMNS = (
    "dataset", "n_features", "n_instances", "delta",
    "len_max", "len_avg", "prec_avg", "prec_dev", "exact_avg", "exact_dev", "exact_min",
    "time_min", "time_max", "time_avg", "cpu_min", "cpu_max", "cpu_avg",
    "anchor_instances", "anchor_len_max", "anchor_len_avg", "anchor_prec_avg", "anchor_prec_dev",
    "anchor_alibi_prec_avg", "anchor_exact_avg", "anchor_exact_dev", "anchor_exact_min",
    "anchor_time_min", "anchor_time_max", "anchor_time_avg", "anchor_cpu_min", "anchor_cpu_max", "anchor_cpu_avg",
    "anchor_below_threshold_alibi", "anchor_below_threshold_sampled", "anchor_below_threshold_exact",
    "kcxai_time_avg_same_instances", "ratio_anchor_kcxai", "kcxai_cpu_avg_same_instances", "ratio_cpu_anchor_kcxai",
    "distribution", "mode", "cpu_median", "coverage_avg", "coverage_min", "data_rows", "data_prec_avg",
    "data_prec_min", "data_no_match", "data_cov_avg", "data_prec_min_30", "data_below_80",
    "anchor_data_prec_avg", "anchor_data_prec_min", "anchor_data_no_match", "anchor_data_cov_avg",
    "anchor_data_prec_min_30", "anchor_data_below_80",
)


def _stats(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    return {"max": float(a.max()), "min": float(a.min()), "avg": float(a.mean()), "dev": float(a.std())}


def _times(recs: Sequence[dict[str, Any]], prefix: str) -> dict[str, float]:
    out = {}
    for key, name in (("seconds", "time"), ("cpu_seconds", "cpu")):
        st = _stats([r[key] for r in recs])
        out.update({f"{prefix}{name}_min": st["min"], f"{prefix}{name}_max": st["max"],
                    f"{prefix}{name}_avg": st["avg"]})
    return out


def _on_data(recs: Sequence[dict[str, Any]], prefix: str) -> dict[str, Any]:
    """On-data precision avg/min (%, over the explanations some held-out row matches), how many no
    row matches, on-data coverage avg (%), the minimum precision over the explanations matched by at
    least 30 held-out rows (a minimum over 2 matching rows is 0, 50 or 100%) and how many have an
    on-data precision below 80%."""
    ps = [r["data_precision"] for r in recs if r.get("data_precision", "") != ""]
    ps30 = [r["data_precision"] for r in recs if r.get("data_precision", "") != "" and r["data_matching"] >= 30]
    covs = [r["data_coverage"] for r in recs if r.get("data_coverage", "") != ""]
    return {f"{prefix}data_prec_avg": 100 * float(np.mean(ps)) if ps else "",
            f"{prefix}data_prec_min": 100 * float(np.min(ps)) if ps else "",
            f"{prefix}data_no_match": len(recs) - len(ps),
            f"{prefix}data_cov_avg": 100 * float(np.mean(covs)) if covs else "",
            f"{prefix}data_prec_min_30": 100 * float(np.min(ps30)) if ps30 else "",
            f"{prefix}data_below_80": sum(p < 0.8 for p in ps)}


def summarise(records: Sequence[dict[str, Any]], info: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per dataset and delta with the table's statistics.

    Precisions and coverages are in %, ``dev`` is the standard deviation (over instances),
    times are seconds per explanation (wall-clock ``time_*``, CPU ``cpu_*``).
    ``coverage_*`` is exact (under the tree's distribution), ``data_*`` on
    the held-out rows (``data_no_match``: explanations no held-out row matches,
    left out of ``data_prec_*``).
    ``ratio_anchor_kcxai`` (``ratio_cpu_anchor_kcxai``) divides Anchor's mean
    time by kcxai's mean time over all deltas, on the instances both explained.
    """
    threshold = float(info["config"]["threshold"])
    out = []
    for name in info["config"]["datasets"]:
        mine = [r for r in records if r["dataset"] == name]
        kc = [r for r in mine if r["method"] == "kcxai"]
        an = [r for r in mine if r["method"] == "anchor"]
        arow: dict[str, Any] = {k: "" for k in TABLE_COLUMNS if k.startswith(("anchor_", "kcxai_", "ratio_"))}
        arow["anchor_instances"] = len(an)
        if an:
            ln, ps, ex = (_stats([r[k] for r in an]) for k in ("length", "precision_sampled", "precision_exact"))
            arow.update({
                "anchor_len_max": int(ln["max"]), "anchor_len_avg": ln["avg"],
                "anchor_prec_avg": 100 * ps["avg"], "anchor_prec_dev": 100 * ps["dev"],
                "anchor_alibi_prec_avg": 100 * float(np.mean([r["precision_alibi"] for r in an])),
                "anchor_exact_avg": 100 * ex["avg"], "anchor_exact_dev": 100 * ex["dev"],
                "anchor_exact_min": 100 * ex["min"], **_times(an, "anchor_"),
                "anchor_below_threshold_alibi": sum(r["precision_alibi"] < threshold for r in an),
                "anchor_below_threshold_sampled": sum(r["precision_sampled"] < threshold for r in an),
                "anchor_below_threshold_exact": sum(r["precision_exact"] < threshold for r in an),
                **_on_data(an, "anchor_"),
            })
            rows_a = {r["row"] for r in an}
            same = [r for r in kc if r["row"] in rows_a]
            if same:
                for key, col, ratio, acol in (("seconds", "kcxai_time_avg_same_instances", "ratio_anchor_kcxai",
                                               "anchor_time_avg"),
                                              ("cpu_seconds", "kcxai_cpu_avg_same_instances",
                                               "ratio_cpu_anchor_kcxai", "anchor_cpu_avg")):
                    arow[col] = float(np.mean([r[key] for r in same]))
                    arow[ratio] = arow[acol] / arow[col] if arow[col] > 0 else float("inf")
        for d in sorted({float(r["delta"]) for r in kc}):
            sel = [r for r in kc if float(r["delta"]) == d]
            ln, ps, ex = (_stats([r[k] for r in sel]) for k in ("length", "precision_sampled", "precision_exact"))
            covs = [r["coverage_exact"] for r in sel if r.get("coverage_exact", "") != ""]
            out.append({
                "dataset": name, "n_features": info["trees"][name]["n_features"],
                "n_instances": len({r["row"] for r in sel}), "delta": d,
                "distribution": info["trees"][name].get("distribution", "uniform"),
                "mode": info["config"].get("mode", "idrs"),
                "cpu_median": float(np.median([r["cpu_seconds"] for r in sel])),
                "coverage_avg": 100 * float(np.mean(covs)) if covs else "",
                "coverage_min": 100 * float(np.min(covs)) if covs else "",
                "data_rows": info["trees"][name].get("n_test", ""), **_on_data(sel, ""),
                "len_max": int(ln["max"]), "len_avg": ln["avg"],
                "prec_avg": 100 * ps["avg"], "prec_dev": 100 * ps["dev"],
                "exact_avg": 100 * ex["avg"], "exact_dev": 100 * ex["dev"], "exact_min": 100 * ex["min"],
                **_times(sel, ""), **arow})
    return out


# -- formatting ---------------------------------------------------------------------------


def _f(v: Any, kind: str) -> str:
    """``kind``: ``int``, ``1`` (one decimal), ``t`` (seconds, 3 significant digits), ``x`` (ratio)."""
    if v == "" or v is None:
        return ""
    if kind == "int":
        return str(int(v))
    if kind == "1":
        return f"{v:.1f}"
    if kind == "x":
        return f"{v:,.0f}x" if v >= 100 else f"{v:.1f}x"
    if v == 0:
        return "0"
    return f"{v:.3g}" if v >= 1e-3 else f"{v:.2g}"


_MAIN = [  # (column, header, format): the paper's layout; runtime is CPU seconds (see _WALL)
    ("dataset", "Dataset", "s"), ("n_features", "#F", "int"), ("n_instances", "#I", "int"), ("delta", "δ", "d"),
    ("len_max", "Len M", "int"), ("len_avg", "Len avg", "1"), ("prec_avg", "Prec avg", "1"),
    ("prec_dev", "Prec dev", "1"), ("cpu_min", "Time m", "t"), ("cpu_max", "Time M", "t"),
    ("cpu_avg", "Time avg", "t"),
    ("anchor_instances", "A #I", "int"), ("anchor_len_max", "A Len M", "int"), ("anchor_len_avg", "A Len avg", "1"),
    ("anchor_prec_avg", "A Prec avg", "1"), ("anchor_prec_dev", "A Prec dev", "1"),
    ("anchor_cpu_min", "A Time m", "t"), ("anchor_cpu_max", "A Time M", "t"),
    ("anchor_cpu_avg", "A Time avg", "t"), ("ratio_cpu_anchor_kcxai", "A/kcxai time", "x"),
]

_WALL = [
    ("dataset", "Dataset", "s"), ("delta", "δ", "d"), ("time_min", "kcxai m", "t"), ("time_max", "kcxai M", "t"),
    ("time_avg", "kcxai avg", "t"), ("anchor_time_min", "Anchor m", "t"), ("anchor_time_max", "Anchor M", "t"),
    ("anchor_time_avg", "Anchor avg", "t"), ("ratio_anchor_kcxai", "Anchor/kcxai", "x"),
]

_EXACT = [
    ("dataset", "Dataset", "s"), ("delta", "δ", "d"), ("exact_avg", "kcxai exact avg", "1"),
    ("exact_dev", "kcxai exact dev", "1"), ("exact_min", "kcxai exact min", "1"),
    ("anchor_instances", "Anchor #I", "int"), ("anchor_alibi_prec_avg", "Anchor alibi avg", "1"),
    ("anchor_exact_avg", "Anchor exact avg", "1"), ("anchor_exact_dev", "Anchor exact dev", "1"),
    ("anchor_exact_min", "Anchor exact min", "1"),
    ("anchor_below_threshold_alibi", "< thr (alibi)", "int"),
    ("anchor_below_threshold_sampled", "< thr (sampled)", "int"),
    ("anchor_below_threshold_exact", "< thr (exact)", "int"),
]


_ON_DATA = [
    ("dataset", "Dataset", "s"), ("delta", "δ", "d"), ("coverage_avg", "kcxai exact cov avg", "t"),
    ("data_rows", "held-out rows", "int"), ("data_prec_avg", "kcxai data prec avg", "1"),
    ("data_prec_min", "kcxai data prec min", "1"), ("data_no_match", "no matching row", "int"),
    ("data_cov_avg", "kcxai data cov avg", "t"), ("data_prec_min_30", "kcxai data prec min (>= 30 rows)", "1"),
    ("data_below_80", "kcxai < 80%", "int"), ("anchor_data_prec_avg", "Anchor data prec avg", "1"),
    ("anchor_data_prec_min", "Anchor data prec min", "1"), ("anchor_data_cov_avg", "Anchor data cov avg", "t"),
]


def _cell(row: dict[str, Any], col: str, kind: str, first: bool) -> str:
    if col.startswith(("anchor_", "ratio_", "kcxai_")):
        if not first:
            return ""
    if col in ("dataset", "n_features", "n_instances") and not first:
        return ""
    v = row[col]
    if kind == "s":
        return str(v)
    if kind == "d":
        return f"{v:g}"
    return _f(v, kind)


def _grid(rows: Sequence[dict[str, Any]], cols: Sequence[tuple[str, str, str]]) -> list[list[str]]:
    grid, prev = [], None
    for r in rows:
        first = r["dataset"] != prev
        prev = r["dataset"]
        grid.append([_cell(r, c, k, first) for c, _, k in cols])
    return grid


def _markdown(headers: Sequence[str], grid: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(g) + " |" for g in grid]
    return "\n".join(lines) + "\n"


def _comparison(rows: Sequence[dict[str, Any]]) -> str:
    """Markdown: the paper's figures beside ours, per dataset and delta."""
    head = ["Dataset", "δ", "#I paper/ours", "Len avg paper/ours", "Len M paper/ours",
            "Prec avg paper/ours", "Time avg (s) paper/ours (CPU)",
            "Anchor Len avg paper/ours", "Anchor Prec avg paper/ours", "Anchor Time avg (s) paper/ours (CPU)"]
    grid, prev = [], None
    for r in rows:
        p = PAPER_RESULTS.get(r["dataset"])
        if p is None:
            continue
        pk = p[2].get(round(float(r["delta"]), 4))
        if pk is None:
            continue
        first = r["dataset"] != prev
        prev = r["dataset"]
        pa = p[3]
        anchor = ["", "", ""]
        if first:
            anchor = [f"{pa[1]} / {_f(r['anchor_len_avg'], '1') or '-'}",
                      f"{pa[2]} / {_f(r['anchor_prec_avg'], '1') or '-'}",
                      f"{pa[6]} / {_f(r['anchor_cpu_avg'], 't') or '-'}"]
        grid.append([r["dataset"] if first else "", f"{r['delta']:g}",
                     f"{p[1]} / {r['n_instances']}" if first else "",
                     f"{pk[1]} / {r['len_avg']:.1f}", f"{pk[0]} / {r['len_max']}",
                     f"{pk[2]} / {r['prec_avg']:.1f}", f"{pk[6]} / {_f(r['cpu_avg'], 't')}", *anchor])
    return _markdown(head, grid)


def _latex(rows: Sequence[dict[str, Any]]) -> str:
    grid = _grid(rows, _MAIN)
    out = [r"\begin{tabular}{lrrr|rrrrrrr|rrrrrrrr|r}", r"\toprule",
           r" & & & & \multicolumn{7}{c|}{kcxai (min-I$\delta$-relevant sets)} & "
           r"\multicolumn{8}{c|}{Anchor} & \\",
           r"Dataset & \#F & \#I & $\delta$ & \multicolumn{2}{c}{Length} & \multicolumn{2}{c}{Precision (\%)} & "
           r"\multicolumn{3}{c|}{Runtime (CPU s)} & & \multicolumn{2}{c}{Length} & "
           r"\multicolumn{2}{c}{Precision (\%)} & \multicolumn{3}{c|}{Runtime (CPU s)} & Anchor/kcxai \\",
           r" & & & & M & avg & avg & dev & m & M & avg & \#I & M & avg & avg & dev & m & M & avg & time \\",
           r"\midrule"]
    prev = None
    for r, g in zip(rows, grid):
        if prev is not None and r["dataset"] != prev:
            out.append(r"\midrule")
        prev = r["dataset"]
        cells = [c.replace("_", r"\_").replace("x", r"$\times$") if i == len(g) - 1 else c.replace("_", r"\_")
                 for i, c in enumerate(g)]
        out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(out) + "\n"


def trees_markdown(info: dict[str, Any]) -> str:
    """The trees: settings, size, accuracy, and how many instances each method explained."""
    head = ["Dataset", "rows", "#F", "sklearn settings", "nodes", "depth", "train acc", "test acc",
            "protocol #I", "kcxai #I", "Anchor #I"]
    grid = []
    for name, t in info["trees"].items():
        sets = ", ".join(f"{k}={v}" for k, v in t["settings"].items())
        grid.append([name, str(t["n_rows"]), str(t["n_features"]), sets, str(t["n_nodes"]), str(t["depth"]),
                     f"{100 * t['train_accuracy']:.1f}%", f"{100 * t['test_accuracy']:.1f}%",
                     str(t["protocol_instances"]), str(t["kcxai_instances"]), str(t["anchor_instances"])])
    return _markdown(head, grid)


def write_tables(out: Path, rows: Sequence[dict[str, Any]], info: dict[str, Any],
                 records: Sequence[dict[str, Any]] = (), *, plots: bool = True) -> None:
    """``table.md``, ``table.csv``, ``table.tex``, ``comparison.md`` and, with ``plots``, the PNG plots."""
    with atomic_writer(out / "table.csv") as fh:
        w = csv.DictWriter(fh, fieldnames=TABLE_COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in TABLE_COLUMNS})
    m = info["machine"]
    cfg = info["config"]
    parts = info.get("parts", {})
    done = sorted(p["finished"] for p in parts.values() if p.get("finished"))
    wall = {meth: sum(p["seconds"] or 0 for k, p in parts.items() if k.endswith("." + meth))
            for meth in ("kcxai", "anchor")}
    resumed = sum(1 for p in parts.values() if p.get("resumed"))
    computed = (f"Explanations computed {done[0]} to {done[-1]}" if done else "Explanations computed")
    method = ("local_cdrs (the column delta holds the precision bound)" if cfg.get("mode") == "cdrs"
              else "min_idrs")
    header = (f"{computed} on {m['cpu']} ({m['cores']} cores), {m['os']}, Python {m['python']}; "
              f"{method}, "
              f"{cfg.get('distribution', 'uniform')} distribution"
              f"{' (K=' + str(cfg.get('components')) + ')' if cfg.get('distribution') == 'mixture' else ''}; "
              f"n_jobs={cfg['n_jobs']}, seed={cfg['seed']}, {cfg['bins']} quantile bins, "
              f"{cfg['n_samples']} samples per sampled precision, Anchor threshold {cfg['threshold']}"
              f"{', quick mode' if cfg['quick'] else ''}; wall-clock {wall['kcxai']:.0f} s for kcxai, "
              f"{wall['anchor']:.0f} s for Anchor"
              f"{f' ({resumed} of {len(parts)} parts reused from an earlier run)' if resumed else ''}; "
              f"tables written {info['date']}.\n")
    dists = sorted({str(t.get("distribution", "uniform")) for t in info["trees"].values()})
    dist = ("uniform distribution over the finite feature space" if dists == ["uniform"]
            else f"{' / '.join(dists)} distribution fitted on the training rows")
    md = ["# kcxai vs Anchor (the paper's Table tab:res)\n", header,
          "\n## Trees\n", trees_markdown(info),
          "\n## Main table\n\nPrecision: Anchor's sampled metric on data (%). Runtime: CPU seconds per explanation "
          "(process time; robust to other load on the machine). A = Anchor, on its #I instances.\n\n",
          _markdown([h for _, h, _ in _MAIN], _grid(rows, _MAIN)),
          "\n## Wall-clock seconds per explanation\n",
          _markdown([h for _, h, _ in _WALL], _grid(rows, _WALL)),
          f"\n## Exact precision (%, {dist}) and Anchor's misses\n",
          _markdown([h for _, h, _ in _EXACT], _grid(rows, _EXACT)),
          f"\n## On the held-out rows (the test split: used neither to train the tree nor to fit the distribution)"
          f"\n\nCoverage in %: exact under the {dist}, and on the held-out rows. Data precision: among the held-out "
          f"rows that match the instance on the explanation's features, the share the tree gives the same class "
          f"(%, over the explanations some held-out row matches).\n\n",
          _markdown([h for _, h, _ in _ON_DATA], _grid(rows, _ON_DATA))]
    write_text(out / "table.md", "".join(md))
    write_text(out / "table.tex", _latex(rows))
    write_text(out / "comparison.md", "# The paper's figures / ours\n\n" + header + "\n" + _comparison(rows))
    if plots:
        plot_paper_table(out, rows, records)
