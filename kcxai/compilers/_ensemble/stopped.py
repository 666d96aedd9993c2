"""Why a pass of the ensemble construction stopped early (raised by the construction, its sources and its monitor)."""

from __future__ import annotations

__all__ = ["Stopped"]


class Stopped(Exception):
    """A pass stopped early, by its monitor (:class:`~kcxai.compilers._ensemble.progress.Monitor`) or at a
    recorded number of states: test ``test`` of the construction, after ``ticks`` states of it. ``work``: the
    work counted when it stopped, where the raiser knows it (0 for a construction not started)."""

    def __init__(self, test: int, ticks: int, why: str, work: int | None = None) -> None:
        super().__init__(why)
        self.test, self.ticks, self.why, self.work = test, ticks, why, work
