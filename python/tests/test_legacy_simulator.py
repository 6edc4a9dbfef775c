"""zeuscpp._legacy: upstream's trace simulator API over the C++ replay, with Python policies."""

from __future__ import annotations

import copy
import lzma
import math
import os
import subprocess
import sys
import zlib

import pytest

from conftest import SOURCE_DIR
from zeuscpp._legacy.job import Job
from zeuscpp._legacy.policy import (
    BatchSizeOptimizer,
    JITPowerLimitOptimizer,
    PowerLimitOptimizer,
    PruningGTSBatchSizeOptimizer,
)
from zeuscpp._legacy.simulate import HistoryEntry, Simulator, group_seed, read_alibaba_groups
from zeuscpp.exception import ZeusInvalidArgumentError

TRACES = os.path.join(SOURCE_DIR, "data", "zeus-traces")
TRAIN = os.path.join(TRACES, "summary_train.csv")
LIBRISPEECH = Job("librispeech", "deepspeech2", "adamw", 40.0, 16, 192)
IMAGENET = Job("imagenet", "resnet50", "adadelta", 0.65, 100, 256)


def power(gpu: str) -> str:
    return os.path.join(TRACES, f"summary_power_{gpu}.csv")


# Policies written the way upstream's interface asks (and its examples do).
class Delegating(BatchSizeOptimizer):
    """A Python policy that forwards to another one: forces the Python seam."""

    def __init__(self, inner: BatchSizeOptimizer) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def name(self) -> str:
        return "Delegating"

    def register_job(self, job: Job, batch_sizes: list[int]) -> None:
        self.inner.register_job(job, batch_sizes)

    def predict(self, job: Job) -> int:
        self.calls += 1
        return self.inner.predict(job)

    def observe(self, job: Job, batch_size: int, cost: float, converged: bool | None = None) -> None:
        self.inner.observe(job, batch_size, cost, converged)


class JITInPython(PowerLimitOptimizer):
    """Upstream's JITPowerLimitOptimizer, written out in Python."""

    def __init__(self) -> None:
        self.best_pl: dict[Job, dict[int, int]] = {}
        self.best_cost: dict[Job, dict[int, float]] = {}

    @property
    def name(self) -> str:
        return "JITInPython"

    def predict(self, job: Job, batch_size: int) -> int | None:
        return self.best_pl.get(job, {}).get(batch_size)

    def observe(self, job: Job, batch_size: int, power_limit: int, cost: float) -> None:
        prev = self.best_cost.setdefault(job, {}).get(batch_size)
        if prev is None or prev > cost:
            self.best_pl.setdefault(job, {})[batch_size] = power_limit
            self.best_cost[job][batch_size] = cost


class DefaultBSO(BatchSizeOptimizer):
    def __init__(self) -> None:
        self.registered: list[tuple[Job, list[int]]] = []

    @property
    def name(self) -> str:
        return "DefaultBSO"

    def register_job(self, job: Job, batch_sizes: list[int]) -> None:
        self.registered.append((job, batch_sizes))

    def predict(self, job: Job) -> int:
        return job.default_bs

    def observe(self, job: Job, batch_size: int, cost: float, converged: bool | None = None) -> None:
        pass


def run(bso, plo, job=LIBRISPEECH, gpu="v100", seed=1, beta=2.0, eta=0.5, n=None):
    sim = Simulator(TRAIN, power(gpu), bso, plo, seed=seed, verbose=False)
    return sim.simulate_one_job(job, n if n is not None else sim.num_recurrence(job), beta, eta)


def test_builtin_zeus_prunes_like_the_reference():
    """docs/reference/paper-simulator.md §5: V100 librispeech, seed 1, round one goes down from 192."""
    history = run(PruningGTSBatchSizeOptimizer(seed=1), JITPowerLimitOptimizer())
    assert all(isinstance(h, HistoryEntry) for h in history)
    assert [h.bs for h in history[:12]] == [192, 156, 128, 96, 72, 64, 56, 48, 32, 24, 16, 12]
    assert all(isinstance(h.pl, int) for h in history)
    assert sum(h.reached for h in history) == 210  # 2 |B| |P| recurrences, each ends reached


def test_the_builtin_through_the_python_seam_gives_the_same_history():
    direct = run(PruningGTSBatchSizeOptimizer(seed=3), JITPowerLimitOptimizer(), seed=3)
    bso = Delegating(PruningGTSBatchSizeOptimizer(seed=3))
    seam = run(bso, JITInPython(), seed=3)
    assert seam == direct
    assert bso.calls == 0  # the simulator copies the policy: the original is untouched


def test_a_python_policy_is_called_once_per_decision():
    class Counting(DefaultBSO):
        predicts = 0
        observes = 0

        def predict(self, job):
            type(self).predicts += 1
            return super().predict(job)

        def observe(self, job, batch_size, cost, converged=None):
            type(self).observes += 1
            assert isinstance(converged, bool) and cost > 0

    history = run(Counting(), JITPowerLimitOptimizer(), job=IMAGENET, n=30, beta=math.inf)
    assert len(history) == 30  # b0 always reaches: one run per recurrence
    assert Counting.predicts == 30 and Counting.observes == 30
    assert {h.bs for h in history} == {256}


