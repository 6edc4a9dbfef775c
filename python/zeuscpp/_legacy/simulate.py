"""The trace-driven simulator (upstream ``zeus._legacy.simulate``).

``Simulator`` replays a recurring job on the paper's train and power traces
with your batch-size and power-limit policies; the replay itself is the
library's (``zeus/sim``), the policies' methods are called from it. Where this
differs from upstream (random streams, no pandas needed) is listed in
docs/extending.md.
"""

from __future__ import annotations

import functools
import os
import re
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from zeuscpp._legacy.job import Job
from zeuscpp._legacy.policy.interface import BatchSizeOptimizer, PowerLimitOptimizer
from zeuscpp._parts import core_part

_legacy = core_part("zeuscpp._legacy", "legacy", "the trace simulator (ZEUS_WITH_SIM)")


@dataclass
class HistoryEntry:
    """One run of a job: its knobs and what it cost.

    Attributes:
        bs: Batch size
        pl: Power limit (W)
        energy: Energy consumption in Joules
        reached: Whether the target metric was reached at the end
        time: Time consumption in seconds
    """

    bs: int
    pl: int
    energy: float
    reached: bool
    time: float


def _csv_text(source: Any, what: str) -> str:
    """A trace as CSV text: a path, or a DataFrame-like object with to_csv()."""
    if isinstance(source, (str, os.PathLike)):
        with open(source, encoding="utf-8") as f:
            return f.read()
    if hasattr(source, "to_csv"):
        return source.to_csv(index=False)
    raise TypeError(f"{what}: expected a path or a pandas DataFrame, got {type(source).__name__}")


def _group_rows(group: Any) -> tuple[str, list[tuple[float, float, float]]]:
    """(group id, [(start_time, end_time, runtime_ratio), ...]) of one group.

    Accepts an ``AlibabaGroup``, a pandas DataFrame of one group (upstream's
    ``group_df``), or an iterable of mappings with those keys.
    """
    if isinstance(group, AlibabaGroup):
        return group.group, list(group.rows)
    if hasattr(group, "to_dict"):
        records = group.to_dict("records")
    else:
        records = list(group)
    ids = {str(r["group"]) for r in records if "group" in r}
    rows = [
        (float(r["start_time"]), float(r["end_time"]), float(r["runtime_ratio"])) for r in records
    ]
    rows.sort(key=lambda r: r[0])
    return (ids.pop() if len(ids) == 1 else "group"), rows


def _gpu_name(summary_power: Any) -> str:
    """The GPU a power trace is of, from upstream's file name summary_power_<gpu>.csv."""
    if isinstance(summary_power, (str, os.PathLike)):
        m = re.fullmatch(r"summary_power_([A-Za-z0-9_.-]+)\.csv", os.path.basename(os.fspath(summary_power)))
        if m:
            return m.group(1)
    return "trace"


@functools.lru_cache(maxsize=8)
def _tables(train_csv: str, power_csv: str, gpu: str) -> Any:  # a _core.legacy.TraceTables
    """Parsed traces, shared by Simulators on the same contents (they are immutable).

    Parsing is most of a short replay's cost: a sweep that builds one Simulator
    per (GPU, workload, seed), as upstream's drivers do, parses each file once.
    """
    return _legacy.TraceTables(train_csv, power_csv, "the Simulator's traces", gpu)


@dataclass
class AlibabaGroup:
    """One recurring-job group of the Alibaba group trace."""

    group: str
    dataset: str
    rows: list[tuple[float, float, float]]  # (start_time, end_time, runtime_ratio), by start


def read_alibaba_groups(path: str | os.PathLike) -> list[AlibabaGroup]:
    """Read ``group,start_time,end_time,dataset,runtime_ratio`` (plain or .xz), groups in order."""
    return [AlibabaGroup(g, d, list(rows)) for g, d, rows in _legacy.read_alibaba_groups(os.fspath(path))]


def group_seed(group_id: str) -> int:
    """The seed upstream's run_alibaba.py gives a group: ``zlib.adler32`` of its id."""
    return _legacy.adler32(group_id)


class Simulator:
    """Simulates recurring jobs optimized by a batch-size and a power-limit policy."""

    def __init__(
        self,
        summary_train: str | os.PathLike | Any,
        summary_power: str | os.PathLike | Any,
        batch_size_optimizer: BatchSizeOptimizer,
        power_limit_optimizer: PowerLimitOptimizer,
        seed: int = 123456,
        verbose: bool = True,
    ) -> None:
        """Load the train and power traces (paths or DataFrames) and keep the policies.

        Every simulation starts from a deep copy of the policies, so it is
        deterministic given `seed`. `verbose` prints nothing here.
        """
        self._traces = _tables(
            _csv_text(summary_train, "summary_train"),
            _csv_text(summary_power, "summary_power"),
            _gpu_name(summary_power),
        )
        self.bso = batch_size_optimizer
        self.plo = power_limit_optimizer
        self.seed = seed
        self.verbose = verbose

    def simulate_one_job(
        self, job: Job, num_recurrence: int, beta_knob: float, eta_knob: float
    ) -> list[HistoryEntry]:
        """Replay `job` recurring `num_recurrence` times, one after another.

        Each recurrence runs until a run reaches the target (at most 20 runs);
        `beta_knob` * the cheapest recurrence so far caps a run's cost
        (``math.inf`` disables it). Returns every run that ran.
        """
        entries = _legacy.simulate_one_job(
            self._traces, job, int(num_recurrence), float(beta_knob), float(eta_knob),
            int(self.seed), deepcopy(self.bso), deepcopy(self.plo),
        )
        return [HistoryEntry(*e) for e in entries]

    def num_recurrence(self, job: Job) -> int:
        """2 |B| |P| of `job` on these traces: run_single.py's default (zeuscpp's addition)."""
        return _legacy.num_recurrence(self._traces, job)

    def simulate_one_alibaba_group(
        self, job: Job, group_df: Any, beta_knob: float, eta_knob: float
    ) -> list[HistoryEntry]:
        """Replay one group of the Alibaba trace: its jobs at their start times, concurrently.

        `group_df` is upstream's DataFrame of one group, an ``AlibabaGroup``
        (``read_alibaba_groups``), or rows with start_time, end_time and
        runtime_ratio. Returns the runs in the order they ended.
        """
        group_id, rows = _group_rows(group_df)
        if not rows:
            raise ValueError("the group has no jobs")
        entries = _legacy.simulate_one_alibaba_group(
            self._traces, job, group_id, [list(r) for r in rows], float(beta_knob),
            float(eta_knob), int(self.seed), deepcopy(self.bso), deepcopy(self.plo),
        )
        return [HistoryEntry(*e) for e in entries]


__all__ = ["AlibabaGroup", "HistoryEntry", "Simulator", "group_seed", "read_alibaba_groups"]

