"""Live GPU and CPU power of many nodes from their zeusd (upstream ``zeus.monitor.power_streaming``).

:class:`PowerStreamingClient` holds one Server-Sent Events stream per device
kind per daemon (``/gpu/stream_power``, ``/cpu/stream_power``) in a
background thread and keeps the latest reading of every device::

    client = PowerStreamingClient([ZeusdConfig.tcp("node1", 4938), ZeusdConfig.uds("/run/zeusd.sock")])
    client.get_power()          # {"node1:4938": PowerReadings(...), ...}
    for readings in client:     # a snapshot after every update, until stop()
        ...
    client.stop()

Daemon timestamps are moved onto this machine's clock by the offset measured
when connecting (median of five ``/time`` round trips).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import socket
import statistics
import threading
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from zeuscpp.utils.zeusd import ZeusdCapabilityError, ZeusdClient, ZeusdConfig

__all__ = ["PowerStreamingClient", "PowerReadings", "CpuPowerReading"]

logger = logging.getLogger(__name__)


@dataclass
class CpuPowerReading:
    """One CPU package's power (W) and its DRAM's (None without a DRAM zone)."""

    cpu_w: float = 0.0
    dram_w: float | None = None


@dataclass
class PowerReadings:
    """The latest readings of one daemon.

    Attributes:
        timestamp_s: The newest reading's time (this machine's Unix time, s).
        gpu_power_w: W per GPU id.
        cpu_power_w: Per CPU id.
    """

    timestamp_s: float = 0.0
    gpu_power_w: dict[int, float] = field(default_factory=dict)
    cpu_power_w: dict[int, CpuPowerReading] = field(default_factory=dict)


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix-domain socket."""

    def __init__(self, path: str) -> None:
        super().__init__("localhost")
        self._path = path

    def connect(self) -> None:
        """Connect to the socket file."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class _Refused(Exception):
    """The daemon answered the stream request with an error status."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"HTTP {status}: {body}")
        self.status = status


