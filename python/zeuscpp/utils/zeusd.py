"""Talking to a zeusd (upstream ``zeus.utils.zeusd``): ``ZeusdConfig`` and ``ZeusdClient``.

The names, constructors and typed methods are upstream's; the transport is the
C++ library's client (one keep-alive connection that also holds this process's
lease, so settings changed through it are restored by zeusd if the process
dies). zeuscpp's devices use zeusd on their own when ``ZEUSD_SOCK_PATH`` or
``ZEUSD_HOST_PORT`` is set; this module is for talking to a daemon directly.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, TypeVar
from urllib.parse import urlencode

from zeuscpp._core import zeusd as _zeusd
from zeuscpp.device.exception import ZeusdError
from zeuscpp.exception import ZeusBaseError

_T = TypeVar("_T")


class ZeusdConnectionError(ZeusBaseError):
    """The daemon cannot be reached (upstream's name)."""


class ZeusdAuthError(ZeusBaseError):
    """The token was refused: missing, expired or not valid for this daemon (upstream's name)."""


class ZeusdCapabilityError(ZeusBaseError):
    """The daemon does not offer what was asked: an API group, a scope or a device (upstream's name)."""


_WRAPPED: dict[tuple[type, type], type] = {}


def _as(kind: type[ZeusBaseError], error: ZeusBaseError) -> ZeusBaseError:
    """``error`` re-raised as ``kind`` too, keeping its own class (so ``except ValueError`` still catches a 400)."""
    key = (kind, type(error))
    if key not in _WRAPPED:
        try:
            _WRAPPED[key] = type(f"{kind.__name__}[{type(error).__name__}]", (kind, type(error)), {})
        except TypeError:  # incompatible layouts: the upstream class alone
            _WRAPPED[key] = kind
    wrapped = _WRAPPED[key](str(error))
    for attr in ("code", "nvml_return", "nvml_function"):
        if hasattr(error, attr):
            try:
                setattr(wrapped, attr, getattr(error, attr))
            except AttributeError:
                pass
    return wrapped


def _calling(kind: type[ZeusBaseError], call: Callable[[], _T]) -> _T:
    try:
        return call()
    except ZeusBaseError as e:
        raise _as(kind, e) from e


@dataclass(frozen=True)
class ZeusdConfig:
    """Where a zeusd listens (a Unix socket or host:port), the token, and which devices to use (upstream's)."""

    host_port: str | None = None
    socket_path: str | None = None
    token: str | None = None
    gpu_indices: list[int] | None = None
    cpu_indices: list[int] | None = None

    @classmethod
    def tcp(cls, host: str, port: int, *, token=None, gpu_indices=None, cpu_indices=None) -> "ZeusdConfig":
        """A daemon on TCP ``host:port``."""
        return cls(host_port=f"{host}:{port}", token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def uds(cls, socket_path: str, *, token=None, gpu_indices=None, cpu_indices=None) -> "ZeusdConfig":
        """A daemon on the Unix socket ``socket_path``."""
        return cls(socket_path=socket_path, token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def from_env(cls) -> "ZeusdConfig | None":
        """``ZEUSD_SOCK_PATH`` (first) or ``ZEUSD_HOST_PORT``, with ``ZEUSD_TOKEN``; None when neither is set."""
        token = os.environ.get("ZEUSD_TOKEN")
        if (sock := os.environ.get("ZEUSD_SOCK_PATH")) is not None:
            return cls.uds(sock, token=token)
        if (host_port := os.environ.get("ZEUSD_HOST_PORT")) is not None:
            return cls(host_port=host_port, token=token)
        return None

    @property
    def endpoint(self) -> str:
        """The socket path or host:port."""
        if self.socket_path is not None:
            return self.socket_path
        if self.host_port is not None:
            return self.host_port
        raise ValueError("ZeusdConfig has neither socket_path nor host_port set.")

    def _url(self) -> str:
        return f"unix:{self.socket_path}" if self.socket_path is not None else f"http://{self.host_port}"


@dataclass(frozen=True)
class GpuInfo:
    """A GPU the daemon serves: its id there, name, PCI address, whether its energy counter is served."""

    id: int
    name: str
    pci_address: str
    cumulative_energy_available: bool


@dataclass(frozen=True)
class CpuInfo:
    """A CPU package the daemon serves and whether it has DRAM energy."""

    id: int
    dram_available: bool


@dataclass(frozen=True)
class GpuPowerSnapshot:
    """GPU power at one moment: the daemon's Unix time (ms) and mW per GPU id."""

    timestamp_ms: int
    power_mw: dict[int, int]


@dataclass(frozen=True)
class CpuDramPower:
    """One CPU package's power (mW) and its DRAM's (None without a DRAM zone)."""

    cpu_mw: int
    dram_mw: int | None


@dataclass(frozen=True)
class CpuPowerSnapshot:
    """CPU power at one moment: the daemon's Unix time (ms) and the power per CPU id."""

    timestamp_ms: int
    power_mw: dict[int, CpuDramPower]


@dataclass(frozen=True)
class CpuEnergyResult:
    """One CPU package's cumulative energy (µJ) and its DRAM's; None where not asked or not there."""

    cpu_energy_uj: int | None
    dram_energy_uj: int | None


class ZeusdClient:
    """Discovery, authentication state and typed calls for one zeusd.

    Raises:
        ValueError: no config given and none in the environment.
        ZeusdConnectionError: the daemon cannot be reached or answered discovery badly.

    A call the daemon refuses raises ``ZeusdError`` (upstream's), which is also
    the library's class for the answer (a 400 is also a ``ValueError``, a 403
    a ``PermissionError``).
    """

    def __init__(self, config: ZeusdConfig | None = None, *, persistent: bool = False) -> None:
        """Connect and run discovery (and whoami when a token is given).

        Control calls hold a lease, so zeusd restores what this process changed
        when it ends (ours). ``persistent=True`` takes no lease: the settings
        stay, as with upstream's client (an operator's lasting change).
        """
        if config is None:
            config = ZeusdConfig.from_env()
            if config is None:
                raise ValueError("No Zeusd connection configured. Set ZEUSD_SOCK_PATH or ZEUSD_HOST_PORT, or pass a ZeusdConfig.")
        self._config = config
        token = config.token if config.token is not None else os.environ.get("ZEUSD_TOKEN", "")
        url, endpoint = config._url(), config.endpoint
        self._conn = _calling(ZeusdConnectionError,
                              lambda: _zeusd.Connection(url, endpoint, token or "", persistent))
        s = self._conn.status()
        self._gpus = [GpuInfo(**g) for g in s["gpus"]]
        self._cpus = [CpuInfo(**c) for c in s["cpus"]]
        self._groups = set(s["enabled_api_groups"])
        self.auth_required: bool = s["auth_required"]
        self.auth_error: str | None = s["auth_error"]
        self.granted_scopes = frozenset(s["scopes"])

    @property
    def endpoint(self) -> str:
        """The socket path or host:port."""
        return self._config.endpoint

    @property
    def gpus(self) -> list[GpuInfo]:
        """The GPUs the daemon serves (GpuInfo)."""
        return list(self._gpus)

    @property
    def cpus(self) -> list[CpuInfo]:
        """The CPU packages the daemon serves (CpuInfo)."""
        return list(self._cpus)

    @property
    def gpu_ids(self) -> list[int]:
        """The served GPU ids."""
        return [g.id for g in self._gpus]

    @property
    def cpu_ids(self) -> list[int]:
        """The served CPU ids."""
        return [c.id for c in self._cpus]

    def _can(self, group: str) -> bool:
        return group in self._groups and (not self.auth_required or group in self.granted_scopes)

    @property
    def can_read_gpu(self) -> bool:
        """gpu-read is enabled (and granted, with auth)."""
        return self._can("gpu-read")

    @property
    def can_control_gpu(self) -> bool:
        """gpu-control is enabled (and granted)."""
        return self._can("gpu-control")

    @property
    def can_read_cpu(self) -> bool:
        """cpu-read is enabled (and granted)."""
        return self._can("cpu-read")

    @property
    def dram_available(self) -> list[bool]:
        """Per CPU package (in cpus order), whether DRAM energy is served."""
        return [c.dram_available for c in self._cpus]

    @property
    def enabled_api_groups(self) -> frozenset[str]:
        """The API groups the daemon serves (gpu-read, gpu-control, cpu-read)."""
        return frozenset(self._groups)

    def _get(self, path: str, params: dict[str, str]) -> Any:
        target = path + ("?" + urlencode(params) if params else "")
        return json.loads(_calling(ZeusdError, lambda: self._conn.get(target)))

    @staticmethod
    def _ids(ids) -> dict[str, str]:
        return {} if ids is None else {"gpu_ids": ",".join(str(i) for i in ids)}

    def _command(self, op: str, gpu_ids: list[int], **query) -> None:
        q = urlencode({k: (("true" if v else "false") if isinstance(v, bool) else str(v)) for k, v in query.items()})
        for gpu in gpu_ids:
            _calling(ZeusdError, lambda: self._conn.gpu_command(op, gpu, q))

    def get_gpu_power(self, gpu_ids=None) -> GpuPowerSnapshot:
        """Instant power (mW) of these GPUs (None: all) and the daemon's time."""
        d = self._get("/gpu/get_power", self._ids(gpu_ids))
        return GpuPowerSnapshot(timestamp_ms=d["timestamp_ms"], power_mw={int(k): v for k, v in d["power_mw"].items()})

    def get_gpu_energy(self, gpu_ids) -> dict[int, int]:
        """Cumulative energy (mJ) per GPU id."""
        return {int(k): v["energy_mj"] for k, v in self._get("/gpu/get_cumulative_energy", self._ids(gpu_ids)).items()}

    def get_power_limit(self, gpu_ids=None) -> dict[int, int]:
        """Power limit (mW) per GPU id (None: all)."""
        return {int(k): v["power_limit_mw"] for k, v in self._get("/gpu/get_power_limit", self._ids(gpu_ids)).items()}

    def get_power_limit_constraints(self, gpu_ids=None) -> dict[int, tuple[int, int]]:
        """(min, max) power limit (mW) per GPU id."""
        d = self._get("/gpu/get_power_limit_constraints", self._ids(gpu_ids))
        return {int(k): (v["min_power_limit_mw"], v["max_power_limit_mw"]) for k, v in d.items()}

    def get_persistence_mode(self, gpu_ids=None) -> dict[int, bool]:
        """Persistence mode per GPU id."""
        return {int(k): v["enabled"] for k, v in self._get("/gpu/get_persistence_mode", self._ids(gpu_ids)).items()}

    def set_power_limit(self, gpu_ids: list[int], power_limit_mw: int, block: bool = True) -> None:
        """Set these GPUs' power limit (mW); block is accepted (calls always wait)."""
        self._command("set_power_limit", gpu_ids, power_limit_mw=power_limit_mw)

    def set_persistence_mode(self, gpu_ids: list[int], enabled: bool, block: bool = True) -> None:
        """Turn persistence mode on or off."""
        self._command("set_persistence_mode", gpu_ids, enabled=enabled)

    def set_gpu_locked_clocks(self, gpu_ids, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the graphics clock to [min, max] MHz."""
        self._command("set_gpu_locked_clocks", gpu_ids, min_clock_mhz=min_clock_mhz, max_clock_mhz=max_clock_mhz)

    def set_mem_locked_clocks(self, gpu_ids, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        """Lock the memory clock to [min, max] MHz."""
        self._command("set_mem_locked_clocks", gpu_ids, min_clock_mhz=min_clock_mhz, max_clock_mhz=max_clock_mhz)

    def reset_gpu_locked_clocks(self, gpu_ids, block: bool = True) -> None:
        """Unlock the graphics clock."""
        self._command("reset_gpu_locked_clocks", gpu_ids)

    def reset_mem_locked_clocks(self, gpu_ids, block: bool = True) -> None:
        """Unlock the memory clock."""
        self._command("reset_mem_locked_clocks", gpu_ids)

    def reset_locked_clocks(self, gpu_ids, block: bool = True) -> None:
        """Unlock both clocks."""
        self._command("reset_locked_clocks", gpu_ids)

    def get_cpu_energy(self, cpu_ids=None, cpu: bool = True, dram: bool = True) -> dict[int, CpuEnergyResult]:
        """Cumulative package and DRAM energy (µJ) of these CPU packages (None: all)."""
        params = {"cpu": "true" if cpu else "false", "dram": "true" if dram else "false"}
        if cpu_ids is not None:
            params["cpu_ids"] = ",".join(str(i) for i in cpu_ids)
        return {
            int(k): CpuEnergyResult(cpu_energy_uj=v.get("cpu_energy_uj"), dram_energy_uj=v.get("dram_energy_uj"))
            for k, v in self._get("/cpu/get_cumulative_energy", params).items()
        }

    def get_cpu_power(self, cpu_ids=None) -> CpuPowerSnapshot:
        """Package and DRAM power (mW) of these CPU packages (None: all), over the daemon's poll period."""
        params = {} if cpu_ids is None else {"cpu_ids": ",".join(str(i) for i in cpu_ids)}
        d = self._get("/cpu/get_power", params)
        return CpuPowerSnapshot(
            timestamp_ms=d["timestamp_ms"],
            power_mw={int(k): CpuDramPower(cpu_mw=v["cpu_mw"], dram_mw=v.get("dram_mw")) for k, v in d["power_mw"].items()},
        )

    def get_time(self) -> float:
        """The daemon's Unix time (s)."""
        return self._get("/time", {})["timestamp_ms"] / 1000.0

    @property
    def lease_id(self) -> str:
        """This process's lease (our extension; "" before the first command)."""
        return self._conn.lease_id()


def require_capabilities(
    client: ZeusdClient,
    *,
    read_gpu: bool = False,
    control_gpu: bool = False,
    read_cpu: bool = False,
    gpu_ids: list[int] | None = None,
    cpu_ids: list[int] | None = None,
) -> None:
    """Fail at once, with every reason, when the daemon cannot do what the caller needs.

    Raises:
        ZeusdAuthError: the token was refused (``client.auth_error``).
        ZeusdCapabilityError: an API group is not enabled, the token lacks a
            scope, or a GPU/CPU id is not served; the message lists each.
    """
    if client.auth_error:
        raise ZeusdAuthError(f"zeusd at {client.endpoint}: {client.auth_error}")
    wanted = [("gpu-read", read_gpu, client.can_read_gpu), ("gpu-control", control_gpu, client.can_control_gpu),
              ("cpu-read", read_cpu, client.can_read_cpu)]
    reasons = []
    for group, needed, granted in wanted:
        if not needed or granted:
            continue
        if group not in client.enabled_api_groups:
            reasons.append(f"the API group '{group}' is not enabled (zeusd serve --enable {group})")
        else:
            reasons.append(f"the token lacks the scope '{group}' (granted: {sorted(client.granted_scopes)})")
    for kind, asked, served in (("GPU", gpu_ids, client.gpu_ids), ("CPU", cpu_ids, client.cpu_ids)):
        missing = sorted(set(asked or ()) - set(served))
        if missing:
            reasons.append(f"{kind} ids {missing} are not served (served: {sorted(served)})")
    if reasons:
        raise ZeusdCapabilityError(f"zeusd at {client.endpoint}: " + "; ".join(reasons))


__all__ = [
    "ZeusdConfig",
    "ZeusdClient",
    "GpuInfo",
    "CpuInfo",
    "GpuPowerSnapshot",
    "CpuDramPower",
    "CpuPowerSnapshot",
    "CpuEnergyResult",
    "ZeusdError",
    "ZeusdConnectionError",
    "ZeusdAuthError",
    "ZeusdCapabilityError",
    "require_capabilities",
]
