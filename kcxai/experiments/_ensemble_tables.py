"""The outputs of ``kcxai experiment ensembles``: ``ensembles.md``, ``ensembles.csv``, ``ensembles.json``."""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kcxai._files import atomic_writer, write_text
from kcxai.experiments._tables import _f, _markdown

__all__ = ["write_outputs", "ensembles_markdown", "summary_markdown"]

_HEAD = ["model", "trees", "depth", "nodes", "import s", "language", "backend", "δ", "status", "compile s",
         "size", "diagram nodes", "explained", "median ms", "max ms", "median size", "checks", "disagree",
         "approx. not relevant", "decisions differ"]


def _language(r: dict[str, Any]) -> str:
    if r["exact"]:
        return str(r["language"])
    return f"{r['language']} (approximate, confidence {r['confidence']:g})"


def _size(r: dict[str, Any]) -> str:
    if r["size"] in ("", None):
        return ""
    return "nothing compiled" if r["size_unit"] == "nothing compiled" else f"{r['size']:,} {r['size_unit']}"


def _status(r: dict[str, Any]) -> str:
    note = str(r["note"]).replace("|", "/").replace("\n", " ")
    if len(note) > 90:
        note = note[:87] + "..."
    return f"{r['status']}: {note}" if note else str(r["status"])


def _count(v: Any) -> str:
    return "" if v in ("", None) else f"{v:,}"


def _v(v: Any) -> str:
    return "" if v in ("", None) else str(v)


def _short(r: dict[str, Any] | None, what: str) -> str:
    """One language's figure for the summary: ``what`` when the cell is ok, else why not."""
    if r is None:
        return ""
    st = str(r["status"])
    if st in ("limit", "unavailable", "failed"):
        return st
    if st.startswith("skipped: a smaller"):
        return "skipped"
    if st.startswith("skipped: training"):
        return "not trained"
    if what == "ms":
        v = _f(r["median_ms"], "t")
        return v if st == "ok" else f"{v or 'none'} ({r['explanations']}/{r['instances']})"
    if what == "compile":
        return _f(r["compile_seconds"], "t")
    return "" if r["size"] in ("", None) else f"{r['size']:,}"


def _differ(r: dict[str, Any] | None) -> str:
    """Sampling's certified decisions that the exact replay decides otherwise, ``k/n``."""
    if r is None or r.get("decisions") in ("", None):
        return ""
    return f"{r['decisions_differ']}/{r['decisions']}"


_SUMMARY = ["model", "trees", "depth", "nodes", "obdd compile s", "OBDD nodes", "obdd ms", "obdd ms δ>0",
            "sdd compile s", "SDD nodes", "sdd ms", "sat ms", "sampling ms δ>0 (approx.)", "sampling decisions differ"]


def summary_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """One row per model: compile seconds, size and median ms per language (delta 0 for the exact
    languages, and the first delta > 0 for obdd and sampling), and how many of sampling's decisions the
    exact replay decides otherwise; ``limit`` / ``skipped`` where a compilation did not run to the end,
    ``median (done/N)`` where a cell ran out of budget."""
    models: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for r in rows:
        cells = models.setdefault((r["model"], r["trees"], r["depth"], r["nodes"]), {})
        key = r["language"] if r["delta"] == "0" or r["language"] == "sampling" else r["language"] + ">0"
        cells.setdefault(key, r)
    grid = []
    for (model, trees, depth, nodes), c in models.items():
        grid.append([str(model), str(trees), str(depth), _count(nodes),
                     _short(c.get("obdd"), "compile"), _short(c.get("obdd"), "size"), _short(c.get("obdd"), "ms"),
                     _short(c.get("obdd>0"), "ms"),
                     _short(c.get("sdd"), "compile"), _short(c.get("sdd"), "size"), _short(c.get("sdd"), "ms"),
                     _short(c.get("sat"), "ms"), _short(c.get("sampling"), "ms"), _differ(c.get("sampling"))])
    return _markdown(_SUMMARY, grid)


