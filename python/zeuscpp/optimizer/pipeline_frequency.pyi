# Signatures only: the docstrings are the module's own (help(), the .py or the binding).
from typing import Any

from zeuscpp.callback import Callback

__all__ = ["PipelineFrequencyOptimizer"]

class PipelineFrequencyOptimizer(Callback):
    server_url: str
    rank: int
    dp_rank: int
    pp_rank: int
    tp_rank: int
    device_id: int
    job_id: str
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
        job_metadata: str | None = ...,
        *,
        job_id: str | None = ...,
        report_every: int = ...,
    ) -> None: ...
    @property
    def freq_schedule(self) -> list[tuple[str, int]]: ...
    @property
    def current_frequency(self) -> int: ...
    def on_step_begin(self) -> None: ...
    def on_step_end(self) -> None: ...
    def on_instruction_begin(self, name: str) -> None: ...
    def on_instruction_end(self, name: str) -> None: ...
    def wait_for_frequency(self) -> None: ...
    def close(self) -> None: ...
