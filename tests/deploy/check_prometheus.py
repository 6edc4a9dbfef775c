#!/usr/bin/env python3
"""The Prometheus scrape example for nodes that run zeusd's systemd unit
(deploy/prometheus, docs/zeusd.md) (ctest: deploy_prometheus):

1. `promtool check config` on the example as shipped: the config, its
   relabeling and its file_sd file; a warning (a file_sd file that is not
   there) fails too;
2. the example's two jobs in a real Prometheus (Debian's, on loopback, in a
   temporary folder), with the example's nodes gpu-node-01 and gpu-node-02
   replaced by a real zeusd's metrics listener (simulated GPUs, loopback)
   reached as 127.0.0.1 and as localhost, and a 1 s interval: every such
   target of both jobs is up, its node and instance labels are the host
   without the port, the file's labels are kept, gpu-node-03 (no such host
   here) is labeled alike, and zeusd's GPU series come back per node.

  check_prometheus.py EXAMPLE_DIR ZEUSD
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_json(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as r:
        return json.load(r)


def wait_for(what, predicate, limit=60):
    t0 = time.monotonic()
    while True:
        try:
            value = predicate()
            if value:
                return value
        except OSError:
            pass
        if time.monotonic() - t0 > limit:
            raise TimeoutError(what)
        time.sleep(0.25)


def main():
    example, zeusd = sys.argv[1:3]
    config = os.path.join(example, "zeusd-scrape.yml")
    r = subprocess.run(["promtool", "check", "config", config], capture_output=True, text=True)
    print((r.stdout + r.stderr).strip())
    if r.returncode != 0 or "WARNING" in r.stdout + r.stderr:
        fail("promtool check config %s: exit status %d or a warning (above)" % (config, r.returncode))
        return 1

    work = tempfile.mkdtemp(prefix="deploy_prometheus.")
    procs = []
    try:
        env = dict(os.environ, ZEUS_SIM_GPUS="2", ZEUS_LOG_LEVEL="info")
        log = open(os.path.join(work, "zeusd.log"), "w+")
        procs.append(subprocess.Popen(
            [zeusd, "serve", "--mode", "uds", "--socket-path", os.path.join(work, "zeusd.sock"),
             "--gpu-backend", "sim", "--enable", "gpu-read", "--pod-resources-socket", "",
             "--metrics-address", "127.0.0.1:0"], stdout=log, stderr=subprocess.STDOUT, env=env))

        def metrics_port():
            log.seek(0)
            m = re.search(r"Prometheus metrics on http://127\.0\.0\.1:(\d+)/metrics", log.read())
            if procs[0].poll() is not None:
                log.seek(0)
                raise RuntimeError("zeusd exited: " + log.read())
            return m and int(m.group(1))

        port = wait_for("zeusd's metrics listener", metrics_port, 30)

        # The example, its nodes pointed at this zeusd, scraped every second.
        for name in ("zeusd-scrape.yml", "zeusd-nodes.yml"):
            text = open(os.path.join(example, name)).read()
            text = text.replace("gpu-node-01:9400", "127.0.0.1:%d" % port)
            text = text.replace("gpu-node-02:9400", "localhost:%d" % port)
            text = text.replace("scrape_interval: 15s", "scrape_interval: 1s")
            text = text.replace("refresh_interval: 5m", "refresh_interval: 1s")
            open(os.path.join(work, name), "w").write(text)
        web = free_port()
        procs.append(subprocess.Popen(
            ["prometheus", "--config.file=" + os.path.join(work, "zeusd-scrape.yml"),
             "--storage.tsdb.path=" + os.path.join(work, "data"),
             "--web.listen-address=127.0.0.1:%d" % web, "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        api = "http://127.0.0.1:%d/api/v1/" % web

        def targets_up():
            targets = get_json(api + "targets")["data"]["activeTargets"]
            local = [t for t in targets if "gpu-node-03" not in t["discoveredLabels"]["__address__"]]
            return targets if len(local) == 4 and all(t["health"] == "up" for t in local) else None

        try:
            targets = wait_for("every local target up", targets_up)
        except TimeoutError:
            fail("not every target came up: %s" % json.dumps(get_json(api + "targets")["data"], indent=1))
            return 1
        seen = set()
        for t in targets:
            address, labels, job = t["discoveredLabels"]["__address__"], t["labels"], t["labels"]["job"]
            host = address.rsplit(":", 1)[0]
            seen.add((job, host))
            if labels.get("node") != host or labels.get("instance") != host:
                fail("%s target %s: node=%r instance=%r, want both %r" % (
                    job, address, labels.get("node"), labels.get("instance"), host))
            want = {"zeusd": {"cluster": "training"},
                    "zeusd-file-sd": {"gpu-node-03": {"cluster": "inference", "rack": "r2"}}.get(
                        host, {"cluster": "training", "rack": "r1"})}[job]
            for k, v in want.items():
                if labels.get(k) != v:
                    fail("%s target %s: %s=%r, want %r" % (job, address, k, labels.get(k), v))
        for job in ("zeusd", "zeusd-file-sd"):
            for host in ("127.0.0.1", "localhost", "gpu-node-03"):
                if (job, host) not in seen:
                    fail("job %s has no target for %s: %s" % (job, host, sorted(seen)))

        def series():
            q = urllib.parse.quote("count by (job, node) (zeus_gpu_power_watts)")
            result = get_json(api + "query?query=" + q)["data"]["result"]
            got = {(s["metric"]["job"], s["metric"]["node"]): s["value"][1] for s in result}
            return got if len(got) == 4 else None

        try:
            got = wait_for("zeus_gpu_power_watts per node", series, 30)
            print("zeus_gpu_power_watts series per (job, node): %s" % sorted(got.items()))
            for key, count in got.items():
                if count != "2":
                    fail("%s: %s GPU series, want 2 (ZEUS_SIM_GPUS=2)" % (key, count))
        except TimeoutError:
            fail("zeus_gpu_power_watts did not come back for every (job, node)")
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        shutil.rmtree(work)
    if failures:
        print("%d failures" % len(failures))
        return 1
    print("deploy/prometheus: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
