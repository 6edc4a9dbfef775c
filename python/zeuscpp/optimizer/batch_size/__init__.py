"""The batch-size optimizer client (upstream ``zeus.optimizer.batch_size``).

A recurring training job asks the batch-size optimizer service (``zeus bso
serve``, or the Python Zeus's server: the wire format is the same) which batch
size to use, reports every epoch's cumulative time and GPU energy, and stops
when the service says so::

    from zeuscpp.monitor import ZeusMonitor
    from zeuscpp.optimizer.batch_size import BatchSizeOptimizer, JobSpec

    monitor = ZeusMonitor()
    bso = BatchSizeOptimizer(monitor, "http://bso:8000",
                             JobSpec(job_id_prefix="resnet", batch_sizes=[32, 64, 128],
                                     default_batch_size=64, target_metric=0.9))
    batch_size = bso.get_batch_size()
    bso.on_train_begin()
    for epoch in range(100):
        train_one_epoch(batch_size)
        bso.on_evaluate(validate())
        if bso.training_finished:
            break

The client is the C++ library's (``zeus::batch_size::BatchSizeOptimizer``): the same
registration, retries with an idempotency key, and failure marking as the C++
API. Modules ``client``, ``common`` and ``exceptions`` mirror upstream's.
"""

from __future__ import annotations

from zeuscpp.optimizer.batch_size.client import BatchSizeOptimizer
from zeuscpp.optimizer.batch_size.common import JobSpec, ReportResponse
from zeuscpp.optimizer.batch_size.exceptions import (
    ZeusBSOBadOperationError,
    ZeusBSOConfigError,
    ZeusBSOOperationOrderError,
    ZeusBSORuntimError,
    ZeusBSOTrainFailError,
)

__all__ = [
    "BatchSizeOptimizer",
    "JobSpec",
    "ReportResponse",
    "ZeusBSOBadOperationError",
    "ZeusBSOConfigError",
    "ZeusBSOOperationOrderError",
    "ZeusBSORuntimError",
    "ZeusBSOTrainFailError",
]
