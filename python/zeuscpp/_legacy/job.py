"""The job specification (upstream ``zeus._legacy.job.Job``)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, unsafe_hash=True)
class Job:
    """A recurring training job: what it trains and when it is done.

    The fields are upstream's; ``filter_df`` (a pandas helper) is not provided:
    the simulator matches the trace rows itself.
    """

    dataset: str
    network: str
    optimizer: str
    target_metric: float
    max_epochs: int
    default_bs: int | None = None
    default_lr: float | None = None
    workdir: str | None = None
    command: list[str] | None = field(default=None, hash=False, compare=False)

    def __str__(self) -> str:
        """The short form upstream prints."""
        bs = f",bs{self.default_bs}" if self.default_bs is not None else ""
        return (
            f"Job({self.dataset},{self.network},{self.optimizer},{self.target_metric}"
            f"{bs}~{self.max_epochs})"
        )

    def to_logdir(self) -> str:
        """A directory name that describes this job."""
        return (
            f"{self.dataset}+{self.network}+bs{self.default_bs}"
            f"+{self.optimizer}+lr{self.default_lr}"
            f"+tm{self.target_metric}+me{self.max_epochs}"
        )
