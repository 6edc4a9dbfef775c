#!/usr/bin/env bash
# The attribution ledger on a real NVIDIA GPU (not part of `make test`: CI has
# no GPU). Read-only: it changes no GPU setting. Runs two PyTorch processes
# on GPU 0 with 75 % and 25 % duty cycles, lets `zeus top` book a few
# seconds of their energy from the real driver, and checks that the ledger is
# conserved to the mJ and that the shares follow the duty cycles.
#
#   tests/real_gpu/attribution_check.sh build/bin/zeus [seconds]
set -euo pipefail
zeus=${1:?usage: attribution_check.sh path/to/zeus [seconds]}
seconds=${2:-8}
out=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$out"' EXIT

cat >"$out/duty.py" <<'PY'
import sys, time, torch
duty = float(sys.argv[1])
a = torch.randn(4096, 4096, device="cuda")
period = 0.2
end = time.time() + float(sys.argv[2])
while time.time() < end:
    t0 = time.time()
    while time.time() - t0 < duty * period:
        a = a @ a
        a = a / a.norm()
        torch.cuda.synchronize()
    time.sleep(max(0.0, period - (time.time() - t0)))
PY
python3 "$out/duty.py" 0.75 $((seconds + 12)) & hot=$!
python3 "$out/duty.py" 0.25 $((seconds + 12)) & cool=$!
sleep 6  # CUDA contexts up and both loops running
"$zeus" top --local --once --json --interval "$seconds" >"$out/ledger.json"
python3 - "$out/ledger.json" "$hot" "$cool" <<'PY'
import json, sys
body = json.load(open(sys.argv[1]))
hot, cool = int(sys.argv[2]), int(sys.argv[3])
gpu = [d for d in body["devices"] if d["kind"] == "gpu"]
print(json.dumps({"devices": gpu}, indent=1))
ok = True
for i, d in enumerate(body["devices"]):
    total = round(d["before_start_j"] * 1000) + round(d["idle_j"] * 1000) + \
        round(d["attributed_j"] * 1000) + round(d["unattributed_j"] * 1000)
    conserved = total == round(d["measured_j"] * 1000)
    print(f"device {i} ({d['kind']}): conserved to the mJ: {conserved}, method {d['method']}")
    ok &= conserved
energy = {p["pid"]: sum(e["energy_j"] for e in p["energy"] if body["devices"][e["device"]]["kind"] == "gpu")
          for p in body.get("processes", [])}
print("GPU energy by pid:", energy)
if hot in energy and cool in energy and energy[cool] > 0:
    ratio = energy[hot] / energy[cool]
    print(f"hot/cool energy ratio {ratio:.2f} (duty ratio 3.0)")
    ok &= 1.5 < ratio < 6
else:
    print("the two workers were not both booked")
    ok = False
print("RESULT", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
