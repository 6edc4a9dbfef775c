// CPU package and DRAM energy through the Linux powercap (RAPL) sysfs tree.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/util/units.h"

namespace zeus {

struct RaplOptions {
  // powercap class directory. Empty: $ZEUS_POWERCAP_ROOT, else
  // /sys/class/powercap (or /zeus_sys/class/powercap inside a container).
  std::string root;
  // How often the background keep-alive re-reads every counter so that no
  // wraparound goes unseen. Zero: derived from each zone's max_energy_range_uj
  // (a quarter of the fastest wrap time at 1000 W, at most 30 s).
  Seconds keepalive_period{0.0};
};

struct RaplZoneInfo {
  std::string name;      // "package-0", "dram", ...
  std::string path;      // directory of the zone
  bool readable = true;  // energy_uj could be read
  std::string problem;   // why not, with what to do
};

struct RaplCpuSet {
  std::vector<std::unique_ptr<Cpu>> cpus;  // one per package, ordered by package number
  std::vector<RaplZoneInfo> zones;         // every zone seen, for reports
};

// Finds the RAPL packages and their DRAM sub-zones. A machine without powercap
// gives an empty set (not an error). Packages whose energy_uj is unreadable are
// listed in `zones` with the problem, and left out of `cpus`.
RaplCpuSet open_rapl_cpus(const RaplOptions& options = {});

}  // namespace zeus
