"""Wire compatibility of our zeusd with the Python Zeus client.

Usage: wire_check.py SOCKET_PATH TOKEN GPU_COUNT CPU_COUNT

With ZEUS_UPSTREAM_DIR pointing at a checkout of the Python Zeus, this drives
its own `ZeusdClient` and `PowerStreamingClient` (zeus/utils/zeusd.py,
zeus/monitor/power_streaming.py), unchanged, against the daemon. Without it,
`StdlibClient` below issues the same requests (same paths, query strings,
headers and response parsing) with the standard library only. The same
sequence of calls and checks runs either way. Prints "OK <checks>".
"""

import http.client
import json
import os
import socket
import sys
import threading
import time
import types
import urllib.parse


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=None):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.unix_path)
        self.sock = s


class StdlibError(Exception):
    pass


class StdlibClient:
    """The requests ZeusdClient makes, with http.client over the Unix socket."""

    def __init__(self, sock, token):
        self.sock, self.token = sock, token
        self.conn = UnixConnection(sock)
        d = self._get("/discover", {})
        self.gpu_ids = [g["id"] for g in d["gpus"]]
        self.cpu_ids = [c["id"] for c in d["cpus"]]
        self.groups = set(d["enabled_api_groups"])
        self.auth_required = d["auth_required"]
        for g in d["gpus"]:
            for k in ("id", "name", "pci_address", "cumulative_energy_available"):
                assert k in g, k
        self.granted_scopes = frozenset()
        if self.auth_required:
            w = self._get("/auth/whoami", {})
            self.granted_scopes = frozenset(w.get("scopes", []))

    def _request(self, method, path, params):
        target = path + ("?" + urllib.parse.urlencode(params) if params else "")
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self.conn.request(method, target, headers=headers)
        resp = self.conn.getresponse()
        body = resp.read()
        if resp.status != 200:
            raise StdlibError(f"Failed {path}: {body!r}")
        return json.loads(body) if body else None

    def _get(self, path, params):
        return self._request("GET", path, params)

    def _ids(self, ids):
        return ",".join(str(i) for i in ids)

    @property
    def can_control_gpu(self):
        return "gpu-control" in self.groups and (not self.auth_required or "gpu-control" in self.granted_scopes)

    def set_power_limit(self, gpu_ids, power_limit_mw, block=True):
        self._request("POST", "/gpu/set_power_limit", {"gpu_ids": self._ids(gpu_ids), "power_limit_mw": str(power_limit_mw), "block": "true" if block else "false"})

    def set_persistence_mode(self, gpu_ids, enabled, block=True):
        self._request("POST", "/gpu/set_persistence_mode", {"gpu_ids": self._ids(gpu_ids), "enabled": "true" if enabled else "false", "block": "true" if block else "false"})

    def set_gpu_locked_clocks(self, gpu_ids, min_clock_mhz, max_clock_mhz, block=True):
        self._request("POST", "/gpu/set_gpu_locked_clocks", {"gpu_ids": self._ids(gpu_ids), "min_clock_mhz": str(min_clock_mhz), "max_clock_mhz": str(max_clock_mhz), "block": "true" if block else "false"})

    def set_mem_locked_clocks(self, gpu_ids, min_clock_mhz, max_clock_mhz, block=True):
        self._request("POST", "/gpu/set_mem_locked_clocks", {"gpu_ids": self._ids(gpu_ids), "min_clock_mhz": str(min_clock_mhz), "max_clock_mhz": str(max_clock_mhz), "block": "true" if block else "false"})

    def reset_gpu_locked_clocks(self, gpu_ids, block=True):
        self._request("POST", "/gpu/reset_gpu_locked_clocks", {"gpu_ids": self._ids(gpu_ids), "block": "true" if block else "false"})

    def reset_mem_locked_clocks(self, gpu_ids, block=True):
        self._request("POST", "/gpu/reset_mem_locked_clocks", {"gpu_ids": self._ids(gpu_ids), "block": "true" if block else "false"})

    def reset_locked_clocks(self, gpu_ids, block=True):
        self._request("POST", "/gpu/reset_locked_clocks", {"gpu_ids": self._ids(gpu_ids), "block": "true" if block else "false"})

    def get_power_limit(self, gpu_ids=None):
        d = self._get("/gpu/get_power_limit", {} if gpu_ids is None else {"gpu_ids": self._ids(gpu_ids)})
        return {int(k): v["power_limit_mw"] for k, v in d.items()}

    def get_power_limit_constraints(self, gpu_ids=None):
        d = self._get("/gpu/get_power_limit_constraints", {} if gpu_ids is None else {"gpu_ids": self._ids(gpu_ids)})
        return {int(k): (v["min_power_limit_mw"], v["max_power_limit_mw"]) for k, v in d.items()}

    def get_persistence_mode(self, gpu_ids=None):
        d = self._get("/gpu/get_persistence_mode", {} if gpu_ids is None else {"gpu_ids": self._ids(gpu_ids)})
        return {int(k): v["enabled"] for k, v in d.items()}

    def get_gpu_energy(self, gpu_ids):
        d = self._get("/gpu/get_cumulative_energy", {"gpu_ids": self._ids(gpu_ids)})
        return {int(k): v["energy_mj"] for k, v in d.items()}

    def get_gpu_power(self, gpu_ids=None):
        d = self._get("/gpu/get_power", {} if gpu_ids is None else {"gpu_ids": self._ids(gpu_ids)})
        return types.SimpleNamespace(timestamp_ms=d["timestamp_ms"], power_mw={int(k): v for k, v in d["power_mw"].items()})

    def get_cpu_energy(self, cpu_ids=None, cpu=True, dram=True):
        p = {"cpu": "true" if cpu else "false", "dram": "true" if dram else "false"}
        if cpu_ids is not None:
            p["cpu_ids"] = self._ids(cpu_ids)
        d = self._get("/cpu/get_cumulative_energy", p)
        return {int(k): types.SimpleNamespace(cpu_energy_uj=v.get("cpu_energy_uj"), dram_energy_uj=v.get("dram_energy_uj")) for k, v in d.items()}

    def get_cpu_power(self, cpu_ids=None):
        d = self._get("/cpu/get_power", {} if cpu_ids is None else {"cpu_ids": self._ids(cpu_ids)})
        return types.SimpleNamespace(timestamp_ms=d["timestamp_ms"], power_mw={int(k): types.SimpleNamespace(cpu_mw=v["cpu_mw"], dram_mw=v.get("dram_mw")) for k, v in d["power_mw"].items()})

    def get_time(self):
        return self._get("/time", {})["timestamp_ms"] / 1000.0


