"""The built-in policies (upstream ``zeus._legacy.policy.optimizer``).

They are the library's own C++ policies ("zeus" in the policy registry): the
simulator runs them without calling into Python, and their methods work from
Python too. A copy (``copy.deepcopy``, which the simulator makes of every
policy) starts from the constructor's arguments, without registered jobs.
"""

from __future__ import annotations

from typing import Any

from zeuscpp._legacy.job import Job
from zeuscpp._legacy.policy.interface import BatchSizeOptimizer, PowerLimitOptimizer
from zeuscpp._parts import core_part

_legacy = core_part("zeuscpp._legacy", "legacy", "the trace simulator (ZEUS_WITH_SIM)")


class _Builtin:
    """A subclass that overrides a policy method is a Python policy, not the built-in."""

    _zeuscpp_policy: str | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "_zeuscpp_policy" not in cls.__dict__ and any(
            m in cls.__dict__ for m in ("register_job", "predict", "observe")
        ):
            cls._zeuscpp_policy = None


class PruningGTSBatchSizeOptimizer(_Builtin, BatchSizeOptimizer):
    """Zeus's batch size search: two pruning rounds, then Gaussian Thompson sampling."""

    _zeuscpp_policy = "zeus"

    def __init__(
        self,
        prior_mean: float = 0.0,
        prior_precision: float = 0.0,
        window_size: int = 0,
        concurrency: bool = False,
        seed: int = 123456,
        verbose: bool = True,
    ) -> None:
        """Upstream's arguments; `concurrency` is always on here and `verbose` prints nothing."""
        self.prior_mean = prior_mean
        self.prior_precision = prior_precision
        self.window_size = window_size
        self.concurrency = concurrency
        self.seed = seed
        self.verbose = verbose
        self._jobs: dict[Job, Any] = {}  # each a _core.legacy.BatchSizeHandle

    def _zeuscpp_knobs(self) -> dict:
        return {
            "prior_mean": float(self.prior_mean),
            "prior_precision": float(self.prior_precision),
            "window_size": int(self.window_size),
            "seed": int(self.seed),
        }

    def __deepcopy__(self, memo: dict) -> PruningGTSBatchSizeOptimizer:
        return type(self)(
            self.prior_mean, self.prior_precision, self.window_size, self.concurrency, self.seed,
            self.verbose,
        )

    @property
    def name(self) -> str:
        """Upstream's name."""
        return "Pruning GaussianTS BSO"

    def register_job(self, job: Job, batch_sizes: list[int]) -> None:
        """Start a search for `job` over `batch_sizes` from its default_bs."""
        if job.default_bs is None:
            raise ValueError(f"Default BS not specified for {job}.")
        if not batch_sizes:
            raise ValueError(f"Batch size list for {job} is empty.")
        self._jobs[job] = _legacy.BatchSizeHandle(
            "zeus", list(batch_sizes), job.default_bs, self._zeuscpp_knobs()
        )

    def predict(self, job: Job) -> int:
        """The batch size of the job's next run."""
        return self._jobs[job].predict()

    def observe(self, job: Job, batch_size: int, cost: float, converged: bool | None = None) -> None:
        """Learn from a finished run."""
        self._jobs[job].observe(batch_size, cost, bool(converged))


class JITPowerLimitOptimizer(_Builtin, PowerLimitOptimizer):
    """Profiles a batch size's power limits on its first run, then keeps the cheapest."""

    _zeuscpp_policy = "zeus"

    def __init__(self, verbose: bool = True) -> None:
        """`verbose` prints nothing here."""
        self.verbose = verbose
        self._jobs: dict[Job, Any] = {}  # each a _core.legacy.PowerLimitHandle

    def _zeuscpp_knobs(self) -> dict:
        return {}

    def __deepcopy__(self, memo: dict) -> JITPowerLimitOptimizer:
        return type(self)(self.verbose)

    @property
    def name(self) -> str:
        """Upstream's name."""
        return "JITPSO"

    def predict(self, job: Job, batch_size: int) -> int | None:
        """The cheapest profiled limit, or None before profiling."""
        handle = self._jobs.get(job)
        return None if handle is None else handle.predict(batch_size)

    def observe(self, job: Job, batch_size: int, power_limit: int, cost: float) -> None:
        """One profiled limit's epoch cost."""
        self._jobs.setdefault(job, _legacy.PowerLimitHandle()).observe(batch_size, power_limit, cost)
