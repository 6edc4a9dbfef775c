"""A stand-in for the parts of ``transformers`` a TrainerCallback meets.

transformers is not a Debian package, so the tests drive callbacks through
this model of ``Trainer``'s callback protocol instead. What it keeps from the
real one (transformers 4.x, ``trainer.py`` and ``trainer_callback.py``):

- ``CallbackHandler`` orders callbacks as the Trainer builds them: the default
  flow callback, then the ``report_to`` reporters, then ``callbacks=[...]``;
  ``call_event`` calls each in turn with ``(args, state, control, **kwargs)``.
- ``DefaultFlowCallback.on_step_end`` sets ``control.should_log`` every
  ``logging_steps``; the loop then calls ``Trainer.log``.
- ``Trainer.log`` adds ``epoch``, appends ``{**logs, "step": ...}`` to
  ``state.log_history`` and then calls ``on_log`` with the same ``logs`` dict
  for every callback; the end of ``train()`` logs a summary before
  ``on_train_end``.
- A reporter (like TensorBoard's) writes the entry when its ``on_log`` runs:
  it copies the dict then, so keys added later never reach it.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable


class TrainerCallback:
    def on_train_begin(self, args, state, control, **kwargs): ...
    def on_train_end(self, args, state, control, **kwargs): ...
    def on_step_begin(self, args, state, control, **kwargs): ...
    def on_step_end(self, args, state, control, **kwargs): ...
    def on_log(self, args, state, control, logs=None, **kwargs): ...


class TrainerControl:
    def __init__(self) -> None:
        self.should_log = False


class TrainerState:
    def __init__(self) -> None:
        self.global_step = 0
        self.epoch = 0.0
        self.log_history: list[dict[str, Any]] = []


class TrainingArguments:
    def __init__(self, logging_steps: int) -> None:
        self.logging_steps = logging_steps


class DefaultFlowCallback(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if args.logging_steps > 0 and state.global_step % args.logging_steps == 0:
            control.should_log = True
        return control


class Reporter(TrainerCallback):
    """Records each log entry as it sees it (the scalars TensorBoard would write)."""

    def __init__(self) -> None:
        self.written: list[dict[str, Any]] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.written.append({**logs, "step": state.global_step})


class CallbackHandler:
    def __init__(self, callbacks: list[TrainerCallback]) -> None:
        self.callbacks = list(callbacks)

    def call_event(self, event: str, args, state, control, **kwargs):
        for callback in self.callbacks:
            result = getattr(callback, event)(args, state, control, model=None, **kwargs)
            if result is not None:
                control = result
        return control


class Trainer:
    def __init__(self, args: TrainingArguments, reporters: list[TrainerCallback],
                 callbacks: list[TrainerCallback] | None = None) -> None:
        self.args = args
        self.state = TrainerState()
        self.control = TrainerControl()
        self.callback_handler = CallbackHandler([DefaultFlowCallback(), *reporters, *(callbacks or [])])

    def log(self, logs: dict[str, Any]) -> None:
        logs["epoch"] = self.state.epoch
        self.state.log_history.append({**logs, "step": self.state.global_step})
        self.control = self.callback_handler.call_event("on_log", self.args, self.state, self.control, logs=logs)

    def train(self, steps: int, step: Callable[[int], float]) -> None:
        """Runs `steps` steps; step(i) does the work and returns the loss."""
        h, a, s = self.callback_handler, self.args, self.state
        self.control = h.call_event("on_train_begin", a, s, self.control)
        for i in range(steps):
            self.control = h.call_event("on_step_begin", a, s, self.control)
            loss = step(i)
            s.global_step += 1
            s.epoch = s.global_step / steps
            self.control = h.call_event("on_step_end", a, s, self.control)
            if self.control.should_log:
                self.control.should_log = False
                self.log({"loss": loss})
        self.log({"train_loss": 0.0})
        self.control = h.call_event("on_train_end", a, s, self.control)


def install(monkeypatch) -> None:
    """Makes `import transformers.trainer_callback` find this module for one test."""
    package = types.ModuleType("transformers")
    package.__path__ = []
    package.trainer_callback = sys.modules[__name__]
    monkeypatch.setitem(sys.modules, "transformers", package)
    monkeypatch.setitem(sys.modules, "transformers.trainer_callback", sys.modules[__name__])
