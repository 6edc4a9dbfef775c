"""The metric families the Python Zeus metric classes (zeus.metric) push,
built with Debian's prometheus_client exactly as those classes declare them
(names, help, label names, buckets), observed with the given values and
pushed to a Pushgateway. The test compares what the gateway then holds for
this job with what our C++ classes pushed.

Usage: python_metrics_peer.py GATEWAY JOB GPU_J CPU_J DRAM_J POWER_W"""

import sys

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, push_to_gateway

gateway, job = sys.argv[1], sys.argv[2]
gpu_j, cpu_j, dram_j, power_w = (float(x) for x in sys.argv[3:7])

hist = CollectorRegistry()
Histogram("energy_monitor_gpu_energy_joules", "GPU energy consumption", ["window", "index"],
          buckets=[50, 100, 200, 500, 1000], registry=hist).labels(window="w", index=0).observe(gpu_j)
Histogram("energy_monitor_cpu_energy_joules", "CPU energy consumption", ["window", "index"],
          buckets=[10, 50, 100, 500, 1000], registry=hist).labels(window="w", index=0).observe(cpu_j)
Histogram("energy_monitor_dram_energy_joules", "DRAM energy consumption", ["window", "index"],
          buckets=[5, 10, 20, 50, 150], registry=hist).labels(window="w", index=0).observe(dram_j)
push_to_gateway(gateway, job=job + "_histogram", registry=hist)

counter = CollectorRegistry()
Counter("energy_monitor_gpu_energy_joules", "GPU energy consumption", ["window", "index"],
        registry=counter).labels(window="w", index=0).inc(gpu_j)
Counter("energy_monitor_cpu_energy_joules", "CPU energy consumption", ["window", "index"],
        registry=counter).labels(window="w", index=0).inc(cpu_j)
Counter("energy_monitor_dram_energy_joules", "DRAM energy consumption", ["window", "index"],
        registry=counter).labels(window="w", index=0).inc(dram_j)
push_to_gateway(gateway, job=job + "_counter", registry=counter)

gauge = CollectorRegistry()
Gauge("power_monitor_gpu_power_watts", "Records power consumption for GPU over time",
      ["window", "index"], registry=gauge).labels(window="w", index=0).set(power_w)
push_to_gateway(gateway, job=job + "_gauge", registry=gauge)
print("pushed")
