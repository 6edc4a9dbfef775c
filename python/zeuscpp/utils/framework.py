"""Deep-learning framework glue (upstream ``zeus.utils.framework``).

- :func:`sync_function` turns ``sync_execution_with`` into the callable a
  ZeusMonitor runs before it reads counters, so queued GPU work is counted in
  the right window.
- :class:`TorchDistributedReducer` plugs ``torch.distributed`` into the C++
  optimizer's reducer seam: energy is summed over ranks, time is the slowest
  rank's, exactly as the Python Zeus does.

Frameworks are imported only when asked for; a framework that is not installed
cannot have queued work, so syncing with it does nothing.
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Callable, Literal, Sequence, Union

from zeuscpp.exception import ZeusInvalidArgumentError

__all__ = [
    "SyncWith",
    "sync_function",
    "sync_execution",
    "is_distributed",
    "get_rank",
    "get_world_size",
    "all_reduce",
    "TorchDistributedReducer",
    "LocalReducer",
    "default_reducer",
]

logger = logging.getLogger("zeuscpp")

SyncWith = Union[Literal["torch", "jax", "cupy"], Callable[[], object], None]


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        logger.info("%s is not installed: nothing of it to synchronize", name)
        return None


def sync_function(sync_with: SyncWith, gpu_indices: Sequence[int]) -> Callable[[], object] | None:
    """The callable that waits for queued GPU work, or None when there is none to wait for.

    Args:
        sync_with: ``"torch"`` (``torch.cuda.synchronize`` on each GPU when CUDA is
            available; nothing on CPU-only PyTorch), ``"jax"`` (blocks on a tiny
            computation on each GPU device), ``"cupy"`` (``Device.synchronize``), a
            callable taking no arguments (called as is), or None (never sync).
        gpu_indices: The monitored GPUs (CUDA indices).

    Raises:
        ZeusInvalidArgumentError: for any other value.
    """
    if sync_with is None:
        return None
    if callable(sync_with):
        return sync_with
    if sync_with not in ("torch", "jax", "cupy"):
        raise ZeusInvalidArgumentError(
            f"sync_execution_with must be 'torch', 'jax', 'cupy', a callable or None, got {sync_with!r}"
        )
    gpus = list(gpu_indices)
    if not gpus:
        return None
    if sync_with == "torch":
        torch = _import("torch")
        if torch is None or not torch.cuda.is_available():
            return None

        def torch_sync() -> None:
            for gpu in gpus:
                torch.cuda.synchronize(gpu)

        return torch_sync
    if sync_with == "jax":
        jax = _import("jax")
        if jax is None:
            return None
        gpu_devices = [d for d in jax.devices() if d.platform == "gpu"]
        if not gpu_devices:
            return None
        devices = [gpu_devices[i] for i in gpus if i < len(gpu_devices)] + [jax.devices("cpu")[0]]

        def jax_sync() -> None:
            for device in devices:
                (jax.device_put(0.0, device=device) + 0).block_until_ready()

        return jax_sync
    cupy = _import("cupy")
    if cupy is None:
        return None

    def cupy_sync() -> None:
        for gpu in gpus:
            cupy.cuda.Device(gpu).synchronize()

    return cupy_sync


def sync_execution(gpu_devices: Sequence[int], sync_with: SyncWith = "torch") -> None:
    """Waits for queued GPU work on these GPUs (upstream's function of the same name)."""
    fn = sync_function(sync_with, gpu_devices)
    if fn is not None:
        fn()


def _torch_distributed():
    """torch.distributed if torch is already imported and a process group is up, else None."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    dist = torch.distributed
    if not dist.is_available() or not dist.is_initialized():
        return None
    return dist


def is_distributed() -> bool:
    """Whether a torch.distributed process group is initialized."""
    return _torch_distributed() is not None


def get_rank() -> int:
    """This process's rank (0 when not distributed)."""
    dist = _torch_distributed()
    return dist.get_rank() if dist is not None else 0


def get_world_size() -> int:
    """The number of ranks (1 when not distributed)."""
    dist = _torch_distributed()
    return dist.get_world_size() if dist is not None else 1


class LocalReducer:
    """The single-process reducer: every reduction returns its input."""

    def all_reduce_sum(self, local: float) -> float:
        """Sum over ranks: the input itself."""
        return local

    def all_reduce_max(self, local: float) -> float:
        """Max over ranks: the input itself."""
        return local

    def rank(self) -> int:
        """Always 0."""
        return 0

    def world_size(self) -> int:
        """Always 1."""
        return 1


class TorchDistributedReducer:
    """All-reduce through ``torch.distributed`` for the power-limit optimizer.

    Every rank must make the same calls in the same order (they are collective).
    Tensors live on the current CUDA device for NCCL, on the CPU otherwise (gloo).

    Args:
        group: The process group (None: the default group).
    """

    def __init__(self, group=None) -> None:
        """Bind to a process group; torch.distributed must be initialized."""
        import torch
        import torch.distributed as dist

        if not dist.is_available() or not dist.is_initialized():
            raise ZeusInvalidArgumentError(
                "TorchDistributedReducer needs an initialized torch.distributed process group; "
                "call torch.distributed.init_process_group first"
            )
        self._torch = torch
        self._dist = dist
        self._group = group
        backend = dist.get_backend(group)
        if backend == "nccl":
            self._device = torch.device("cuda", torch.cuda.current_device())
        else:
            self._device = torch.device("cpu")

    def _reduce(self, local: float, op) -> float:
        tensor = self._torch.tensor([float(local)], dtype=self._torch.float64, device=self._device)
        self._dist.all_reduce(tensor, op=op, group=self._group)
        return float(tensor.item())

    def all_reduce_sum(self, local: float) -> float:
        """Sum of `local` over all ranks."""
        return self._reduce(local, self._dist.ReduceOp.SUM)

    def all_reduce_max(self, local: float) -> float:
        """Maximum of `local` over all ranks."""
        return self._reduce(local, self._dist.ReduceOp.MAX)

    def rank(self) -> int:
        """This process's rank in the group."""
        return self._dist.get_rank(self._group)

    def world_size(self) -> int:
        """The group's size."""
        return self._dist.get_world_size(self._group)


def default_reducer() -> TorchDistributedReducer | None:
    """A TorchDistributedReducer when torch.distributed is initialized, else None (one process)."""
    return TorchDistributedReducer() if is_distributed() else None


def all_reduce(values: list[float], operation: Literal["sum", "max"]) -> list[float]:
    """Element-wise all-reduce of a list over ranks (upstream's helper); the input when not distributed."""
    if operation not in ("sum", "max"):
        raise ZeusInvalidArgumentError(f"operation must be 'sum' or 'max', got {operation!r}")
    reducer = default_reducer()
    if reducer is None:
        return list(values)
    reduce = reducer.all_reduce_sum if operation == "sum" else reducer.all_reduce_max
    return [reduce(v) for v in values]