def stdlib_stream(sock, token, path, want):
    """Reads SSE events from `path` until `want` distinct ids were seen."""
    conn = UnixConnection(sock, timeout=10)
    conn.request("GET", path, headers={"Authorization": f"Bearer {token}"} if token else {})
    resp = conn.getresponse()
    assert resp.status == 200, resp.status
    assert resp.getheader("Content-Type").startswith("text/event-stream")
    seen, buf = {}, b""
    while len(seen) < want:
        line = resp.fp.readline()
        assert line, "stream ended"
        if line.startswith(b"data: "):
            ev = json.loads(line[6:])
            seen[ev.get("gpu_id", ev.get("cpu_id"))] = ev
    conn.close()
    return seen


def main():
    sock, token, n_gpu, n_cpu = sys.argv[1], sys.argv[2] or None, int(sys.argv[3]), int(sys.argv[4])
    upstream = os.environ.get("ZEUS_UPSTREAM_DIR")
    checks = 0

    if upstream:
        sys.path.insert(0, upstream)
        # Load the client modules without the heavy package __init__s of
        # zeus.monitor and zeus.device (numpy, pynvml, amdsmi...).
        for pkg in ("zeus.monitor", "zeus.device"):
            m = types.ModuleType(pkg)
            m.__path__ = [os.path.join(upstream, *pkg.split("."))]
            sys.modules[pkg] = m
        from zeus.utils.zeusd import ZeusdClient, ZeusdConfig, require_capabilities
        from zeus.device.exception import ZeusdError
        from zeus.monitor.power_streaming import PowerStreamingClient

        client = ZeusdClient(ZeusdConfig.uds(sock, token=token))
        assert client.auth_error is None, client.auth_error
        require_capabilities(client, read_gpu=True, control_gpu=True, read_cpu=True, gpu_ids=list(range(n_gpu)), cpu_ids=list(range(n_cpu)))
        checks += 1
        errors = (ZeusdError,)
    else:
        client = StdlibClient(sock, token)
        errors = (StdlibError,)

    assert client.gpu_ids == list(range(n_gpu)), client.gpu_ids
    assert client.cpu_ids == list(range(n_cpu)), client.cpu_ids
    assert client.can_control_gpu
    checks += 3

    client.set_power_limit([0, 1], 150000)
    assert client.get_power_limit([0, 1]) == {0: 150000, 1: 150000}
    client.set_power_limit([1], 160000, block=False)
    for _ in range(200):
        if client.get_power_limit([1]) == {1: 160000}:
            break
        time.sleep(0.01)
    assert client.get_power_limit([1]) == {1: 160000}
    cons = client.get_power_limit_constraints()
    assert cons[0] == (100000, 300000), cons
    client.set_persistence_mode([0], True)
    assert client.get_persistence_mode([0]) == {0: True}
    client.set_gpu_locked_clocks([0], 800, 1200)
    client.set_mem_locked_clocks([0], 1215, 1215)
    client.reset_gpu_locked_clocks([0])
    client.reset_mem_locked_clocks([0])
    client.reset_locked_clocks([0, 1])
    checks += 7
    try:
        client.set_power_limit([0], 1)  # below the minimum
        raise AssertionError("a limit below the minimum was accepted")
    except errors:
        pass
    checks += 1

    snap = client.get_gpu_power()
    assert set(snap.power_mw) == set(range(n_gpu)) and all(v > 0 for v in snap.power_mw.values()), snap
    e1 = client.get_gpu_energy([0])[0]
    time.sleep(0.05)
    assert client.get_gpu_energy([0])[0] > e1
    cpu = client.get_cpu_energy()
    assert cpu[0].cpu_energy_uj is not None and cpu[0].dram_energy_uj is not None
    cpow = client.get_cpu_power([0])
    assert cpow.power_mw[0].cpu_mw > 0, cpow
    t = client.get_time()
    assert abs(t - time.time()) < 5
    checks += 5

    if upstream:
        stream = PowerStreamingClient([ZeusdConfig.uds(sock, token=token)])
        deadline = time.time() + 10
        ok = False
        while time.time() < deadline:
            r = stream.get_power().get(sock)
            if r and len(r.gpu_power_w) == n_gpu and len(r.cpu_power_w) == n_cpu:
                assert all(w > 50 for w in r.gpu_power_w.values()), r
                assert r.cpu_power_w[0].cpu_w > 0, r
                ok = True
                break
            time.sleep(0.05)
        stream.stop()
        assert ok, "PowerStreamingClient saw no readings"
    else:
        gpus = stdlib_stream(sock, token, "/gpu/stream_power", n_gpu)
        assert all(e["power_mw"] > 50000 for e in gpus.values()), gpus
        cpus = stdlib_stream(sock, token, "/cpu/stream_power?cpu_ids=0", 1)
        assert "dram_mw" in cpus[0] and cpus[0]["cpu_mw"] > 0, cpus
    checks += 1
    print("OK", checks, "upstream" if upstream else "stdlib", flush=True)


if __name__ == "__main__":
    main()
