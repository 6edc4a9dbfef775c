"""Optimization policies for the simulator (upstream ``zeus._legacy.policy``)."""

from zeuscpp._legacy.policy.interface import BatchSizeOptimizer, PowerLimitOptimizer
from zeuscpp._legacy.policy.optimizer import JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer

__all__ = [
    "BatchSizeOptimizer",
    "PowerLimitOptimizer",
    "JITPowerLimitOptimizer",
    "PruningGTSBatchSizeOptimizer",
]
