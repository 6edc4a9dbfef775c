"""The client a training script runs (upstream ``zeus.optimizer.batch_size.client``)."""

from __future__ import annotations

import atexit
import json
import weakref
from typing import Optional

from zeuscpp._parts import core_part
from zeuscpp.callback import Callback
from zeuscpp.exception import (
    ZeusBaseError,
    ZeusFailedPreconditionError,
    ZeusHeterogeneousError,
)
from zeuscpp.monitor.energy import ZeusMonitor
from zeuscpp.optimizer.batch_size.common import JobSpec, ReportResponse
from zeuscpp.optimizer.batch_size.exceptions import (
    ZeusBSOBadOperationError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

_batch_size = core_part("zeuscpp.optimizer.batch_size", "batch_size", "the HTTP layer (the batch-size service client)")

__all__ = ["BatchSizeOptimizer"]


def _mark_failed_at_exit(ref: "weakref.ref[BatchSizeOptimizer]") -> None:
    client = ref()
    if client is not None:
        client._mark_failed_quietly()


class BatchSizeOptimizer(Callback):
    """Asks the service for this run's batch size and reports each epoch to it.

    Args:
        monitor: The :class:`~zeuscpp.monitor.ZeusMonitor` whose GPUs train; their
            model and maximum power limit are registered with the job, and each
            epoch is measured with it (window ``BatciSizeOptimizerClient``, as
            upstream names it).
        server_url: The service, e.g. ``http://127.0.0.1:8000``.
        job: The :class:`JobSpec`.
        rank: This process's rank; only rank 0 may call :meth:`get_batch_size`.
        attempts: Tries per request on transport errors (the batch-size request
            carries an idempotency key, so a retry never leaves an orphan trial).
        retry_delay: Seconds between tries.

    Raises:
        ZeusBSOConfigError: the monitor measures no GPU or GPUs of different models.
        ZeusBSORuntimError: the service refused the job (e.g. another spec is
            registered under the same ``job_id``) or could not be reached.

    A run that ends without a final report (an exception, ``sys.exit``, Ctrl-C)
    marks its trial failed, so the service explores that batch size again.
    """

    def __init__(
        self,
        monitor: ZeusMonitor,
        server_url: str,
        job: JobSpec,
        rank: int = 0,
        attempts: int = 5,
        retry_delay: float = 0.2,
    ) -> None:
        """Register the job with the service (see the class docstring)."""
        if not isinstance(job, JobSpec):
            raise TypeError(f"job must be a JobSpec, got {type(job).__name__}")
        self.monitor = monitor
        self.server_url = server_url
        self.rank = rank
        if not isinstance(monitor, ZeusMonitor):
            raise TypeError(f"monitor must be a ZeusMonitor, got {type(monitor).__name__}")
        if not monitor.gpu_indices:
            raise ZeusBSOConfigError("the batch-size optimizer needs the monitor to measure at least one GPU")
        try:
            self._core = _batch_size.BatchSizeOptimizer(
                monitor, server_url, job.json(), rank, attempts, retry_delay
            )
        except ZeusHeterogeneousError as e:
            raise ZeusBSOConfigError(str(e)) from e
        except ZeusBaseError as e:
            raise ZeusBSORuntimError(str(e)) from e
        registered = json.loads(self._core.job_json)
        self.job = job
        self.job_id: str = registered["job_id"]
        self.max_power: float = registered["max_power"]
        self.number_of_gpus: int = registered["number_of_gpus"]
        self.gpu_model: str = registered["gpu_model"]
        self.current_batch_size = 0
        atexit.register(_mark_failed_at_exit, weakref.ref(self))

    @property
    def training_finished(self) -> bool:
        """Whether the service told this run to stop (converged or not)."""
        return self._core.training_finished

    @property
    def trial_number(self) -> Optional[int]:
        """This run's trial number at the service, once a batch size was obtained."""
        return self._core.trial_number

    def get_batch_size(self) -> int:
        """The batch size to train this run with (asked once, then cached).

        Raises:
            ZeusBSOBadOperationError: called on a rank other than 0.
            ZeusBSORuntimError: the service refused or could not be reached.
        """
        try:
            self.current_batch_size = self._core.get_batch_size()
        except ZeusFailedPreconditionError as e:
            raise ZeusBSOBadOperationError(str(e)) from e
        except ZeusBaseError as e:
            raise ZeusBSORuntimError(str(e)) from e
        return self.current_batch_size

    def on_train_begin(self) -> None:
        """Start measuring the first epoch."""
        self._core.on_train_begin()

    def on_evaluate(self, metric: float) -> ReportResponse:
        """Report the epoch just evaluated; the service's answer is returned too.

        Time and GPU energy are cumulative since :meth:`on_train_begin`. When the
        service says stop, :attr:`training_finished` becomes True.

        Raises:
            ZeusBSOOperationOrderError: no batch size was obtained yet.
            ZeusBSOTrainFailError: training stopped without reaching the target;
                relaunch the job and another batch size is tried.
            ZeusBSORuntimError: the service refused or could not be reached.
        """
        if not self._core.has_trial:
            raise ZeusBSOOperationOrderError("call get_batch_size() before on_evaluate()")
        try:
            answer = self._core.on_evaluate(float(metric))
        except ZeusFailedPreconditionError as e:
            raise ZeusBSOTrainFailError(str(e)) from e
        except ZeusBaseError as e:
            raise ZeusBSORuntimError(str(e)) from e
        return ReportResponse(**answer)

    def mark_failed(self) -> None:
        """Tell the service this run failed (done on every abnormal exit anyway)."""
        try:
            self._core.mark_failed()
        except ZeusBaseError as e:
            raise ZeusBSORuntimError(str(e)) from e

    def _mark_failed_quietly(self) -> None:
        try:
            self._core.mark_failed()
        except ZeusBaseError:
            pass  # the library logged it; the process is exiting
