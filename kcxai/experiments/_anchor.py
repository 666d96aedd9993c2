"""The paper's baseline: Anchor (alibi's ``AnchorTabular``) on the same coded data and trees."""

from __future__ import annotations

import json
import logging
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kcxai._errors import InvalidInputError, MissingDependencyError

if TYPE_CHECKING:  # pragma: no cover
    from kcxai._types import InstanceLike

__all__ = ["AnchorBaseline", "AnchorResult", "import_anchor_tabular"]

_INSTALL = 'pip install "kcxai[anchor]"  (alibi>=0.9.6 and click; it pulls spacy and transformers)'


def import_anchor_tabular() -> Any:
    """alibi's ``AnchorTabular`` class, or a :class:`~kcxai.MissingDependencyError` saying how to install it."""
    try:
        # alibi (optional extra 'anchor', heavy) loads only for the Anchor baseline
        from alibi.explainers import AnchorTabular
    except ImportError as e:
        raise MissingDependencyError(
            f"The Anchor baseline needs the optional 'alibi' package, which could not be imported ({e}). "
            f"Install it with `{_INSTALL}`, or run without Anchor (--no-anchor).") from None
    return AnchorTabular


@dataclass(frozen=True)
class AnchorResult:
    """One anchor.

    Attributes
    ----------
    features : tuple of int
        The anchor's features (sorted); each is fixed to the instance's value.
    precision : float
        alibi's own estimate of the anchor's precision (what it compares with the threshold).
    coverage : float
        alibi's coverage estimate.
    seconds : float
        Wall-clock time of ``explain``.
    cpu_seconds : float
        CPU time of the process during ``explain``.
    """

    features: tuple[int, ...]
    precision: float
    coverage: float
    seconds: float
    cpu_seconds: float


class AnchorBaseline:
    """alibi's ``AnchorTabular`` over coded data, every feature categorical.

    With every feature declared categorical an anchor is a set of equalities
    ``feature = instance value``, i.e. a set of features, directly comparable
    with a relevant set (same length measure, and its exact precision is
    :func:`kcxai.precision`).

    Parameters
    ----------
    predict : callable
        The classifier (``clf.predict``) on coded rows.
    train_data : array of shape (N, m)
        Coded training rows (Anchor samples from them).
    feature_names : sequence of str
    labels : sequence of sequence of str
        Per feature, a readable label per code.
    threshold : float, default 0.95
        Anchor's precision threshold (its default, as in the paper).
    """

    def __init__(self, predict: Callable[[Any], Any], train_data: Any, feature_names: Sequence[str],
                 labels: Sequence[Sequence[str]], *, threshold: float = 0.95) -> None:
        if not isinstance(threshold, float) or not 0.0 < threshold <= 1.0:
            raise InvalidInputError(f"'threshold' must be a float in (0, 1]. Got {threshold!r} instead.")
        anchor_tabular = import_anchor_tabular()
        self.threshold = threshold
        # alibi's labels: a name containing '<' or '>' changes how alibi prints it; ours never do.
        categories = {j: [str(s) for s in lab] for j, lab in enumerate(labels)}
        self._explainer = anchor_tabular(predict, list(feature_names), categorical_names=categories, seed=0)
        self._explainer.fit(np.asarray(train_data))

    def explain(self, instance: InstanceLike, *, seed: int) -> AnchorResult:
        """The anchor of one coded instance; alibi's global numpy random state is seeded with ``seed`` first."""
        x = np.asarray(instance)
        np.random.seed(seed % 2**32)
        log = logging.getLogger("alibi")
        level = log.level
        log.setLevel(logging.ERROR)  # "Could not find an anchor satisfying ..." is counted, not logged
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            exp = self._explainer.explain(x, threshold=self.threshold)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        finally:
            log.setLevel(level)
        # alibi gives an empty anchor's precision and coverage as 1-element arrays
        return AnchorResult(features=tuple(sorted(int(f) for f in exp.raw["feature"])),
                            precision=_scalar(exp.precision), coverage=_scalar(exp.coverage), seconds=seconds,
                            cpu_seconds=cpu)


def _scalar(v: Any) -> float:
    return float(np.asarray(v, dtype=float).reshape(-1)[0])


# -- Anchor in its own environment, as a subprocess -------------------------------------------

#: Where the experiment looks for the Python of a separate Anchor environment (alibi, numpy < 2).
DEFAULT_ANCHOR_PYTHON = "/work/venvs/anchor/bin/python"


def export_tree(clf: Any) -> dict[str, Any]:
    """A fitted scikit-learn tree's arrays as plain JSON for the Anchor driver (see ``anchor_driver``)."""
    t = clf.tree_
    return {"left": t.children_left.tolist(), "right": t.children_right.tolist(), "feature": t.feature.tolist(),
            "threshold": t.threshold.tolist(), "leaf_class": np.argmax(t.value[:, 0, :], axis=1).tolist(),
            "classes": np.asarray(clf.classes_).tolist()}


def run_anchor(python: str, job_dir: str | Path, *, clf: Any, train: Any, instances: Any, rows: Sequence[int],
               feature_names: Sequence[str], labels: Sequence[Sequence[str]], threshold: float = 0.95,
               seed: int = 0, timeout: float | None = None) -> dict[str, Any]:
    """Run Anchor on coded ``instances`` in the environment of ``python`` (a subprocess exchanging JSON and
    CSV files in ``job_dir``) and return ``{"info": ..., "anchors": [...]}`` (one record per instance:
    ``row``, ``features``, alibi's ``precision`` and ``coverage`` estimates, ``prediction``, ``seconds``,
    ``cpu_seconds``). The driver's tree must predict as ``clf`` does on the instances (checked)."""
    job = Path(job_dir)
    job.mkdir(parents=True, exist_ok=True)
    if not Path(python).exists():
        raise MissingDependencyError(
            f"The Anchor environment's Python {python!r} does not exist: create it with `python3 -m venv "
            f"/work/venvs/anchor && /work/venvs/anchor/bin/pip install alibi==0.9.6 click 'numpy<2'` (never "
            "in kcxai's own environment), or pass its path.")
    (job / "job.json").write_text(json.dumps({
        "feature_names": list(feature_names), "labels": [list(map(str, lab)) for lab in labels],
        "threshold": threshold, "seed": seed, "rows": [int(r) for r in rows], "tree": export_tree(clf)}),
        encoding="utf-8")
    np.savetxt(job / "train.csv", np.asarray(train, dtype=np.int64), fmt="%d", delimiter=",")
    np.savetxt(job / "instances.csv", np.asarray(instances, dtype=np.int64), fmt="%d", delimiter=",")
    driver = Path(__file__).with_name("anchor_driver.py")
    done = subprocess.run([python, str(driver), str(job)], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise MissingDependencyError(f"The Anchor driver failed (exit {done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads((job / "anchors.json").read_text(encoding="utf-8"))
    want = np.asarray(clf.predict(np.asarray(instances))).tolist()
    got = [a["prediction"] for a in result["anchors"]]
    if got != want:
        raise InvalidInputError("The Anchor driver's tree does not predict as the scikit-learn tree on the instances.")
    return result
