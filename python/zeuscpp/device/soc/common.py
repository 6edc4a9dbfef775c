"""The base of a board's per-window measurement (upstream ``zeus.device.soc.common``)."""

from __future__ import annotations

import abc


class SoCMeasurement(abc.ABC):
    """Energy of a board's parts over one window (subclasses name the parts)."""

    @abc.abstractmethod
    def __sub__(self, other: SoCMeasurement) -> SoCMeasurement:
        """The field-wise difference of two readings."""

    @abc.abstractmethod
    def zero_all_fields(self) -> None:
        """Sets every measured field to zero (a cancelled window)."""
