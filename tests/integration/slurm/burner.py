#!/usr/bin/env python3
"""A CPU burner with a duty cycle, for the Slurm energy test.

burner.py DUTY START END: sleeps until the Unix time START, then in every
0.1 s period spins for DUTY of it and sleeps the rest, until END; prints
{"cpu_s": <its user+system CPU seconds>} so the test can compare each job's
energy with its CPU use. The two jobs of the test burn over the same
interval, so the node's other load weighs on both alike.
"""
import json
import os
import sys
import time

duty, start, end = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
while time.time() < start:
    time.sleep(min(0.05, max(0.0, start - time.time())))
period = 0.1
while True:
    now = time.time()
    if now >= end:
        break
    busy_until = min(now + duty * period, end)
    while time.time() < busy_until:
        pass
    rest = now + period - time.time()
    if rest > 0 and time.time() + rest < end:
        time.sleep(rest)
t = os.times()
print(json.dumps({"cpu_s": t.user + t.system}), flush=True)
