"""The policy interfaces (upstream ``zeus._legacy.policy.interface``).

Subclass these and hand instances to ``zeuscpp._legacy.simulate.Simulator``:
the C++ replay calls ``predict`` and ``observe`` once per decision.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from zeuscpp._legacy.job import Job


class BatchSizeOptimizer(ABC):
    """Chooses the batch size of each run of a job."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Name of the batch size optimizer (errors name it)."""

    @abstractmethod
    def register_job(self, job: Job, batch_sizes: list[int]) -> None:
        """Take on `job`, whose runs may use any of `batch_sizes` (ascending)."""

    @abstractmethod
    def predict(self, job: Job) -> int:
        """The batch size of the job's next run (one of the registered ones)."""

    @abstractmethod
    def observe(self, job: Job, batch_size: int, cost: float, converged: bool | None = None) -> None:
        """A run of `job` at `batch_size` ended with `cost` and did or did not converge."""

    def _log(self, message: str) -> None:
        """Print a message prefixed with the optimizer's name."""
        print(f"[{self.name}] {message}")


class PowerLimitOptimizer(ABC):
    """Chooses the power limit of each run of a job, given its batch size."""

    @property
    @abstractmethod
    def name(self) -> str:
        """Name of the power limit optimizer (errors name it)."""

    @abstractmethod
    def predict(self, job: Job, batch_size: int) -> int | None:
        """The power limit (W) for a run at `batch_size`, or None to ask for profiling.

        After None the simulator observes every power limit's epoch cost (highest
        first) and asks again; then a value is required.
        """

    @abstractmethod
    def observe(self, job: Job, batch_size: int, power_limit: int, cost: float) -> None:
        """One profiled power limit's epoch cost."""

    def _log(self, message: str) -> None:
        """Print a message prefixed with the optimizer's name."""
        print(f"[{self.name}] {message}")
