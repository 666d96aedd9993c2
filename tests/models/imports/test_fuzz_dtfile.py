"""Fuzzing the ``.dt`` / ``.map`` tree format: mutated files read or raise a KcxaiError, quickly.

The seeds are the bundled reference trees (adult SKL14, IAI12, IAI14) and a small labelled tree;
either file of a pair, or both, is mutated line- and token-wise (see :mod:`fuzz_mutations`). A
pair that reads must predict, convert to JSON and back, and give ``to_root``.
"""

from __future__ import annotations

import random
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kcxai
from tests._support.fuzz_mutations import EXAMPLES, MUTANTS, SMALL_DT, SMALL_MAP, Tally, mutate_lines, run_one
from kcxai.models import model_from_dict



def _seeds() -> dict[str, tuple[str, str]]:
    base = resources.files("kcxai.datasets").joinpath("data", "ref_trees")
    out = {"small": (SMALL_DT, SMALL_MAP)}
    for name in ("SKL14", "IAI12", "IAI14"):
        out[name] = ((base / f"adult_{name}.dt").read_text(encoding="utf-8"),
                     (base / f"adult_{name}.map").read_text(encoding="utf-8"))
    return out


SEEDS = _seeds()
TALLY = Tally(".dt/.map")


@pytest.fixture(scope="module", autouse=True)
def _report():
    yield
    print("\n" + TALLY.line())


def test_seeds_read():
    for dt, mp in SEEDS.values():
        assert dt and mp


def test_mutated_dt_and_map_files_read_or_raise_a_kcxai_error(tmp_path):
    dt_path, map_path = tmp_path / "t.dt", tmp_path / "t.map"

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(name=st.sampled_from(sorted(SEEDS)), which=st.sampled_from(["dt", "map", "both"]),
           seed=st.integers(0, 2**32 - 1))
    def check(name: str, which: str, seed: int) -> None:
        dt, mp = SEEDS[name]
        rng = random.Random(seed)
        for k in range(MUTANTS):
            dt_path.write_bytes(mutate_lines(dt, rng) if which != "map" else dt.encode())
            map_path.write_bytes(mutate_lines(mp, rng) if which != "dt" else mp.encode())

            def read() -> None:
                tree = kcxai.DecisionTree.from_dt(dt_path, map_path)
                point = tuple(0 for _ in tree.space.features)
                tree.predict_point(point)
                assert model_from_dict(tree.to_dict()).to_dict() == tree.to_dict()
                tree.to_root()

            run_one(TALLY, f"{name} ({which}) mutant {k} of seed {seed}", read)

    check()
    assert TALLY.tries >= EXAMPLES * MUTANTS * 0.9 and TALLY.rejected > 0 and TALLY.accepted > 0
