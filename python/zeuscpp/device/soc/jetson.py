"""NVIDIA Jetson boards (upstream ``zeus.device.soc.jetson``).

The library samples the board's INA3221 rails and integrates their power over
each window; this module holds the result type, with upstream's field names
and units (millijoules), and :class:`Jetson`, upstream's SoC object, on the
same library windows (no polling process).
"""

from __future__ import annotations

import dataclasses
import threading

from zeuscpp.device.soc.common import SoC, SoCMeasurement, ZeusBaseSoCError, ZeusSoCInitError

__all__ = ["Jetson", "JetsonMeasurement", "ZeusJetsonInitError", "jetson_is_available"]


class ZeusJetsonInitError(ZeusSoCInitError):
    """This machine is not a Jetson the library can measure."""


_FIELD_OF_RAIL = {"cpu": "cpu_energy_mj", "gpu": "gpu_energy_mj", "total": "total_energy_mj"}


def _rails() -> list[str]:
    from zeuscpp.device import environment_report

    jetson = environment_report().get("jetson")
    return [r["rail"] for r in jetson["rails"]] if jetson else []


def jetson_is_available() -> bool:
    """Whether the library found a Jetson's power rails (sysfs, or ``ZEUS_JETSON_SYSFS_ROOT``)."""
    return bool(_rails())


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


def _rails_energy(energy: SoCMeasurement | None) -> JetsonMeasurement:
    """A window's board energy, which the library measures whenever it found the rails."""
    if not isinstance(energy, JetsonMeasurement):
        raise ZeusBaseSoCError("the library measured no Jetson rails over this window")
    return energy


class Jetson(SoC):
    """A Jetson board's CPU, GPU and module rails, measured by the library.

    Windows are the library's (rail power sampled in a C++ thread and
    integrated); the cumulative count starts when this object is made.

    Raises:
        ZeusJetsonInitError: the library found no Jetson rails.
    """

    _TOTAL = "zeuscpp.soc.total"

    def __init__(self) -> None:
        """Find the board and start its cumulative count."""
        rails = _rails()
        if not rails:
            raise ZeusJetsonInitError("No Jetson processor was detected on the current device.")
        from zeuscpp.monitor.energy import ZeusMonitor

        self._metrics = {_FIELD_OF_RAIL[r] for r in rails if r in _FIELD_OF_RAIL}
        # Only the board: the GPUs and CPU packages are other monitors' business.
        self._monitor = ZeusMonitor(gpu_indices=[], cpu_indices=[], sync_execution_with=None)
        self._monitor.begin_window(self._TOTAL, sync_execution=False)
        self._lock = threading.Lock()

    def get_available_metrics(self) -> set[str]:
        """The JetsonMeasurement fields this board fills, e.g. ``{"cpu_energy_mj", "total_energy_mj"}``."""
        return set(self._metrics)

    def get_total_energy_consumption(self, timeout: float = 15.0) -> JetsonMeasurement:
        """Energy since this object was made (mJ). ``timeout`` is upstream's; nothing here waits."""
        return _rails_energy(self._monitor.running(self._TOTAL).soc_energy)

    def begin_window(self, key: str, restart: bool = False) -> None:
        """Begins window `key` (``ValueError`` when it runs, unless restart)."""
        self._monitor.begin_window(self._key(key), sync_execution=False, restart=restart)

    def end_window(self, key: str) -> JetsonMeasurement:
        """Ends window `key` and returns the rails' energy over it (mJ)."""
        return _rails_energy(self._monitor.end_window(self._key(key), sync_execution=False).soc_energy)

    def _key(self, key: str) -> str:
        if key == self._TOTAL:
            raise ValueError(f"window name {key!r} is reserved")
        return key
