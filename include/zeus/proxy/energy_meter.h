// Where the proxy's energy comes from: a cumulative reading of the devices
// the inference server uses. GpuEnergyMeter sums GPUs' energy counters
// (NVML, AMD SMI, zeusd, the simulated GPU: any zeus::device::Gpu).
#pragma once

#include <memory>
#include <vector>

#include "zeus/device/gpu.h"
#include "zeus/util/units.h"

namespace zeus::proxy {

// The cumulative energy of the measured devices.
class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  virtual Joules read() = 0;  // non-decreasing
  virtual Watts power() = 0;  // now, all devices together
  virtual std::size_t devices() const = 0;
};

// The sum of GPUs' energy counters. kNotSupported for a GPU without one
// (pre-Volta): slices need energy, not sampled power.
class GpuEnergyMeter final : public EnergyMeter {
 public:
  explicit GpuEnergyMeter(std::vector<std::shared_ptr<device::Gpu>> gpus);
  Joules read() override;
  Watts power() override;
  std::size_t devices() const override { return gpus_.size(); }

 private:
  std::vector<std::shared_ptr<device::Gpu>> gpus_;
};

}  // namespace zeus::proxy
