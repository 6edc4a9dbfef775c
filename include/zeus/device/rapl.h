// CPU package and DRAM energy through the Linux powercap (RAPL) sysfs tree.
//
// Packages are found by zone name (`package-N`, `package-N-die-M`), never by
// directory index: `intel-rapl:1` may be `psys`. DRAM is the child zone named
// `dram`. Every RAPL control type under the root is scanned (`intel-rapl`,
// `intel-rapl-mmio`, `intel-rapl-tpmi`); when one package shows up under several
// of them (client parts expose package-0 through both MSR and MMIO) it is
// measured once, preferring intel-rapl.
//
// Counters are 32-bit in hardware and wrap within minutes; each one is made
// monotone in-process (a decrease is one wrap of max_energy_range_uj + 1), and
// one background keep-alive thread per set re-reads every counter often enough
// that no wrap is missed between user reads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "zeus/device/cpu.h"
#include "zeus/util/clock.h"
#include "zeus/util/units.h"

namespace zeus::device {

struct RaplOptions {
  // powercap class directory. Empty: $ZEUS_POWERCAP_ROOT, else
  // /sys/class/powercap, or /zeus_sys/class/powercap when that exists and the
  // /sys one has no RAPL zone (containers mount the host's tree there, since
  // Docker masks /sys/devices/virtual/powercap).
  std::string root;
  // How often the background keep-alive re-reads every counter so that no
  // wraparound goes unseen. Zero: derived from the smallest max_energy_range_uj
  // (a quarter of the time to wrap at 1000 W, at most 30 s, at least 0.1 s).
  // Negative: no keep-alive thread (tests drive wraps by hand; the caller must
  // then read at least once per wrap period).
  Seconds keepalive_period{0.0};
  // The clock the keep-alive waits on. nullptr: the process's steady clock.
  Clock* clock = nullptr;
};

struct RaplZoneInfo {
  std::string name;       // "package-0", "dram", "psys", ...
  std::string path;       // directory of the zone
  bool readable = true;   // energy_uj could be read (probed only for measured zones)
  std::string problem;    // why not, with what to do
  bool measured = false;  // a package or DRAM zone whose energy this set reports
};

struct RaplCpuSet {
  std::vector<std::unique_ptr<Cpu>> cpus;  // one per package, ordered by package number (and die)
  std::vector<RaplZoneInfo> zones;         // every zone seen, for reports
};

// Finds the RAPL packages and their DRAM sub-zones. A machine without powercap
// gives an empty set (not an error). Packages whose energy_uj is unreadable are
// listed in `zones` with the problem, and left out of `cpus`. A readable package
// whose DRAM zone is unreadable is kept without DRAM (the DRAM zone carries the
// problem). The keep-alive thread lives as long as any Cpu of the set.
RaplCpuSet open_rapl_cpus(const RaplOptions& options = {});

}  // namespace zeus::device