class PowerStreamingClient:
    """Streams the power of the GPUs and CPUs of several zeusd daemons.

    Per daemon, ``ZeusdConfig.gpu_indices``/``cpu_indices`` choose what is
    streamed: None streams every device of that kind the daemon serves
    (skipped quietly when it serves none or the token lacks the scope); ``[]``
    streams none; a list streams those, which must exist and be readable.
    A stream that breaks is reopened after ``reconnect_delay_s``; one refused
    with 401 or 403 is given up (logged).

    Args:
        servers: The daemons, each once.
        reconnect_delay_s: Seconds before reopening a broken stream.

    Raises:
        ValueError: an endpoint given twice, or asked-for ids the daemon lacks.
        ZeusdCapabilityError: asked-for devices whose scope the token lacks.
        ZeusdConnectionError: a daemon that cannot be reached.
    """

    def __init__(self, servers: Sequence[ZeusdConfig], reconnect_delay_s: float = 1.0) -> None:
        """Connect to every daemon and start the streams (see the class docstring)."""
        self._servers = list(servers)
        endpoints = [s.endpoint for s in self._servers]
        repeated = sorted({e for e in endpoints if endpoints.count(e) > 1})
        if repeated:
            raise ValueError(f"each zeusd endpoint may be given once; repeated: {repeated}")
        self._reconnect_delay = reconnect_delay_s
        self._condition = threading.Condition()
        # Counts the readings stored: an iterator yields when it moved past the
        # count it last saw, so readings that arrive while no iterator waits
        # (before the first, or while the caller works) are never missed.
        self._updates = 0
        self._readings: dict[str, PowerReadings] = {}
        self._offsets: dict[str, float] = {}
        self._clients: dict[str, ZeusdClient] = {}
        self._stop = threading.Event()
        self._open: set[http.client.HTTPConnection] = set()
        self._threads: list[threading.Thread] = []
        plans = []
        for server in self._servers:
            client = ZeusdClient(server)
            self._clients[server.endpoint] = client
            gpu = _wanted(server.gpu_indices, client.gpu_ids, client.can_read_gpu, "gpu-read", "GPU", server.endpoint)
            cpu = _wanted(server.cpu_indices, client.cpu_ids, client.can_read_cpu, "cpu-read", "CPU", server.endpoint)
            self._offsets[server.endpoint] = _clock_offset(client)
            plans.append((server, gpu, cpu))
        for server, gpu, cpu in plans:
            if gpu:
                self._start(server, "/gpu/stream_power", "gpu_ids", server.gpu_indices, self._gpu_event)
            if cpu:
                self._start(server, "/cpu/stream_power", "cpu_ids", server.cpu_indices, self._cpu_event)
        if not self._threads:
            logger.warning("no power stream was started: the daemons serve none of the devices asked for "
                           "(or the tokens lack gpu-read/cpu-read)")

    def stop(self) -> None:
        """Close every stream and end the iterators (waits up to 5 s per thread)."""
        self._stop.set()
        with self._condition:
            self._condition.notify_all()
            connections = list(self._open)
        for conn in connections:
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self._threads:
            thread.join(timeout=5.0)
        self._threads.clear()

    def get_power(self) -> dict[str, PowerReadings]:
        """The latest readings per endpoint (a copy)."""
        with self._condition:
            return {
                endpoint: PowerReadings(
                    timestamp_s=r.timestamp_s,
                    gpu_power_w=dict(r.gpu_power_w),
                    cpu_power_w={i: CpuPowerReading(c.cpu_w, c.dram_w) for i, c in r.cpu_power_w.items()},
                )
                for endpoint, r in self._readings.items()
            }

    def _next_update(self, seen: int) -> int:
        """The count of readings stored, once it differs from `seen` (or after 1 s, or at stop())."""
        with self._condition:
            self._condition.wait_for(lambda: self._updates != seen or self._stop.is_set(), timeout=1.0)
            return self._updates

    def __iter__(self) -> Iterator[dict[str, PowerReadings]]:
        """A snapshot (as get_power) after each update, until stop().

        Readings that arrive while the caller is busy are folded into the next
        snapshot; readings stored before iterating began give a first
        snapshot at once.
        """
        seen = 0
        while not self._stop.is_set():
            now = self._next_update(seen)
            if self._stop.is_set():
                return
            if now != seen:
                seen = now
                yield self.get_power()

    async def __aiter__(self) -> AsyncIterator[dict[str, PowerReadings]]:
        """As ``__iter__``, waiting in an executor thread so the event loop keeps running."""
        loop = asyncio.get_running_loop()
        seen = 0
        while not self._stop.is_set():
            now = await loop.run_in_executor(None, self._next_update, seen)
            if self._stop.is_set():
                return
            if now != seen:
                seen = now
                yield self.get_power()

    def _start(self, server: ZeusdConfig, path: str, key: str, ids: list[int] | None,
               on_data: Callable[[dict[str, Any], str], None]) -> None:
        target = path if ids is None else f"{path}?{key}={','.join(str(i) for i in ids)}"
        thread = threading.Thread(target=self._run, args=(server, target, on_data),
                                  name=f"zeuscpp-power-stream-{server.endpoint}{path}", daemon=True)
        thread.start()
        self._threads.append(thread)

    def _connection(self, server: ZeusdConfig) -> http.client.HTTPConnection:
        if server.socket_path is not None:
            return _UnixHTTPConnection(server.socket_path)
        assert server.host_port is not None
        return http.client.HTTPConnection(server.host_port)

    def _run(self, server: ZeusdConfig, target: str, on_data: Callable[[dict[str, Any], str], None]) -> None:
        endpoint = server.endpoint
        while not self._stop.is_set():
            try:
                self._stream(server, target, on_data)
            except _Refused as e:
                if e.status in (401, 403):
                    logger.error("zeusd at %s refused %s (%s); not retrying", endpoint, target, e)
                    return
                logger.warning("zeusd at %s refused %s (%s); retrying in %.1f s", endpoint, target, e,
                               self._reconnect_delay)
            except (OSError, http.client.HTTPException) as e:
                if self._stop.is_set():
                    return
                logger.warning("power stream %s from %s broke (%s); reconnecting in %.1f s", target, endpoint, e,
                               self._reconnect_delay)
            self._stop.wait(self._reconnect_delay)

    def _stream(self, server: ZeusdConfig, target: str, on_data: Callable[[dict[str, Any], str], None]) -> None:
        conn = self._connection(server)
        with self._condition:
            if self._stop.is_set():
                return
            self._open.add(conn)
        try:
            headers = {"Accept": "text/event-stream"}
            if server.token:
                headers["Authorization"] = f"Bearer {server.token}"
            conn.request("GET", target, headers=headers)
            response = conn.getresponse()
            if response.status != 200:
                raise _Refused(response.status, response.read(2000).decode(errors="replace"))
            data: list[str] = []
            while not self._stop.is_set():
                raw = response.readline()
                if not raw:
                    return  # the daemon ended the stream: reconnect
                line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
                if line:
                    if line.startswith("data:"):
                        data.append(line[5:].removeprefix(" "))
                    continue
                if data:  # a blank line ends an event
                    self._event("\n".join(data), server.endpoint, on_data)
                    data = []
        finally:
            with self._condition:
                self._open.discard(conn)
            conn.close()

    def _event(self, text: str, endpoint: str, on_data: Callable[[dict[str, Any], str], None]) -> None:
        try:
            on_data(json.loads(text), endpoint)
        except (ValueError, KeyError, TypeError):
            logger.warning("malformed power event from %s: %.100s", endpoint, text)

    def _store(self, endpoint: str, daemon_ms: float, update: Callable[[PowerReadings], None]) -> None:
        stamp = float(daemon_ms) / 1000.0 + self._offsets[endpoint]
        with self._condition:
            readings = self._readings.setdefault(endpoint, PowerReadings(timestamp_s=stamp))
            readings.timestamp_s = max(readings.timestamp_s, stamp)
            update(readings)
            self._updates += 1
            self._condition.notify_all()

    def _gpu_event(self, data: dict[str, Any], endpoint: str) -> None:
        gpu, watts = int(data["gpu_id"]), float(data["power_mw"]) / 1000.0
        self._store(endpoint, data["timestamp_ms"], lambda r: r.gpu_power_w.__setitem__(gpu, watts))

    def _cpu_event(self, data: dict[str, Any], endpoint: str) -> None:
        dram = data.get("dram_mw")
        reading = CpuPowerReading(float(data["cpu_mw"]) / 1000.0, None if dram is None else float(dram) / 1000.0)
        cpu = int(data["cpu_id"])
        self._store(endpoint, data["timestamp_ms"], lambda r: r.cpu_power_w.__setitem__(cpu, reading))


