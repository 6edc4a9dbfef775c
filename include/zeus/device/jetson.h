// NVIDIA Jetson boards: power of the CPU, GPU and whole-module rails, read
// from the board's INA3221 power monitor(s) in sysfs, as the Python Zeus's
// Jetson backend reads them. Jetsons have no energy counter, so energy comes
// from integrating sampled rail power (the power monitor does it, with the
// same edge handling as for GPUs without a counter).
//
// The L4T kernels expose two layouts under <sysfs>/bus/i2c/drivers/:
//   ina3221x/<dev>/<iio:deviceN>/rail_name_<k>, in_power<k>_input (mW) or
//     in_voltage<k>_input (mV) x in_current<k>_input (mA)  (Nano, TX2; L4T 32)
//   ina3221/<dev>/hwmon/hwmonN/in<k>_label, in<k>_input (mV) x
//     curr<k>_input (mA), or power<k>_input (mW)  (Xavier, Orin; L4T 35/36;
//     older kernels put the files directly in <dev>/<subdir>/)
// A rail is the CPU's when its name contains "cpu", the GPU's when it
// contains "gpu", the module's input when it contains "system", "_in" or
// "total" (case-insensitive; upstream's rule, so the same rails are chosen;
// Orin NX's combined VDD_CPU_GPU_CV counts as the CPU rail there too).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::device {

enum class SocRail { kCpu, kGpu, kTotal };
// "cpu", "gpu", "total".
const char* soc_rail_name(SocRail rail);

struct JetsonRail {
  SocRail rail = SocRail::kTotal;
  std::string label;              // the board's name for it, e.g. "VDD_IN"
  std::filesystem::path power;    // mW; empty when power is voltage x current
  std::filesystem::path voltage;  // mV
  std::filesystem::path current;  // mA
};

class JetsonBoard {
 public:
  // The rails found under `sysfs_root` (normally /sys); nullopt when the
  // board has no INA3221 driver directory or no usable rail. Where two rails
  // map to the same kind, the first in path order is used.
  static std::optional<JetsonBoard> discover(const std::filesystem::path& sysfs_root);

  // Ordered CPU, GPU, total; only the rails the board has.
  const std::vector<JetsonRail>& rails() const { return rails_; }
  const JetsonRail* find(SocRail rail) const;
  // "ina3221x" or "ina3221".
  const std::string& driver() const { return driver_; }

  // Power of one rail now. kNotFound for a rail the board lacks; kIo when
  // its files cannot be read or do not hold a number.
  Watts power(SocRail rail) const;

 private:
  std::string driver_;
  std::vector<JetsonRail> rails_;
};

}  // namespace zeus::device
