#!/usr/bin/env python3
"""Energy per Slurm job on a real single-node Slurm cluster (issue 36).

Starts, in a private temporary directory and on loopback only: munged,
zeusd (over a fake powercap tree whose package counter a thread advances at
a constant power, and the fake NVML's two GPUs, driven by a script file),
slurmctld and slurmd (Debian's slurm-wlm, generated slurm.conf,
proctrack/linuxproc, task/none, the two GPUs as generic resources, GPU 0 in
shards) with spank_zeus.so in plugstack.conf; runs jobs with sbatch/srun and
checks the step records, the jobs' AdminComment, `zeus slurm report` and
zeusd's ledger.
Everything it started is stopped on every exit path.

Exit status: 0 all cases passed, 1 a case failed, 77 skipped (not root, or
Slurm/munge missing or unable to start: the reason is printed).

  slurm_cluster_test.py --zeusd build/bin/zeusd --zeus build/bin/zeus \
      --plugin build/lib/slurm/spank_zeus.so \
      --fake-nvml build/tests/fakes/nvml/libnvidia-ml.so.1 [--cases NAME,...]
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
POWER_W = 40.0  # the fake package's constant power
IDLE_W = 10.0  # zeusd's configured idle power of that package
GPU_IDLE_W = 60.0  # the fake GPUs' power with nothing running, and zeusd's idle power for them
GPU_BUSY_W = 300.0  # their power at 100 % SM (fake_nvml_control.h, $ZEUS_FAKE_NVML_SCRIPT)


class Skip(Exception):
    pass


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def zeusd_call(sock, method, target):
    conn = UnixHTTPConnection(sock)
    try:
        conn.request(method, target)
        r = conn.getresponse()
        body = r.read().decode()
        return r.status, (json.loads(body) if body else None)
    finally:
        conn.close()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(what, predicate, timeout, interval=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class FakePowercap:
    """<root>/intel-rapl/intel-rapl:0 (package-0), advanced at POWER_W by a thread."""

    RANGE_UJ = 262143328850

    def __init__(self, root):
        self.root = root
        zone = os.path.join(root, "intel-rapl", "intel-rapl:0")
        os.makedirs(zone)
        os.symlink(os.path.join("intel-rapl", "intel-rapl:0"), os.path.join(root, "intel-rapl:0"))
        for name, text in (("name", "package-0"), ("max_energy_range_uj", str(self.RANGE_UJ)),
                           ("enabled", "1"), ("energy_uj", "1000000000")):
            with open(os.path.join(zone, name), "w") as f:
                f.write(text + "\n")
        self.path = os.path.join(zone, "energy_uj")
        self.value = 1000000000
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        fd = os.open(self.path, os.O_WRONLY)
        last = time.monotonic()
        try:
            while not self.stop.wait(0.02):
                now = time.monotonic()
                self.value = (self.value + int(POWER_W * (now - last) * 1e6)) % (self.RANGE_UJ + 1)
                last = now
                text = f"{self.value}\n".encode()
                # In place, as the kernel's file reads: never empty.
                os.pwrite(fd, text, 0)
                os.ftruncate(fd, len(text))
        finally:
            os.close(fd)

    def close(self):
        self.stop.set()
        self.thread.join()


class Cluster:
    def __init__(self, args):
        self.args = args
        self.procs = {}
        self.tmp = tempfile.mkdtemp(prefix="zeus-slurm-")
        os.chmod(self.tmp, 0o755)  # nobody reaches zeusd's socket in here
        self.logs = os.path.join(self.tmp, "log")
        os.makedirs(self.logs)
        self.records = os.path.join(self.tmp, "records")
        self.sock = os.path.join(self.tmp, "zeusd.sock")
        self.conf = os.path.join(self.tmp, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.powercap = None
        self.metrics_port = free_port()
        self.nvml_script = os.path.join(self.tmp, "nvml-script")
        self.script_gpus({})

    def script_gpus(self, processes):
        """What the fake NVML in zeusd reports: {pid: SM %} on GPU 0, both GPUs' power."""
        lines = [f"power {i} {GPU_IDLE_W} {GPU_BUSY_W}" for i in range(2)]
        lines += [f"process 0 {pid} {sm}" for pid, sm in processes.items()]
        tmp = self.nvml_script + ".tmp"
        with open(tmp, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, self.nvml_script)  # the fake never reads half a file

    # ---- processes ------------------------------------------------------
    def start(self, name, argv, env=None):
        out = open(os.path.join(self.logs, name + ".out"), "ab")
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env or self.env,
                             cwd=self.tmp, start_new_session=True)
        out.close()
        self.procs[name] = p
        return p

    def stop(self, name, sig=signal.SIGTERM, timeout=10):
        p = self.procs.pop(name, None)
        if p is None or p.poll() is not None:
            return
        p.send_signal(sig)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()

    def log_tail(self, name, lines=15):
        try:
            with open(os.path.join(self.logs, name)) as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    def run(self, argv, check=True, timeout=60, **kw):
        r = subprocess.run(argv, env=self.env, cwd=self.tmp, capture_output=True, text=True,
                           timeout=timeout, **kw)
        if check and r.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} exited {r.returncode}: {r.stdout}{r.stderr}")
        return r

    # ---- zeusd ----------------------------------------------------------
    def start_zeusd(self):
        env = dict(self.env, ZEUS_POWERCAP_ROOT=os.path.join(self.tmp, "powercap"),
                   ZEUS_NVML_LIBRARY=self.args.fake_nvml, ZEUS_FAKE_NVML_SCRIPT=self.nvml_script)
        self.start("zeusd", [self.args.zeusd, "serve", "--mode", "uds", "--socket-path", self.sock,
                             "--gpu-backend", "nvml", "--enable", "gpu-read,cpu-read",
                             "--attribution-interval", "0.2", "--cpu-idle-power", f"0={IDLE_W}",
                             "--gpu-idle-power", f"0={GPU_IDLE_W},1={GPU_IDLE_W}",
                             "--attribution-state", os.path.join(self.tmp, "attribution.json"),
                             "--metrics-address", f"127.0.0.1:{self.metrics_port}"], env=env)

        def up():
            if self.procs["zeusd"].poll() is not None:
                raise AssertionError("zeusd exited: " + self.log_tail("zeusd.out"))
            try:
                return zeusd_call(self.sock, "GET", "/discover")[0] == 200
            except OSError:
                return False

        wait_until("zeusd's socket", up, 20)

    # ---- Slurm ----------------------------------------------------------
    def write_configs(self):
        for d in ("state", "spool"):
            os.makedirs(os.path.join(self.tmp, d))
        key = os.path.join(self.tmp, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        t = self.tmp
        with open(self.conf, "w") as f:
            f.write(f"""# Generated by {os.path.basename(__file__)}: one node on loopback.
ClusterName=zeustest
SlurmctldHost=localhost
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={t}/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={t}/state
SlurmdSpoolDir={t}/spool
SlurmctldPidFile={t}/slurmctld.pid
SlurmdPidFile={t}/slurmd.pid
SlurmctldLogFile={t}/log/slurmctld.log
SlurmdLogFile={t}/log/slurmd.log
SlurmdDebug=verbose
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
MinJobAge=3600
KillWait=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
PlugStackConfig={t}/plugstack.conf
GresTypes=gpu,shard
NodeName=localhost CPUs=2 Gres=gpu:2,shard:4 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        # Two GPUs as generic resources without /dev/nvidia*: gres/gpu takes
        # a device's index from its file name's number and wants a character
        # or block device there (stat follows links), nothing more. GPU 0 is
        # also cut into 4 shards, so that two jobs can share it: Slurm sets
        # SLURM_JOB_GPUS/SLURM_STEP_GPUS to the shard's GPU.
        os.makedirs(os.path.join(t, "dev"))
        for i in range(2):
            os.symlink("/dev/null", os.path.join(t, "dev", f"gpu{i}"))
        with open(os.path.join(t, "gres.conf"), "w") as f:
            f.write(f"AutoDetect=off\n"
                    f"NodeName=localhost Name=gpu File={t}/dev/gpu[0-1]\n"
                    f"NodeName=localhost Name=shard Count=4 File={t}/dev/gpu0\n")
        self.write_plugstack()

    def write_plugstack(self, extra=""):
        """slurmstepd reads plugstack.conf at each step: a rewrite holds from the next step."""
        with open(os.path.join(self.tmp, "plugstack.conf"), "w") as f:
            f.write(f"required {self.args.plugin} socket={self.sock} records={self.records} "
                    f"timeout=2 {extra}\n")

    def start_slurm(self):
        for tool in ("munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol", "sinfo"):
            if shutil.which(tool) is None and not os.path.exists("/usr/sbin/" + tool):
                raise Skip(f"{tool} is not installed (apt-get install slurm-wlm munge; "
                           f"scripts/setup.sh installs them)")
        self.write_configs()
        t = self.tmp
        munged = shutil.which("munged") or "/usr/sbin/munged"
        self.start("munged", [munged, "-F", "-f", f"--key-file={t}/munge.key",
                              f"--socket={t}/munge.sock", f"--log-file={t}/log/munged.log",
                              f"--pid-file={t}/munged.pid", f"--seed-file={t}/munged.seed"])
        try:
            wait_until("munged", lambda: os.path.exists(f"{t}/munge.sock"), 10)
        except AssertionError:
            raise Skip("munged did not start: " + self.log_tail("munged.out"))
        slurmctld = shutil.which("slurmctld") or "/usr/sbin/slurmctld"
        slurmd = shutil.which("slurmd") or "/usr/sbin/slurmd"
        self.start("slurmctld", [slurmctld, "-D", "-i", "-f", self.conf])
        self.slurmd_argv = [slurmd, "-D", "-N", "localhost", "-f", self.conf]
        self.start("slurmd", self.slurmd_argv)

        def idle():
            for name in ("slurmctld", "slurmd"):
                if self.procs[name].poll() is not None:
                    tail = self.log_tail(name + ".out")
                    if "spank" in tail:  # our plugin, not Slurm, failed
                        raise AssertionError(f"{name} did not load the plugin:\n{tail}")
                    raise Skip(f"{name} exited at start:\n" + self.log_tail(name + ".out") +
                               self.log_tail(name + ".log"))
            r = self.run(["sinfo", "-h", "-n", "localhost", "-o", "%T"], check=False, timeout=10)
            return r.returncode == 0 and r.stdout.strip() == "idle"

        try:
            wait_until("the node to be idle (sinfo)", idle, 30, 0.2)
        except AssertionError as e:
            raise Skip(f"Slurm did not start: {e}\n" + self.log_tail("slurmctld.log") +
                       self.log_tail("slurmd.log"))

    def close(self):
        try:
            if "slurmctld" in self.procs:
                self.run(["scancel", "--full", "--user=root"], check=False, timeout=10)
                # Step daemons end with their jobs; wait for them.
                deadline = time.time() + 15
                while time.time() < deadline:
                    r = self.run(["squeue", "-h"], check=False, timeout=10)
                    if r.returncode != 0 or not r.stdout.strip():
                        break
                    time.sleep(0.2)
        finally:
            for name in ("slurmd", "slurmctld", "zeusd", "munged"):
                self.stop(name)
            if self.powercap:
                self.powercap.close()

    # ---- jobs -----------------------------------------------------------
    def sbatch(self, *args):
        r = self.run(["sbatch", "--parsable", f"--output={self.tmp}/slurm-%j.out", *args])
        return r.stdout.strip().split(";")[0]

    def job_field(self, job, key):
        out = self.run(["scontrol", "show", "job", job]).stdout
        for line in out.splitlines():
            line = line.strip()
            if key == "AdminComment" and line.startswith("AdminComment="):
                return line[len("AdminComment="):].rstrip()
            for field in line.split(" "):
                if field.startswith(key + "="):
                    return field[len(key) + 1:]
        return None

    def wait_job(self, job, timeout=60):
        def done():
            state = self.job_field(job, "JobState")
            return state if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                      "NODE_FAIL", "OUT_OF_MEMORY") else None
        return wait_until(f"job {job} to end", done, timeout, 0.2)

    def record(self, job, step, timeout=15):
        path = os.path.join(self.records, f"{job}.{step}.json")
        wait_until(f"the record {path}", lambda: os.path.exists(path), timeout)
        with open(path) as f:
            text = f.read()
        assert text.endswith("\n") and text.count("\n") == 1, f"not one JSON line: {text!r}"
        return json.loads(text)

    def output(self, job):
        with open(os.path.join(self.tmp, f"slurm-{job}.out")) as f:
            return f.read()


# ---- the cases --------------------------------------------------------------
def burner_cmd(duty, start, end):
    return f"python3 {HERE}/burner.py {duty} {start:.3f} {end:.3f}"


def new_step_record(c, before):
    """The name of the one step-0 record written since `before` (srun prints no job id)."""
    def found():
        new = [n for n in set(os.listdir(c.records)) - before if n.endswith(".0.json")]
        assert len(new) <= 1, new
        return new[0] if new else None
    return wait_until("a new step record", found, 15)


def check_conservation(c):
    status, ledger = zeusd_call(c.sock, "GET", "/attribution")
    assert status == 200, ledger
    for d in ledger["devices"]:
        parts = d["before_start_j"] + d["idle_j"] + d["attributed_j"] + d["unattributed_j"]
        assert abs(d["measured_j"] - parts) < 0.0015, f"ledger does not add up: {d}"
    return ledger


def case_two_jobs_follow_cpu_use(c, state):
    """Two concurrent jobs, 75 % and 25 % duty: cpu_j per CPU-second agree within 10 %."""
    start = time.time() + 2.0
    end = start + 6.0
    hi = c.sbatch("-n1", "-c1", "--wrap", burner_cmd(0.75, start, end))
    lo = c.sbatch("-n1", "-c1", "--wrap", burner_cmd(0.25, start, end))
    # Another tool's key in AdminComment must survive ours.
    c.run(["scontrol", "update", f"JobId={hi}", 'AdminComment={"site":{"project":"p42"}}'])
    for job in (hi, lo):
        assert c.wait_job(job) == "COMPLETED", c.output(job)
    rec = {job: c.record(job, "batch") for job in (hi, lo)}
    cpu_s = {job: json.loads(c.output(job).strip().splitlines()[-1])["cpu_s"] for job in (hi, lo)}
    for job in (hi, lo):
        r = rec[job]
        assert "error" not in r, r
        assert isinstance(r["cpu_j"], (int, float)) and r["cpu_j"] > 0, r
        assert r["job"] == job and r["step"] == "batch" and r["user"] == "root", r
    per_s = {job: rec[job]["cpu_j"] / cpu_s[job] for job in (hi, lo)}
    ratio = per_s[hi] / per_s[lo]
    print(f"    cpu_s {cpu_s[hi]:.2f} vs {cpu_s[lo]:.2f}; cpu_j {rec[hi]['cpu_j']:.2f} vs "
          f"{rec[lo]['cpu_j']:.2f}; J per CPU-s ratio {ratio:.3f}")
    assert 0.9 <= ratio <= 1.1, f"energy does not follow CPU use: {per_s}"
    # Both together got no more than the package's active energy over the run.
    assert rec[hi]["cpu_j"] + rec[lo]["cpu_j"] <= (POWER_W - IDLE_W) * (end - start + 4)
    check_conservation(c)
    state["jobs"] = (hi, lo)
    state["records"] = rec


def gpu0(c):
    status, ledger = zeusd_call(c.sock, "GET", "/attribution")
    assert status == 200, ledger
    return next(d for d in ledger["devices"] if d["kind"] == "gpu" and d["index"] == 0)


def case_two_jobs_share_a_gpu(c, state):
    """Two jobs on one GPU (Slurm shards) at 75 % and 25 % SM: GPU energy 3:1; the two, idle and
    unattributed add up to the GPU's measured energy."""
    before = gpu0(c)
    stop = os.path.join(c.tmp, "gpu-stop")
    # The batch shell is the step's task, the pid the plugin registers.
    script = f"echo $$ > {c.tmp}/gpu-$SLURM_JOB_ID.pid; while [ ! -e {stop} ]; do sleep 0.05; done"
    hi, lo = (c.sbatch("-n1", "-c1", "--gres=shard:1", "--wrap", script) for _ in range(2))
    try:
        def both_running():
            status, body = zeusd_call(c.sock, "GET", "/attribution/jobs")
            steps = {s["job"]: s for s in body["steps"] if s["step"] == "batch"}
            return (all(j in steps and os.path.exists(f"{c.tmp}/gpu-{j}.pid") for j in (hi, lo))
                    and steps)

        running = wait_until(f"jobs {hi} and {lo} registered", both_running, 20)
        for job in (hi, lo):
            assert running[job]["gpus"] == [before["uuid"]], running[job]
        pid = {}
        for job in (hi, lo):
            with open(f"{c.tmp}/gpu-{job}.pid") as f:
                pid[job] = int(f.read())
        t0 = time.monotonic()
        c.script_gpus({pid[hi]: 75, pid[lo]: 25})
        time.sleep(3.0)
        c.script_gpus({})
        busy_s = time.monotonic() - t0
        time.sleep(0.6)  # zeusd polls every 0.2 s: the last samples are in the ledger
    finally:
        open(stop, "w").close()
    for job in (hi, lo):
        assert c.wait_job(job) == "COMPLETED", c.output(job)
    rec = {job: c.record(job, "batch") for job in (hi, lo)}
    after = gpu0(c)
    for r in rec.values():
        assert "error" not in r and not r["missing"], r
        assert r["gpus"] == [before["uuid"]] and r["method"] == "process_utilization", r
        assert r["gpu_j"] > 0 and r["idle_j"] > 0, r
    ratio = rec[hi]["gpu_j"] / rec[lo]["gpu_j"]
    delta = {k: after[k] - before[k] for k in ("measured_j", "idle_j", "attributed_j",
                                                "unattributed_j", "before_start_j")}
    print(f"    gpu_j {rec[hi]['gpu_j']:.3f} vs {rec[lo]['gpu_j']:.3f} (ratio {ratio:.3f}); "
          f"GPU 0 delta {delta}")
    assert 2.9 <= ratio <= 3.1, f"GPU energy does not follow SM use: {rec}"
    # Nothing else ran on GPU 0: what it attributed is the two jobs' energy, to the mJ.
    jobs_j = rec[hi]["gpu_j"] + rec[lo]["gpu_j"]
    assert abs(delta["attributed_j"] - jobs_j) < 0.0015, (delta, jobs_j)
    assert delta["before_start_j"] == 0, delta
    assert abs(delta["measured_j"] - (jobs_j + delta["idle_j"] + delta["unattributed_j"])) < 0.0015
    # The idle shares of the GPU's holders come out of its idle, never on top of it.
    assert rec[hi]["idle_j"] + rec[lo]["idle_j"] <= delta["idle_j"] + 0.0015, (rec, delta)
    # The fake draws GPU_BUSY_W - GPU_IDLE_W above idle at 100 % SM for busy_s.
    expected = (GPU_BUSY_W - GPU_IDLE_W) * busy_s
    # (The fake sees each rewrite at zeusd's next NVML call, at most a poll late.)
    assert 0.85 * expected <= jobs_j <= 1.15 * expected, (jobs_j, expected)


def case_admin_comment(c, state):
    """AdminComment holds the job's totals under "zeus", other keys kept."""
    hi, lo = state["jobs"]
    for job in (hi, lo):
        comment = json.loads(c.job_field(job, "AdminComment"))
        z = comment["zeus"]
        assert abs(z["cpu_j"] - state["records"][job]["cpu_j"]) < 0.001, (z, state["records"][job])
        assert z["steps"] == ["batch"], z
        assert "missing" not in z, z
    assert json.loads(c.job_field(hi, "AdminComment"))["site"] == {"project": "p42"}


def case_report(c, state):
    """zeus slurm report shows both jobs with the records' energies."""
    hi, lo = state["jobs"]
    r = c.run([c.args.zeus, "slurm", "report", "--records", c.records, "--json",
               "--carbon-intensity", "400"])
    jobs = {j["job"]: j for j in json.loads(r.stdout)["jobs"]}
    for job in (hi, lo):
        assert abs(jobs[job]["cpu_j"] - state["records"][job]["cpu_j"]) < 1e-6, jobs[job]
        assert jobs[job]["complete"] is True and "carbon_g" in jobs[job], jobs[job]
    table = c.run([c.args.zeus, "slurm", "report", "--records", c.records, "--job", hi]).stdout
    lines = [line for line in table.splitlines() if line.startswith(hi + " ")]
    assert len(lines) == 1 and f"{state['records'][hi]['cpu_j']:.1f}" in lines[0], table


def case_zeusd_down_and_restarted(c, state):
    """zeusd restarted mid-step: 404 recorded; zeusd down: job succeeds, record says so."""
    mid = c.sbatch("-n1", "-c1", "--wrap", "sleep 3")

    def registered():
        status, body = zeusd_call(c.sock, "GET", "/attribution/jobs")
        return status == 200 and any(s["job"] == mid for s in body["steps"])

    wait_until(f"job {mid} registered with zeusd", registered, 15)
    c.stop("zeusd")
    before = set(os.listdir(c.records))
    r = c.run(["srun", "-n1", "-c1", "true"], check=False)
    assert r.returncode == 0, f"a job failed because zeusd is down: {r.stdout}{r.stderr}"
    c.start_zeusd()
    assert c.wait_job(mid) == "COMPLETED", c.output(mid)
    name = new_step_record(c, before)
    rec_down = c.record(*name.split(".")[:2])
    assert rec_down["cpu_j"] is None and rec_down["gpu_j"] is None, rec_down
    assert "unreachable" in rec_down["error"] or "cannot connect" in rec_down["error"], rec_down
    assert rec_down["missing"], rec_down
    rec_mid = c.record(mid, "batch")
    assert rec_mid["cpu_j"] is None and "no record of this step" in rec_mid["error"], rec_mid
    z = json.loads(c.job_field(mid, "AdminComment"))["zeus"]
    assert z["missing"] and z["steps"] == ["batch"], z
    report = json.loads(c.run([c.args.zeus, "slurm", "report", "--records", c.records, "--job",
                               mid, "--json"]).stdout)
    assert report["jobs"][0]["complete"] is False and report["jobs"][0]["cpu_j"] is None, report


def case_sigkill(c, state):
    """A step killed by SIGKILL still gets its record, with energy."""
    before = set(os.listdir(c.records))
    end = time.time() + 1.0
    r = c.run(["srun", "-n1", "-c1", "sh", "-c", burner_cmd(1.0, 0, end) + "; kill -9 $$"],
              check=False)
    assert r.returncode != 0, "the step was meant to die"
    name = new_step_record(c, before)
    rec = c.record(*name.split(".")[:2])
    assert isinstance(rec["cpu_j"], (int, float)) and rec["cpu_j"] > 0, rec
    assert "error" not in rec, rec


def case_two_steps_at_once(c, state):
    """Two steps of one job at once: each its own record, labels while running."""
    end = time.time() + 3.0
    script = (f"srun -n1 -c1 --exact {burner_cmd(1.0, 0, end)} & "
              f"srun -n1 -c1 --exact {burner_cmd(1.0, 0, end)} & wait")
    job = c.sbatch("-n2", "-c1", "--wrap", script)

    def both_running():
        status, body = zeusd_call(c.sock, "GET", "/attribution/jobs")
        steps = {s["step"] for s in body["steps"] if s["job"] == job}
        return {"0", "1"} <= steps

    wait_until(f"steps 0 and 1 of job {job} registered", both_running, 15)
    time.sleep(1.0)  # a few ledger polls while both run
    metrics = http.client.HTTPConnection("127.0.0.1", c.metrics_port, timeout=10)
    metrics.request("GET", "/metrics")
    text = metrics.getresponse().read().decode()
    metrics.close()
    assert f'hpc_job="{job}"' in text, "no workload series with hpc_job for the running job"
    assert c.wait_job(job) == "COMPLETED", c.output(job)
    steps = [c.record(job, s) for s in ("0", "1", "batch")]
    for r in steps[:2]:
        assert isinstance(r["cpu_j"], (int, float)) and r["cpu_j"] > 0, r
    z = json.loads(c.job_field(job, "AdminComment"))["zeus"]
    assert sorted(z["steps"]) == ["0", "1", "batch"], z
    assert abs(z["cpu_j"] - sum(r["cpu_j"] for r in steps)) < 0.01, (z, steps)
    check_conservation(c)


def case_job_array(c, state):
    """A job array: one record per element, the array's id on each."""
    base = c.sbatch("--array=0-2", "-n1", "-c1", "--wrap", "sleep 0.3")
    elements = {}

    def all_recorded():
        for name in os.listdir(c.records):
            if not name.endswith(".batch.json"):
                continue
            with open(os.path.join(c.records, name)) as f:
                r = json.load(f)
            if str(r.get("array_job")) == base:
                elements[r["array_task"]] = r
        return len(elements) == 3

    wait_until(f"records of array {base}", all_recorded, 30)
    assert sorted(elements) == [0, 1, 2], elements
    report = json.loads(c.run([c.args.zeus, "slurm", "report", "--records", c.records, "--job",
                               base, "--json"]).stdout)
    assert sorted(j["array_task"] for j in report["jobs"]) == [0, 1, 2], report


def case_foreign_pid_refused(c, state):
    """A user registering another user's pid through zeusd's job API is refused (403)."""
    root_pid = c.procs["slurmd"].pid
    code = f"""
import http.client, json, os, socket
def zeusd_call(path, method, target):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    conn = http.client.HTTPConnection("localhost")
    conn.sock = s
    conn.request(method, target)
    return (conn.getresponse().status,)
own = os.getpid()
print(json.dumps([zeusd_call({c.sock!r}, "POST", "/attribution/jobs/start?job=999&step=0&pids={root_pid}&gpus=")[0],
                  zeusd_call({c.sock!r}, "POST", f"/attribution/jobs/start?job=998&step=0&pids={{own}}&gpus=")[0],
                  zeusd_call({c.sock!r}, "POST", "/attribution/jobs/end?job=998&step=0")[0]]))
"""

    def as_nobody():
        os.setgid(65534)
        os.setuid(65534)

    # Debian's interpreter: one under /root is out of nobody's reach.
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=30,
                       preexec_fn=as_nobody, cwd="/")
    assert r.returncode == 0, r.stderr
    refused, own, ended = json.loads(r.stdout)
    assert refused == 403, f"nobody registered root's pid: {refused}"
    assert own == 200 and ended == 200, (own, ended)


def node_state(c):
    r = c.run(["sinfo", "-h", "-n", "localhost", "-o", "%T"], check=False, timeout=10)
    return r.stdout.strip()


def case_on_error(c, state):
    """on_error=warn (default) runs a step with zeusd down; on_error=fail fails it (exit 1, the
    reason in the job's output, the node not drained) and still runs steps while zeusd is up."""
    c.write_plugstack("on_error=fail")
    try:
        r = c.run(["srun", "-n1", "-c1", "echo", "ran"], check=False)
        assert r.returncode == 0 and "ran" in r.stdout, f"zeusd is up: {r.stdout}{r.stderr}"
        c.stop("zeusd")
        try:
            r = c.run(["srun", "-n1", "-c1", "echo", "ran"], check=False)
            assert r.returncode != 0, f"on_error=fail ran a step, zeusd down: {r.stdout}{r.stderr}"
            assert "ran" not in r.stdout, r.stdout
            assert "on_error=fail" in r.stderr and "zeusd" in r.stderr, r.stderr
            job = c.sbatch("-n1", "-c1", "--wrap", "echo ran")
            assert c.wait_job(job) == "FAILED", c.output(job)
            out = c.output(job)
            assert "ran" not in out and "on_error=fail: the step does not run" in out, out
            assert c.job_field(job, "ExitCode") == "1:0", c.job_field(job, "ExitCode")
            rec = c.record(job, "batch")
            assert rec["gpu_j"] is None and rec["cpu_j"] is None and rec["missing"], rec
            # A failed step is the job's failure, not the node's.
            assert node_state(c) == "idle", node_state(c)
            c.write_plugstack()  # on_error=warn, the default
            job = c.sbatch("-n1", "-c1", "--wrap", "echo ran")
            assert c.wait_job(job) == "COMPLETED", c.output(job)
            assert "ran" in c.output(job), c.output(job)
            assert c.record(job, "batch")["cpu_j"] is None
        finally:
            c.start_zeusd()
    finally:
        c.write_plugstack()


def processes():
    """{pid: (ppid, cmdline)} of every process now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        out[int(name)] = (int(stat[stat.rindex(")") + 2:].split()[1]), cmdline)
    return out


def case_node_reboot(c, state):
    """A node that goes down mid-step (slurmstepd, the job's processes, slurmd and zeusd killed,
    then slurmd and zeusd started again): the job ends as Slurm decides, and the step's record
    says its energy is unknown (null, with the reason), never a number."""
    job = c.sbatch("--no-requeue", "-n1", "-c1", "--wrap",
                   f"echo $$ > {c.tmp}/reboot.pid; sleep 60")

    def registered():
        status, body = zeusd_call(c.sock, "GET", "/attribution/jobs")
        return (any(s["job"] == job for s in body["steps"])
                and os.path.exists(f"{c.tmp}/reboot.pid"))

    wait_until(f"job {job} registered with zeusd", registered, 15)
    # What a power cut takes: the step's daemon and everything under it.
    procs = processes()
    stepd = [pid for pid, (_, cmd) in procs.items() if cmd.startswith(f"slurmstepd: [{job}.batch]")]
    assert len(stepd) == 1, f"no slurmstepd for job {job}: {procs}"
    doomed = set(stepd)
    grew = True
    while grew:
        more = {pid for pid, (ppid, _) in procs.items() if ppid in doomed} - doomed
        doomed |= more
        grew = bool(more)
    for pid in sorted(doomed, reverse=True):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    c.stop("zeusd", signal.SIGKILL)
    c.stop("slurmd", signal.SIGKILL)
    # What slurmctld does itself once the node has not answered for
    # SlurmdTimeout (300 s by default): the node goes DOWN, its jobs with it.
    c.run(["scontrol", "update", "NodeName=localhost", "State=DOWN", "Reason=zeus-test-reboot"])
    end_state = c.wait_job(job, 20)
    assert end_state in ("NODE_FAIL", "FAILED", "CANCELLED"), end_state
    c.start_zeusd()
    c.start("slurmd", c.slurmd_argv)  # ReturnToService=2: it comes back on registration
    print(f"    job {job} ended {end_state} (Reason={c.job_field(job, 'Reason')})")
    rec = c.record(job, "batch")
    for key in ("gpu_j", "cpu_j", "idle_j"):
        assert rec[key] is None, rec
    assert "went down before the step's end" in rec["error"], rec
    assert rec["missing"], rec
    report = json.loads(c.run([c.args.zeus, "slurm", "report", "--records", c.records, "--job",
                               job, "--json"]).stdout)
    assert report["jobs"][0]["complete"] is False and report["jobs"][0]["gpu_j"] is None, report
    wait_until("the node to be idle again", lambda: node_state(c) == "idle", 20, 0.2)


CASES = [case_two_jobs_follow_cpu_use, case_admin_comment, case_report, case_two_jobs_share_a_gpu,
         case_zeusd_down_and_restarted, case_sigkill, case_two_steps_at_once, case_job_array,
         case_foreign_pid_refused, case_on_error, case_node_reboot]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--zeusd", required=True)
    ap.add_argument("--zeus", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--fake-nvml", required=True, help="the fake libnvidia-ml.so.1 zeusd loads")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--cases", help="comma-separated names of the cases to run (default: all)")
    args = ap.parse_args()
    for name in ("zeusd", "zeus", "plugin", "fake_nvml"):
        setattr(args, name, os.path.abspath(getattr(args, name)))
        if not os.path.exists(getattr(args, name)):
            print(f"FAIL: --{name} {getattr(args, name)} does not exist (build it first)")
            return 1
    if os.geteuid() != 0:
        print("SKIP: needs root (slurmd, munged and zeusd's RAPL group run as root)")
        return SKIP
    cases = CASES
    if args.cases:
        cases = [case for case in CASES if case.__name__ in args.cases.split(",")]
    t0 = time.time()
    c = Cluster(args)
    failed = []
    passed = []
    try:
        c.powercap = FakePowercap(os.path.join(c.tmp, "powercap"))
        c.start_zeusd()
        c.start_slurm()
        print(f"cluster up in {time.time() - t0:.1f} s ({c.tmp})")
        state = {}
        for case in cases:
            t = time.time()
            try:
                case(c, state)
                passed.append(case.__name__)
                print(f"PASS {case.__name__} ({time.time() - t:.1f} s): {case.__doc__}")
            except Exception:
                failed.append(case.__name__)
                print(f"FAIL {case.__name__} ({time.time() - t:.1f} s): {case.__doc__}")
                traceback.print_exc()
                if case is case_two_jobs_follow_cpu_use:
                    break  # the next two cases read its jobs
    except AssertionError:
        failed.append("setup")
        traceback.print_exc()
    except Skip as e:
        print(f"SKIP: {e}")
        c.close()
        shutil.rmtree(c.tmp, ignore_errors=True)
        return SKIP
    finally:
        c.close()
    if "setup" in failed:
        print(f"setup failed after {time.time() - t0:.1f} s: no case ran")
    else:
        not_run = len(cases) - len(passed) - len(failed)
        print(f"{len(passed)} passed, {len(failed)} failed, {not_run} "
              f"not run, in {time.time() - t0:.1f} s")
    if failed or args.keep:
        print(f"logs kept in {c.tmp}: slurmd.log, slurmctld.log, zeusd.out, records/")
    else:
        shutil.rmtree(c.tmp, ignore_errors=True)
    return 1 if failed or len(passed) != len(cases) else 0


if __name__ == "__main__":
    sys.exit(main())
