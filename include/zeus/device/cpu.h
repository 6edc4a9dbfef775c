// The CPU seam: cumulative energy of one CPU package and its DRAM.
#pragma once

#include <optional>
#include <string>

#include "zeus/util/units.h"

namespace zeus::device {

struct CpuEnergy {
  Joules package;
  std::optional<Joules> dram;  // absent when the package has no DRAM zone
};

// One CPU package (a RAPL `package-N` zone, or `package-N-die-M`). Energy is
// cumulative and already corrected for counter wraparound. Thread-safe.
// total_energy() throws kNoPermission when the counter is unreadable (since
// Linux 5.10 RAPL energy is root-only).
class Cpu {
 public:
  virtual ~Cpu() = default;
  virtual std::string name() = 0;  // e.g. "package-0"
  virtual bool has_dram() = 0;
  virtual CpuEnergy total_energy() = 0;
};

}  // namespace zeus::device