def test_default_bs_and_highest_limit_policy_matches_expected_energy():
    class MaxPLO(PowerLimitOptimizer):
        name = "MaxPLO"

        def predict(self, job, batch_size):
            return 250

        def observe(self, job, batch_size, power_limit, cost):
            raise AssertionError("never asked to profile")

    history = run(DefaultBSO(), MaxPLO(), job=IMAGENET, n=5, beta=math.inf)
    assert [(h.bs, h.pl) for h in history] == [(256, 250)] * 5
    # Energy is epochs x (time x power) of the trace row: positive, and time < energy / 1 W.
    assert all(h.energy > h.time > 0 for h in history)


def test_register_job_gets_the_feasible_batch_sizes_on_a_copy():
    seen: list[tuple[Job, list[int]]] = []

    class Recording(DefaultBSO):
        def register_job(self, job, batch_sizes):
            seen.append((job, list(batch_sizes)))
            self.registered.append(job)

    bso = Recording()
    run(bso, JITPowerLimitOptimizer(), job=IMAGENET, n=2)
    assert seen == [(IMAGENET, [64, 128, 192, 256, 360])]
    assert bso.registered == []  # the simulator worked on a deep copy


class Broken(BatchSizeOptimizer):
    def __init__(self, answer) -> None:
        self.answer = answer

    @property
    def name(self) -> str:
        return "Broken"

    def register_job(self, job, batch_sizes):
        pass

    def predict(self, job):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def observe(self, job, batch_size, cost, converged=None):
        pass


@pytest.mark.parametrize(
    "answer, says",
    [
        (KeyError("oops, my bug"), "oops, my bug"),
        (None, "returned None where batch size is required"),
        (7, "it predicted batch size 7, which is not one of 64, 128, 192, 256, 360"),
        ("256", "not an integer batch size"),
    ],
)
def test_a_broken_batch_size_policy_is_a_clear_error(answer, says):
    with pytest.raises(ZeusInvalidArgumentError) as e:
        run(Broken(answer), JITPowerLimitOptimizer(), job=IMAGENET, n=3)
    message = str(e.value)
    assert "policy 'Broken + JITPSO' on job imagenet/resnet50 on v100" in message
    assert says in message


class Stopping(BatchSizeOptimizer):
    """Raises `stop` from predict or from observe: the user stopping the run."""

    def __init__(self, stop: BaseException, where: str) -> None:
        self.stop, self.where = stop, where

    @property
    def name(self) -> str:
        return "Stopping"

    def register_job(self, job, batch_sizes):
        self.default = job.default_bs

    def predict(self, job):
        if self.where == "predict":
            raise self.stop
        return self.default

    def observe(self, job, batch_size, cost, converged=None):
        if self.where == "observe":
            raise self.stop


@pytest.mark.parametrize("where", ["predict", "observe"])
@pytest.mark.parametrize("stop", [KeyboardInterrupt(), SystemExit(3)])
def test_keyboard_interrupt_and_system_exit_in_a_policy_propagate_as_themselves(stop, where):
    with pytest.raises(type(stop)) as e:
        run(Stopping(stop, where), JITPowerLimitOptimizer(), job=IMAGENET, n=3)
    assert type(e.value) is type(stop) and e.value.args == stop.args  # the policy is a deep copy


class PandasLikeFrame:
    """Stands in for a DataFrame read with pandas.read_csv from a trace: its
    to_csv writes NaN as an empty field, as pandas does by default."""

    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().splitlines()

    def to_csv(self, index: bool = True) -> str:
        assert index is False
        return "".join(
            ",".join("" if cell == "nan" else cell for cell in line.split(",")) + "\n" for line in self.lines
        )


def test_dataframes_with_nan_target_epochs_replay_as_the_files_do():
    """The full real summary_train.csv has runs that never reached their target (NaN):
    handed over as a DataFrame (NaN written as an empty field) it replays as the file does."""
    frame = PandasLikeFrame(TRAIN)
    assert ",\n" in frame.to_csv(index=False)  # the real trace has such runs
    for job, gpu in [(IMAGENET, "v100"), (LIBRISPEECH, "a40")]:
        by_path = Simulator(TRAIN, power(gpu), PruningGTSBatchSizeOptimizer(seed=1), JITPowerLimitOptimizer(),
                            seed=1, verbose=False)
        by_frame = Simulator(frame, power(gpu), PruningGTSBatchSizeOptimizer(seed=1), JITPowerLimitOptimizer(),
                             seed=1, verbose=False)
        assert by_frame.simulate_one_job(job, 12, 2.0, 0.5) == by_path.simulate_one_job(job, 12, 2.0, 0.5)


