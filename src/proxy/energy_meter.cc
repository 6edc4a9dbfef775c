#include "zeus/proxy/energy_meter.h"

#include <fmt/format.h>

#include "zeus/util/error.h"

namespace zeus::proxy {

GpuEnergyMeter::GpuEnergyMeter(std::vector<std::shared_ptr<device::Gpu>> gpus)
    : gpus_(std::move(gpus)) {
  if (gpus_.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                "the proxy has no GPU to measure; check `zeus show-env` or pick GPUs with --gpus");
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (!gpus_[i]->supports_energy_counter()) {
      throw_error(ErrorCode::kNotSupported,
                  fmt::format("GPU {} ({}) has no energy counter (Volta or newer is needed): the "
                              "proxy splits counter energy, not sampled power",
                              i, gpus_[i]->name()));
    }
  }
}

Joules GpuEnergyMeter::read() {
  Joules total{0.0};
  for (auto& g : gpus_) total += g->total_energy();
  return total;
}

Watts GpuEnergyMeter::power() {
  Watts total{0.0};
  for (auto& g : gpus_) total += g->power(device::PowerDomain::kDeviceInstant);
  return total;
}

}  // namespace zeus::proxy
