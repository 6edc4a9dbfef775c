"""Errors of the batch-size optimizer client, with upstream's names (typo included).

Each also derives from the class zeuscpp raises for the underlying library
error, so ``except ValueError`` / ``except RuntimeError`` clauses keep working;
the library's exception is the ``__cause__``.
"""

from __future__ import annotations

from zeuscpp.exception import ZeusBaseError

__all__ = [
    "ZeusBSORuntimError",
    "ZeusBSOTrainFailError",
    "ZeusBSOConfigError",
    "ZeusBSOOperationOrderError",
    "ZeusBSOBadOperationError",
]


class ZeusBSORuntimError(ZeusBaseError):
    """The server refused a request, could not be reached, or answered something unusable."""


class ZeusBSOTrainFailError(ZeusBaseError):
    """This run stopped without reaching the target metric; relaunch the job.

    The service will not choose this batch size again for the job.
    """


class ZeusBSOConfigError(ZeusBaseError, ValueError):
    """The job cannot use the optimizer as configured: no GPUs, mixed GPU models, a bad spec."""


class ZeusBSOOperationOrderError(ZeusBaseError, RuntimeError):
    """Methods called in the wrong order (``on_evaluate`` before ``get_batch_size``)."""


class ZeusBSOBadOperationError(ZeusBaseError, RuntimeError):
    """An operation this process may not do (``get_batch_size`` on a rank other than 0)."""
