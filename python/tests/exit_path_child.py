"""A process whose power-limit optimizer changed a GPU setting and then leaves by one exit
path (see test_exit_paths.py). The fake NVML journals every setter call to
$ZEUS_FAKE_NVML_JOURNAL, which outlives this process.

    exit_path_child.py MODE

EXIT_PATH_OPTIMIZER=chase runs the carbon-aware ChasePowerLimitOptimizer instead
(its limit set by a decision, not by profiling).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

from fake_nvml import FakeNvml

fake = FakeNvml()
fake.reset()
fake.set_device_count(1)
fake.set_power_limits(0, 200000, 700000, 700000, 500000)  # runs at 500 W before the optimizer

from zeuscpp.monitor import ZeusMonitor  # noqa: E402
from zeuscpp.optimizer.power_limit import ChasePowerLimitOptimizer, Energy, GlobalPowerLimitOptimizer  # noqa: E402

mode = sys.argv[1]
if mode == "sigterm_python_handler":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))

monitor = ZeusMonitor(sync_execution_with=None)
if os.environ.get("EXIT_PATH_OPTIMIZER") == "chase":
    # A saved profile (least energy at 200 W, every limit as fast): Chase sets 200 W at once.
    profile = os.path.join(os.environ["EXIT_PATH_TMP"], "profile.json")
    with open(profile, "w") as f:
        json.dump({"measurements": [{"power_limit": w, "energy": w, "time": 1.0} for w in range(700, 100, -100)]}, f)
    plo = ChasePowerLimitOptimizer(monitor, lambda start, period: 300.0, kind="carbon", pl_step=100,
                                   profile_path=profile)
    plo.on_step_begin()
    assert fake.power_limit_mw(0) == 200000 and fake.persistence(0) and len(plo.decisions) == 1
else:
    plo = GlobalPowerLimitOptimizer(monitor, Energy(), wait_steps=0, warmup_steps=0, profile_steps=1000, pl_step=100)
    plo.on_step_begin()
    assert fake.power_limit_mw(0) == 700000 and fake.persistence(0)


def train_forever() -> None:
    print("ready", flush=True)
    while True:
        plo.on_step_begin()
        time.sleep(0.005)


if mode == "return":
    pass
elif mode == "exception":
    raise RuntimeError("training crashed")
elif mode == "sys_exit":
    sys.exit(3)
elif mode in ("sigint", "sigterm", "sigterm_python_handler"):
    train_forever()
elif mode == "sigint_caught":
    try:
        train_forever()
    except KeyboardInterrupt:
        # Caught: training goes on with the optimizer's settings intact.
        print(f"caught, limit {fake.power_limit_mw(0)}", flush=True)
        plo.on_step_begin()
        print(f"still optimizing, limit {fake.power_limit_mw(0)}", flush=True)
else:
    sys.exit(f"unknown mode {mode}")