def _wanted(asked: list[int] | None, served: list[int], readable: bool, scope: str, kind: str, endpoint: str) -> bool:
    """Whether to stream one device kind of one daemon (see PowerStreamingClient)."""
    if asked is not None:
        if not asked:
            return False
        missing = sorted(set(asked) - set(served))
        if missing:
            raise ValueError(f"{kind} ids {missing} were asked of zeusd at {endpoint}, which serves {sorted(served)}")
        if not readable:
            raise ZeusdCapabilityError(
                f"zeusd at {endpoint} does not let this client read {kind}s (scope or API group '{scope}'), "
                f"but {kind.lower()}_indices={asked} were asked for"
            )
        return True
    if not served:
        logger.info("zeusd at %s serves no %ss: not streaming them", endpoint, kind)
        return False
    if not readable:
        logger.info("zeusd at %s does not grant '%s': not streaming %ss", endpoint, scope, kind)
        return False
    return True


def _clock_offset(client: ZeusdClient, samples: int = 5) -> float:
    """Seconds to add to the daemon's time to get this machine's (median over round trips)."""
    offsets = []
    for _ in range(samples):
        before = time.time()
        daemon = client.get_time()
        after = time.time()
        offsets.append((before + after) / 2 - daemon)
    return statistics.median(offsets)