def ensembles_markdown(rows: Sequence[dict[str, Any]], info: dict[str, Any]) -> str:
    """The Markdown report: a header with the machine, load and settings, then one table row per cell."""
    m, cfg = info["machine"], info["config"]
    load = info.get("load_start")
    load_s = (f"; load average {load[0]:.2f} at the start, {info['load_end'][0]:.2f} at the end"
              if load and info.get("load_end") else "")
    n = info["resumed_models"]
    resumed = f" ({n} models reused from an earlier run)" if n else ""
    header = (f"Finished {info['date']} on {m['cpu']} ({m['cores']} cores), Python {m['python']}, scikit-learn "
              f"{m['scikit-learn']}{load_s}; {cfg['dataset']} ({info['n_rows']} rows, {info['n_features']} "
              f"features, {cfg['bins']} quantile bins), {cfg['instances']} held-out instances, seed {cfg['seed']}; "
              f"δ bounds the error of min_idrs (the probability that the class changes with the set's features "
              f"fixed) under the uniform distribution over the coded feature space. "
              f"Limits per compilation: {cfg['max_seconds']:g} s, {cfg['max_nodes']:,} nodes, "
              f"{cfg['max_memory'] / 2**20:g} MiB; diagrams' construction {cfg.get('construction', 'auto')!r}; "
              f"budget {cfg['budget']:g} s per cell for its explanations "
              f"(and again for its checks), {cfg['train_budget']:g} s per model's training; "
              f"sampling: confidence {cfg['confidence']:g}, at most "
              f"{cfg['max_samples']} samples per decision; SAT engine {cfg['sat_engine']!r}. "
              f"Total {info['seconds']} s{resumed}.\n")
    checks = sum(r["checks"] for r in rows if r["exact"] and r["checks"] != "")
    disagree = sum(r["disagreements"] for r in rows if r["disagreements"] != "")
    approx = [r for r in rows if not r["exact"] and r["checks"] != ""]
    decided = [r for r in approx if r.get("decisions") not in ("", None)]
    summary = (f"Cross-checks of the exact sets: {checks}, disagreements: {disagree}. Sampling sets checked "
               f"exactly: {sum(r['checks'] for r in approx)}, not relevant: "
               f"{sum(r['approx_not_relevant'] for r in approx)}; sampling's certified decisions replayed "
               f"exactly: {sum(r['decisions'] for r in decided)}, decided otherwise: "
               f"{sum(r['decisions_differ'] for r in decided)}.\n")
    grid = []
    for r in rows:
        grid.append([str(r["model"]), str(r["trees"]), str(r["depth"]), _count(r["nodes"]),
                     _f(r["import_seconds"], "t"), _language(r), _v(r["backend"]), str(r["delta"]), _status(r),
                     _f(r["compile_seconds"], "t"), _size(r), _count(r.get("diagram_nodes", "")),
                     f"{r['explanations']}/{r['instances']}",
                     _f(r["median_ms"], "t"), _f(r["max_ms"], "t"), _v(r["median_size"]), _v(r["checks"]),
                     _v(r["disagreements"]), _v(r["approx_not_relevant"]), _differ(r)])
    return ("# Tree ensembles across languages\n\n" + header + "\n" + summary +
            "\n## By model\n\nMedian ms per explanation at delta 0 (obdd, sdd, sat) and at the first delta > 0 "
            "(obdd δ>0, sampling); `limit`: the compilation hit a limit, `skipped`: a smaller model of the kind did, "
            "`median (k/N)`: the cell ran out of budget after k of N instances; sampling decisions differ: of its "
            "certified deletion-loop decisions, how many the exact replay decides otherwise.\n\n"
            + summary_markdown(rows) +
            "\n## Every cell\n\n" + _markdown(_HEAD, grid))


def write_outputs(out: Path, rows: Sequence[dict[str, Any]], info: dict[str, Any], columns: Sequence[str]) -> None:
    """``ensembles.csv``, ``ensembles.json`` and ``ensembles.md`` in ``out``, each written atomically."""
    with atomic_writer(out / "ensembles.csv") as fh:
        w = csv.DictWriter(fh, fieldnames=list(columns))
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in columns})
    write_text(out / "ensembles.json", json.dumps(info, indent=1))
    write_text(out / "ensembles.md", ensembles_markdown(rows, info))
