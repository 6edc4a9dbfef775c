"""RAPL helpers at upstream's path (``zeus.device.cpu.rapl``).

Reading RAPL counters is the C++ library's (:func:`zeuscpp.device.get_cpus`);
this module has the helper that finds which package a process runs on.
"""

from __future__ import annotations

import glob
import os
from typing import Literal

from zeuscpp.exception import ZeusBaseCPUError

__all__ = ["get_current_rapl_zone_id", "ZeusRAPLNotSupportedError", "RAPL_DIR", "CONTAINER_RAPL_DIR"]

RAPL_DIR = "/sys/class/powercap"
CONTAINER_RAPL_DIR = "/zeus_sys/class/powercap"  # the host's powercap, mounted into a container
_PROC_DIR = "/proc"
_CPU_DIR = "/sys/devices/system/cpu"


class ZeusRAPLNotSupportedError(ZeusBaseCPUError):
    """No RAPL package zone matches (upstream's name)."""


def _powercap_root() -> str:
    configured = os.environ.get("ZEUS_POWERCAP_ROOT")
    if configured:
        return configured
    return RAPL_DIR if os.path.exists(RAPL_DIR) else CONTAINER_RAPL_DIR


def _read_int(path: str) -> int:
    with open(path) as f:
        return int(f.read().strip())


def get_current_rapl_zone_id(pid: int | Literal["current"] = "current") -> int:
    """The RAPL zone id N (``intel-rapl:N``) of the CPU package process ``pid`` last ran on.

    Pass it in ``cpu_indices`` to measure only that socket. The CPU comes from
    ``/proc/<pid>/stat`` (field 39, counted after the command name, which may
    hold spaces and parentheses), its package N and die D from sysfs topology,
    and the zone is the top-level one named ``package-N`` or ``package-N-die-D``.
    The powercap tree is ``$ZEUS_POWERCAP_ROOT`` when set (as everywhere in
    zeuscpp), else ``/sys/class/powercap`` or a container's ``/zeus_sys/class/powercap``.
    The scheduler may move a process between sockets: pin it (``taskset``) to rely on this.

    Args:
        pid: A process id, or ``"current"`` for this process.

    Raises:
        ZeusRAPLNotSupportedError: no package zone has a matching name.
        OSError: the process or the sysfs files cannot be read.
    """
    if pid == "current":
        pid = os.getpid()
    with open(f"{_PROC_DIR}/{pid}/stat") as f:
        after_command = f.read().rsplit(")", 1)[1].split()
    cpu = int(after_command[36])  # field 39 of the line; 3 of them precede these
    topology = f"{_CPU_DIR}/cpu{cpu}/topology"
    package = _read_int(f"{topology}/physical_package_id")
    names = {f"package-{package}"}
    try:
        names.add(f"package-{package}-die-{_read_int(f'{topology}/die_id')}")
    except (OSError, ValueError):
        pass  # kernels without die_id
    root = _powercap_root()
    for zone in sorted(glob.glob(f"{root}/intel-rapl:[0-9]*")):
        base = os.path.basename(zone)
        if base.count(":") != 1:  # intel-rapl:N:M are sub-zones (core, dram)
            continue
        try:
            with open(os.path.join(zone, "name")) as f:
                name = f.read().strip()
        except OSError:
            continue
        if name in names:
            return int(base.split(":")[1])
    raise ZeusRAPLNotSupportedError(
        f"no RAPL package zone under {root} is named {' or '.join(sorted(names))} "
        f"(process {pid} last ran on CPU {cpu}, package {package})"
    )