def test_pandas_read_csv_of_the_real_traces_is_accepted():
    """Upstream's driver style, with pandas itself where it is installed."""
    pandas = pytest.importorskip("pandas")
    train, v100 = pandas.read_csv(TRAIN), pandas.read_csv(power("v100"))
    assert train["target_epoch"].isna().any()
    by_frame = Simulator(train, v100, PruningGTSBatchSizeOptimizer(seed=1), JITPowerLimitOptimizer(),
                         seed=1, verbose=False)
    by_path = Simulator(TRAIN, power("v100"), PruningGTSBatchSizeOptimizer(seed=1), JITPowerLimitOptimizer(),
                        seed=1, verbose=False)
    # pandas' default float parser is not correctly rounded: the last digit of a time may differ.
    got, want = by_frame.simulate_one_job(IMAGENET, 12, 2.0, 0.5), by_path.simulate_one_job(IMAGENET, 12, 2.0, 0.5)
    assert [(h.bs, h.pl, h.reached) for h in got] == [(h.bs, h.pl, h.reached) for h in want]
    assert [x for h in got for x in (h.energy, h.time)] == pytest.approx(
        [x for h in want for x in (h.energy, h.time)], rel=1e-12)


def test_a_power_limit_policy_that_never_answers_is_a_clear_error():
    class Silent(JITInPython):
        def predict(self, job, batch_size):
            return None

    with pytest.raises(ZeusInvalidArgumentError, match="no power limit \\(None\\) for batch size 256 after profiling"):
        run(DefaultBSO(), Silent(), job=IMAGENET, n=3)


def test_a_policy_that_never_converges_stops_at_the_recurrence_limit():
    class Smallest(DefaultBSO):
        def __init__(self):
            super().__init__()
            self.first = True

        def predict(self, job):
            if self.first:
                self.first = False
                return job.default_bs
            return 64

    with pytest.raises(ZeusInvalidArgumentError, match="failed 20 tries in a row .*policy 'DefaultBSO"):
        run(Smallest(), JITPowerLimitOptimizer(), job=IMAGENET, n=5, beta=0.01)


def write_groups(path, compress: bool) -> str:
    rows = ["group,start_time,end_time,dataset,runtime_ratio"]
    # g-a: sequential then overlapping imagenet jobs; g-b: squad.
    for i, (s, e, r) in enumerate([(0, 50, 1.0), (100, 180, 1.3), (120, 200, 0.8), (400, 450, 1.0)]):
        rows.append(f"g-a,{s},{e},imagenet,{r}")
    rows.append("g-b,10,20,squad,1.0")
    rows.append("g-b,30,40,squad,2.0")
    text = "\n".join(rows) + "\n"
    if compress:
        with lzma.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)
    return str(path)


@pytest.mark.parametrize("compress", [False, True])
def test_alibaba_group_replay(tmp_path, compress):
    path = write_groups(tmp_path / ("groups.csv.xz" if compress else "groups.csv"), compress)
    groups = read_alibaba_groups(path)
    assert [(g.group, g.dataset, len(g.rows)) for g in groups] == [("g-a", "imagenet", 4), ("g-b", "squad", 2)]
    assert group_seed("g-a") == zlib.adler32(b"g-a")
    g = groups[0]
    seed = group_seed(g.group)
    sim = Simulator(TRAIN, power("v100"), PruningGTSBatchSizeOptimizer(seed=seed, concurrency=True),
                    JITPowerLimitOptimizer(), seed=seed, verbose=False)
    history = sim.simulate_one_alibaba_group(IMAGENET, g, beta_knob=2.0, eta_knob=0.5)
    assert sum(h.reached for h in history) == 4  # every job of the group ends reached
    # Upstream's group_df shape (rows as mappings) gives the same history.
    rows = [{"group": "g-a", "start_time": s, "end_time": e, "runtime_ratio": r} for s, e, r in g.rows]
    assert sim.simulate_one_alibaba_group(IMAGENET, rows, 2.0, 0.5) == history
    # And a Python policy runs there too.
    seam = Simulator(TRAIN, power("v100"), Delegating(PruningGTSBatchSizeOptimizer(seed=seed)),
                     JITInPython(), seed=seed, verbose=False)
    assert seam.simulate_one_alibaba_group(IMAGENET, g, 2.0, 0.5) == history


def test_upstream_style_drivers_run(tmp_path):
    drivers = os.path.join(SOURCE_DIR, "examples", "python", "zeus_nsdi23")
    single = subprocess.run(
        [sys.executable, os.path.join(drivers, "run_single.py"), "--policy", "python",
         "--dataset", "imagenet", "--model", "resnet50", "--optimizer", "adadelta",
         "--target_metric", "0.65", "--max_epochs", "100", "--b_0", "256"],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, ZEUS_TRACES=TRACES))
    assert single.returncode == 0, single.stderr
    assert single.stdout.count("HistoryEntry(") >= 70
    groups = write_groups(tmp_path / "groups.csv.xz", True)
    alibaba = subprocess.run(
        [sys.executable, os.path.join(drivers, "run_alibaba.py"), "--groups", groups,
         "--processes", "2"],
        capture_output=True, text=True, timeout=120, env=dict(os.environ, ZEUS_TRACES=TRACES))
    assert alibaba.returncode == 0, alibaba.stderr
    assert "Number of groups: 2" in alibaba.stdout
    assert "('imagenet'," in alibaba.stdout and "('squad'," in alibaba.stdout
