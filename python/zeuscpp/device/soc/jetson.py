"""NVIDIA Jetson boards (upstream ``zeus.device.soc.jetson``).

The library samples the board's INA3221 rails and integrates their power over
each window; this module holds the result type, with upstream's field names
and units (millijoules).
"""

from __future__ import annotations

import dataclasses

from zeuscpp.device.soc.common import SoCMeasurement

__all__ = ["JetsonMeasurement"]


@dataclasses.dataclass
class JetsonMeasurement(SoCMeasurement):
    """Energy of a Jetson's rails over one window, in mJ; None for a rail the board lacks."""

    cpu_energy_mj: float | None = None
    gpu_energy_mj: float | None = None
    total_energy_mj: float | None = None

    def __sub__(self, other: SoCMeasurement) -> JetsonMeasurement:
        if not isinstance(other, JetsonMeasurement):
            raise TypeError("a JetsonMeasurement can only be subtracted from another")
        out = JetsonMeasurement()
        for field in dataclasses.fields(self):
            mine, theirs = getattr(self, field.name), getattr(other, field.name)
            if mine is not None and theirs is not None:
                setattr(out, field.name, mine - theirs)
            elif mine is not None or theirs is not None:
                raise ValueError(f"{field.name} is measured in one reading and not the other")
        return out

    def zero_all_fields(self) -> None:
        for field in dataclasses.fields(self):
            if getattr(self, field.name) is not None:
                setattr(self, field.name, 0.0)
