"""Perseus's per-rank optimizer (upstream ``zeus.optimizer.pipeline_frequency``).

:class:`PipelineFrequencyOptimizer` talks to a pipeline-frequency server
(``zeus perseus serve``, or the Python Zeus's server: same API). Rank 0
registers the job and the id reaches every rank through
``torch.distributed.broadcast_object_list``, as upstream; each rank registers
its GPU's clocks and fetches one iteration's (instruction, frequency) list.
``on_instruction_begin("forward")`` then hands the next frequency to a C++
thread that locks the GPU's clock (min = max) while training goes on;
``on_step_end()`` checks the list was used up and starts it over. The clocks
and the power limit are restored when the optimizer is freed and on every
exit path of the process.
"""

from __future__ import annotations

from typing import Any, Callable

from zeuscpp import _signals
from zeuscpp._core import optimizer as _optimizer
from zeuscpp._parts import core_attribute
from zeuscpp.callback import Callback
from zeuscpp.utils.framework import sync_execution

_PipelineFrequencyOptimizer = core_attribute(
    "zeuscpp.optimizer.pipeline_frequency", _optimizer, "PipelineFrequencyOptimizer",
    "the HTTP layer (the Perseus server client)")

__all__ = ["PipelineFrequencyOptimizer"]


def _torch_broadcast() -> Callable[[str | None], str]:
    """Rank 0's job id to every rank, over torch.distributed."""
    import torch.distributed as dist

    def broadcast(job_id: str | None) -> str:
        objects: list[Any] = [job_id]
        dist.broadcast_object_list(objects, src=0)
        return objects[0]

    return broadcast


class PipelineFrequencyOptimizer(Callback):
    """Sets the GPU frequency of each forward and backward computation from a Perseus plan.

    Args (as upstream):
        rank, dp_rank, pp_rank, tp_rank: this process's global rank and its
            data-, pipeline- and tensor-parallel ranks.
        device_id: index of the GPU this rank drives (``zeuscpp.device`` index;
            ``torch.cuda.set_device`` is called with it when CUDA is there).
        dp_degree, pp_degree, tp_degree, world_size: the job's shape
            (world_size = dp * pp * tp).
        server_url: e.g. ``http://127.0.0.1:7787``.
        job_metadata: appended to the job id.
        job_id: (zeuscpp) the job id, when the ranks learn it some other way
            than torch.distributed; then no rank registers the job.
        report_every: (zeuscpp) report each N iterations' time and energy to
            the server and fetch the next schedule (a StragglerAware server
            may switch plans); 0 (upstream's behaviour) fetches once.

    Raises:
        RuntimeError: torch.distributed is not initialized (and no job_id was
            given for a job of several ranks), or a hook's instruction does
            not match the schedule (``ZeusFailedPreconditionError``).
        ZeusInvalidArgumentError / ZeusNotFoundError / ZeusIOError: the server
            refused the job or rank, or could not be reached.
    """

    def __init__(
        self,
        rank: int,
        dp_rank: int,
        pp_rank: int,
        tp_rank: int,
        device_id: int,
        dp_degree: int,
        pp_degree: int,
        tp_degree: int,
        world_size: int,
        server_url: str,
        job_metadata: str | None = None,
        *,
        job_id: str | None = None,
        report_every: int = 0,
    ) -> None:
        """Register with the server, start the frequency controller, fetch the schedule."""
        broadcast = None
        if job_id is None and world_size > 1:
            import torch.distributed as dist

            if not (dist.is_available() and dist.is_initialized()):
                raise RuntimeError(
                    "Instantiate `PipelineFrequencyOptimizer` after `init_process_group` "
                    "(or pass job_id=...)."
                )
            broadcast = _torch_broadcast()
        try:
            import torch

            if torch.cuda.is_available():
                torch.cuda.set_device(device_id)
        except ImportError:  # pragma: no cover - torch is optional outside the hooks' sync
            pass
        self._core = _PipelineFrequencyOptimizer(
            device_id, rank, dp_rank, pp_rank, tp_rank, dp_degree, pp_degree, tp_degree,
            world_size, server_url, job_metadata, job_id, broadcast, report_every,
        )
        _signals.hand_signals_back_to_python()
        self.server_url = server_url
        self.rank = rank
        self.dp_rank = dp_rank
        self.pp_rank = pp_rank
        self.tp_rank = tp_rank
        self.device_id = device_id
        self.job_id: str = self._core.job_id

    @property
    def freq_schedule(self) -> list[tuple[str, int]]:
        """This rank's schedule: (instruction, MHz) pairs of one iteration (upstream's name)."""
        return self._core.frequencies

    @property
    def current_frequency(self) -> int:
        """The SM clock (MHz) the controller last locked."""
        return self._core.current_frequency

    def on_step_begin(self) -> None:
        """Mark the start of an iteration (measured when report_every > 0)."""
        self._core.on_step_begin()

    def on_step_end(self) -> None:
        """Check the schedule was used up and start it over (report and refetch when due)."""
        self._core.on_step_end()

    def on_instruction_begin(self, name: str) -> None:
        """Before a computation: wait for queued GPU work, then set the next frequency.

        Raises ZeusFailedPreconditionError (a RuntimeError) when ``name`` is not the
        next instruction of the schedule.
        """
        sync_execution([self.device_id], sync_with="torch")
        self._core.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        """After a computation (nothing to do)."""
        self._core.on_instruction_end(name)

    def wait_for_frequency(self) -> None:
        """(zeuscpp) Block until the frequencies asked for so far are set."""
        self._core.flush()

    def close(self) -> None:
        """Stop the controller and restore the GPU's clocks now (also done when freed)."""
        self._core.close()
