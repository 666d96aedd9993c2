"""PNG plots of the experiments (matplotlib, the ``plot`` extra, imported lazily)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kcxai._errors import MissingDependencyError

__all__ = ["require_matplotlib", "plot_paper_table", "plot_languages"]


def require_matplotlib() -> Any:
    """``matplotlib.pyplot`` with the non-interactive Agg backend, or a clear error."""
    try:
        # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
        import matplotlib
    except ImportError:
        raise MissingDependencyError(
            "Plots need matplotlib, which is not installed. Install it with `pip install \"kcxai[plot]\"`, "
            "or run without plots (--no-plots).") from None
    matplotlib.use("Agg")
    # matplotlib (optional extra 'plot', heavy) loads only when something is drawn
    import matplotlib.pyplot as plt

    return plt


def _records_by(records: Sequence[dict[str, Any]], name: str, method: str) -> list[float]:
    return [max(r["cpu_seconds"], 1e-6) for r in records if r["dataset"] == name and r["method"] == method]


def plot_paper_table(out: Path, rows: Sequence[dict[str, Any]], records: Sequence[dict[str, Any]]) -> list[Path]:
    """``length_vs_delta.png`` (average length per delta; Anchor dashed) and
    ``runtime.png`` (CPU seconds per explanation per method, log scale)."""
    plt = require_matplotlib()
    names = list(dict.fromkeys(r["dataset"] for r in rows))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    paths = []

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for k, name in enumerate(names):
        sel = [r for r in rows if r["dataset"] == name]
        c = colours[k % len(colours)]
        ax.plot([r["delta"] for r in sel], [r["len_avg"] for r in sel], "o-", color=c, label=f"{name} (kcxai)")
        if sel[0]["anchor_len_avg"] != "":
            ax.axhline(sel[0]["anchor_len_avg"], color=c, ls="--", lw=1, label=f"{name} (Anchor)")
    ax.set_xlabel("delta")
    ax.set_ylabel("average explanation length (features)")
    ax.set_title("Length of min-I-delta-relevant sets vs delta (Anchor dashed)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    paths.append(out / "length_vs_delta.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    data, labels, pos = [], [], []
    for k, name in enumerate(names):
        for j, method in enumerate(("kcxai", "anchor")):
            secs = _records_by(records, name, method)
            if secs:
                data.append(secs)
                labels.append(f"{name} {method}")
                pos.append(3 * k + j)
    if data:
        ax.boxplot(data, positions=pos, widths=0.8, showfliers=True, flierprops={"markersize": 2})
        ax.set_xticks(pos)
        ax.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("CPU seconds per explanation (log scale)")
    ax.set_title("Runtime per explanation: kcxai (all deltas) vs Anchor")
    fig.tight_layout()
    paths.append(out / "runtime.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def plot_languages(out: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """``languages.png``: median and max ms per min_idrs per dataset (and model family) and language (log scale)."""
    plt = require_matplotlib()
    ok = [r for r in rows if r.get("median_ms") not in ("", None)]
    names = list(dict.fromkeys((r["dataset"], r.get("family", "tree")) for r in rows))
    langs = list(dict.fromkeys(r["language"] for r in rows))
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4.2))
    width = 0.8 / max(1, len(langs))
    for j, lang in enumerate(langs):
        xs, med, mx, comp = [], [], [], []
        for k, name in enumerate(names):
            r = next((r for r in ok if (r["dataset"], r.get("family", "tree")) == name and r["language"] == lang), None)
            if r is not None:
                xs.append(k + j * width)
                med.append(r["median_ms"])
                mx.append(r["max_ms"])
                comp.append(max(r["compile_seconds"], 1e-4))
        ax.bar(xs, med, width, label=f"{lang} median")
        ax.scatter(xs, mx, marker="_", s=120, color="black")
        bx.bar(xs, comp, width, label=lang)
    for a in (ax, bx):
        a.set_xticks([k + 0.4 - width / 2 for k in range(len(names))])
        a.set_xticklabels([f"{d}\n{f}" for d, f in names], fontsize=7)
        a.set_yscale("log")
        a.legend(fontsize=7)
    ax.set_ylabel("ms per min_idrs (bar: median, tick: max)")
    bx.set_ylabel("compile seconds")
    ax.set_title("Explanation time per language")
    bx.set_title("Compilation time per language")
    fig.tight_layout()
    path = out / "languages.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
