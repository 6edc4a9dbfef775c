"""The job description sent to the service (upstream ``zeus.optimizer.batch_size.common``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from zeuscpp._parts import core_part
from zeuscpp.exception import ZeusBaseError
from zeuscpp.optimizer.batch_size.exceptions import ZeusBSOConfigError

_batch_size = core_part("zeuscpp.optimizer.batch_size", "batch_size", "the HTTP layer (the batch-size service client)")

__all__ = ["JobSpec", "ReportResponse"]

_FIELDS = (
    "job_id",
    "job_id_prefix",
    "batch_sizes",
    "default_batch_size",
    "eta_knob",
    "beta_knob",
    "target_metric",
    "higher_is_better_metric",
    "max_epochs",
    "num_pruning_rounds",
    "window_size",
    "mab_prior_mean",
    "mab_prior_precision",
    "mab_num_explorations",
    "mab_seed",
)


class JobSpec:
    """A recurring job: its candidate batch sizes, default, target and knobs.

    Keyword arguments and defaults are upstream's (``job_id`` None: the server
    generates ``<job_id_prefix>-<8 hex digits>``; ``beta_knob`` None disables
    early stopping; ``mab_seed`` None seeds from the clock). The GPU fields
    (``max_power``, ``number_of_gpus``, ``gpu_model``) are filled by the client
    from the monitored GPUs. The spec is checked by the same rules the server
    applies; a bad one raises :class:`ZeusBSOConfigError` (a ``ValueError``)
    naming the field.
    """

    def __init__(
        self,
        *,
        job_id_prefix: str,
        batch_sizes: Sequence[int],
        default_batch_size: int,
        job_id: Optional[str] = None,
        eta_knob: float = 0.5,
        beta_knob: Optional[float] = 2.0,
        target_metric: float = 0.50,
        higher_is_better_metric: bool = True,
        max_epochs: int = 100,
        num_pruning_rounds: int = 2,
        window_size: int = 0,
        mab_prior_mean: float = 0.0,
        mab_prior_precision: float = 0.0,
        mab_num_explorations: int = 2,
        mab_seed: Optional[int] = None,
    ) -> None:
        """Check and keep the spec (see the class docstring)."""
        given = dict(locals())
        raw = {name: given[name] for name in _FIELDS}
        if raw["job_id"] is None:
            del raw["job_id"]
        if isinstance(raw["batch_sizes"], (list, tuple)):
            raw["batch_sizes"] = list(raw["batch_sizes"])
        try:
            text = json.dumps(raw, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise ZeusBSOConfigError(f"the job spec is not plain JSON data: {e}") from e
        try:
            checked = json.loads(_batch_size.validate_job_spec(text))
        except ZeusBaseError as e:
            raise ZeusBSOConfigError(str(e)) from e
        for name in _FIELDS:
            value = checked.get(name)
            if name == "job_id" and not value:
                value = None
            setattr(self, name, value)

    def dict(self) -> dict[str, Any]:
        """The fields as a dict (pydantic v1 style, as upstream's model has)."""
        return {name: getattr(self, name) for name in _FIELDS}

    def json(self) -> str:
        """The fields as JSON text (``job_id`` left out when None)."""
        d = self.dict()
        if d["job_id"] is None:
            del d["job_id"]
        return json.dumps(d)

    def __eq__(self, other: object) -> bool:
        """Specs are equal when every field is."""
        return isinstance(other, JobSpec) and self.dict() == other.dict()

    def __repr__(self) -> str:
        """E.g. ``JobSpec(job_id_prefix='resnet', batch_sizes=[32, 64], ...)``."""
        inner = ", ".join(f"{k}={v!r}" for k, v in self.dict().items())
        return f"JobSpec({inner})"


@dataclass(frozen=True)
class ReportResponse:
    """The service's answer to an epoch report (upstream's model)."""

    stop_train: bool
    converged: bool
    message: str
