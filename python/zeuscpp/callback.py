"""Training-loop callbacks (upstream ``zeus.callback``).

A training loop calls the hooks of a :class:`Callback` at step and epoch
boundaries; optimizers such as
:class:`~zeuscpp.optimizer.power_limit.GlobalPowerLimitOptimizer` are callbacks.
:class:`CallbackSet` fans every hook out to several callbacks.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["Callback", "CallbackSet"]


class Callback:
    """Base class for callbacks: every hook does nothing; override the ones you need.

    Hooks per epoch, in order: ``on_train_begin``; { ``on_epoch_begin``;
    { ``on_step_begin``; <step>; ``on_step_end`` }*; ``on_evaluate``?;
    ``on_epoch_end`` }*; ``on_train_end``.
    """

    def on_train_begin(self) -> None:
        """Called at the beginning of training."""

    def on_train_end(self) -> None:
        """Called at the end of training."""

    def on_epoch_begin(self) -> None:
        """Called at the beginning of each epoch."""

    def on_epoch_end(self) -> None:
        """Called at the end of each epoch."""

    def on_step_begin(self) -> None:
        """Called at the beginning of each step."""

    def on_step_end(self) -> None:
        """Called at the end of each step."""

    def on_evaluate(self, metric: float) -> object:
        """Called after evaluating the model.

        An override may return something (the batch-size optimizer returns the
        service's answer); :class:`CallbackSet` does not collect it.
        """

    def on_instruction_begin(self, name: str) -> None:
        """Called at the beginning of pipeline instructions like forward or backward."""

    def on_instruction_end(self, name: str) -> None:
        """Called at the end of pipeline instructions like forward or backward."""


class CallbackSet(Callback):
    """Calls every hook on each of its callbacks, in the order given."""

    def __init__(self, callbacks: Iterable[Callback]) -> None:
        """Initialize the set with the callbacks to fan out to."""
        self.callbacks = list(callbacks)

    def on_train_begin(self) -> None:
        """Called at the beginning of training."""
        for callback in self.callbacks:
            callback.on_train_begin()

    def on_train_end(self) -> None:
        """Called at the end of training."""
        for callback in self.callbacks:
            callback.on_train_end()

    def on_epoch_begin(self) -> None:
        """Called at the beginning of each epoch."""
        for callback in self.callbacks:
            callback.on_epoch_begin()

    def on_epoch_end(self) -> None:
        """Called at the end of each epoch."""
        for callback in self.callbacks:
            callback.on_epoch_end()

    def on_step_begin(self) -> None:
        """Called at the beginning of each step."""
        for callback in self.callbacks:
            callback.on_step_begin()

    def on_step_end(self) -> None:
        """Called at the end of each step."""
        for callback in self.callbacks:
            callback.on_step_end()

    def on_evaluate(self, metric: float) -> None:
        """Called after evaluating the model."""
        for callback in self.callbacks:
            callback.on_evaluate(metric)

    def on_instruction_begin(self, name: str) -> None:
        """Called at the beginning of pipeline instructions like forward or backward."""
        for callback in self.callbacks:
            callback.on_instruction_begin(name)

    def on_instruction_end(self, name: str) -> None:
        """Called at the end of pipeline instructions like forward or backward."""
        for callback in self.callbacks:
            callback.on_instruction_end(name)
