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
from urllib.parse import urlencode

from zeuscpp._core import zeusd as _zeusd


@dataclass(frozen=True)
class ZeusdConfig:
    host_port: str | None = None
    socket_path: str | None = None
    token: str | None = None
    gpu_indices: list[int] | None = None
    cpu_indices: list[int] | None = None

    @classmethod
    def tcp(cls, host: str, port: int, *, token=None, gpu_indices=None, cpu_indices=None) -> "ZeusdConfig":
        return cls(host_port=f"{host}:{port}", token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def uds(cls, socket_path: str, *, token=None, gpu_indices=None, cpu_indices=None) -> "ZeusdConfig":
        return cls(socket_path=socket_path, token=token, gpu_indices=gpu_indices, cpu_indices=cpu_indices)

    @classmethod
    def from_env(cls) -> "ZeusdConfig | None":
        token = os.environ.get("ZEUSD_TOKEN")
        if (sock := os.environ.get("ZEUSD_SOCK_PATH")) is not None:
            return cls.uds(sock, token=token)
        if (host_port := os.environ.get("ZEUSD_HOST_PORT")) is not None:
            return cls(host_port=host_port, token=token)
        return None

    @property
    def endpoint(self) -> str:
        if self.socket_path is not None:
            return self.socket_path
        if self.host_port is not None:
            return self.host_port
        raise ValueError("ZeusdConfig has neither socket_path nor host_port set.")

    def _url(self) -> str:
        return f"unix:{self.socket_path}" if self.socket_path is not None else f"http://{self.host_port}"


@dataclass(frozen=True)
class GpuInfo:
    id: int
    name: str
    pci_address: str
    cumulative_energy_available: bool


@dataclass(frozen=True)
class CpuInfo:
    id: int
    dram_available: bool


class ZeusdClient:
    """Discovery, authentication state and typed calls for one zeusd."""

    def __init__(self, config: ZeusdConfig | None = None, *, persistent: bool = False) -> None:
        """Connects to zeusd (``config``, else the environment).

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
        self._conn = _zeusd.Connection(config._url(), config.endpoint, token or "", persistent)
        s = self._conn.status()
        self._gpus = [GpuInfo(**g) for g in s["gpus"]]
        self._cpus = [CpuInfo(**c) for c in s["cpus"]]
        self._groups = set(s["enabled_api_groups"])
        self.auth_required: bool = s["auth_required"]
        self.auth_error: str | None = s["auth_error"]
        self.granted_scopes = frozenset(s["scopes"])

    endpoint = property(lambda self: self._config.endpoint)
    gpus = property(lambda self: list(self._gpus))
    cpus = property(lambda self: list(self._cpus))
    gpu_ids = property(lambda self: [g.id for g in self._gpus])
    cpu_ids = property(lambda self: [c.id for c in self._cpus])

    def _can(self, group: str) -> bool:
        return group in self._groups and (not self.auth_required or group in self.granted_scopes)

    can_read_gpu = property(lambda self: self._can("gpu-read"))
    can_control_gpu = property(lambda self: self._can("gpu-control"))
    can_read_cpu = property(lambda self: self._can("cpu-read"))

    def _get(self, path: str, params: dict[str, str]) -> dict:
        return json.loads(self._conn.get(path + ("?" + urlencode(params) if params else "")))

    @staticmethod
    def _ids(ids) -> dict[str, str]:
        return {} if ids is None else {"gpu_ids": ",".join(str(i) for i in ids)}

    def _command(self, op: str, gpu_ids: list[int], **query) -> None:
        q = urlencode({k: (("true" if v else "false") if isinstance(v, bool) else str(v)) for k, v in query.items()})
        for gpu in gpu_ids:
            self._conn.gpu_command(op, gpu, q)

    def get_gpu_power(self, gpu_ids=None) -> dict[int, int]:
        return {int(k): v for k, v in self._get("/gpu/get_power", self._ids(gpu_ids))["power_mw"].items()}

    def get_gpu_energy(self, gpu_ids) -> dict[int, int]:
        return {int(k): v["energy_mj"] for k, v in self._get("/gpu/get_cumulative_energy", self._ids(gpu_ids)).items()}

    def get_power_limit(self, gpu_ids=None) -> dict[int, int]:
        return {int(k): v["power_limit_mw"] for k, v in self._get("/gpu/get_power_limit", self._ids(gpu_ids)).items()}

    def get_power_limit_constraints(self, gpu_ids=None) -> dict[int, tuple[int, int]]:
        d = self._get("/gpu/get_power_limit_constraints", self._ids(gpu_ids))
        return {int(k): (v["min_power_limit_mw"], v["max_power_limit_mw"]) for k, v in d.items()}

    def get_persistence_mode(self, gpu_ids=None) -> dict[int, bool]:
        return {int(k): v["enabled"] for k, v in self._get("/gpu/get_persistence_mode", self._ids(gpu_ids)).items()}

    def set_power_limit(self, gpu_ids: list[int], power_limit_mw: int, block: bool = True) -> None:
        self._command("set_power_limit", gpu_ids, power_limit_mw=power_limit_mw)

    def set_persistence_mode(self, gpu_ids: list[int], enabled: bool, block: bool = True) -> None:
        self._command("set_persistence_mode", gpu_ids, enabled=enabled)

    def set_gpu_locked_clocks(self, gpu_ids, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        self._command("set_gpu_locked_clocks", gpu_ids, min_clock_mhz=min_clock_mhz, max_clock_mhz=max_clock_mhz)

    def set_mem_locked_clocks(self, gpu_ids, min_clock_mhz: int, max_clock_mhz: int, block: bool = True) -> None:
        self._command("set_mem_locked_clocks", gpu_ids, min_clock_mhz=min_clock_mhz, max_clock_mhz=max_clock_mhz)

    def reset_gpu_locked_clocks(self, gpu_ids, block: bool = True) -> None:
        self._command("reset_gpu_locked_clocks", gpu_ids)

    def reset_mem_locked_clocks(self, gpu_ids, block: bool = True) -> None:
        self._command("reset_mem_locked_clocks", gpu_ids)

    def reset_locked_clocks(self, gpu_ids, block: bool = True) -> None:
        self._command("reset_locked_clocks", gpu_ids)

    def get_cpu_energy(self, cpu_ids=None, cpu: bool = True, dram: bool = True) -> dict[int, dict]:
        params = {"cpu": "true" if cpu else "false", "dram": "true" if dram else "false"}
        if cpu_ids is not None:
            params["cpu_ids"] = ",".join(str(i) for i in cpu_ids)
        return {int(k): v for k, v in self._get("/cpu/get_cumulative_energy", params).items()}

    def get_time(self) -> float:
        return self._get("/time", {})["timestamp_ms"] / 1000.0

    @property
    def lease_id(self) -> str:
        """This process's lease (our extension; "" before the first command)."""
        return self._conn.lease_id()


__all__ = ["ZeusdConfig", "ZeusdClient", "GpuInfo", "CpuInfo"]
