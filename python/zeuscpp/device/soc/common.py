"""The SoC interface, its measurement base and errors (upstream ``zeus.device.soc.common``)."""

from __future__ import annotations

import abc

from zeuscpp.exception import ZeusBaseError

__all__ = ["SoC", "SoCMeasurement", "ZeusBaseSoCError", "ZeusSoCInitError"]


class ZeusBaseSoCError(ZeusBaseError):
    """A board could not be measured."""


class ZeusSoCInitError(ZeusBaseSoCError):
    """No board was found, or it could not be set up (``get_soc()``)."""


class SoCMeasurement(abc.ABC):
    """Energy of a board's parts over one window (subclasses name the parts)."""

    @abc.abstractmethod
    def __sub__(self, other: SoCMeasurement) -> SoCMeasurement:
        """The field-wise difference of two readings."""

    @abc.abstractmethod
    def zero_all_fields(self) -> None:
        """Sets every measured field to zero (a cancelled window)."""


class SoC(abc.ABC):
    """A board whose parts are measured together (upstream's interface); see ``get_soc()``."""

    @abc.abstractmethod
    def get_available_metrics(self) -> set[str]:
        """The measurement fields this board fills (the others stay None)."""

    @abc.abstractmethod
    def get_total_energy_consumption(self) -> SoCMeasurement:
        """Energy since this object was made, in mJ (cumulative)."""

    @abc.abstractmethod
    def begin_window(self, key: str, restart: bool = False) -> None:
        """Begins window `key` (``ValueError`` when it runs, unless restart)."""

    @abc.abstractmethod
    def end_window(self, key: str) -> SoCMeasurement:
        """Ends window `key` and returns the board's energy over it."""
