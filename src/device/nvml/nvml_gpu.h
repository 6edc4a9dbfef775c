// One NVIDIA GPU behind the Gpu interface, talking to NVML through the shared
// NvmlLibrary session (which it keeps alive). Thread-safe: NVML calls are
// thread-safe, and the few cached facts (architecture, power scopes) are
// atomics that are written once with the same value by any racing thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/nvml/nvml_library.h"
#include "zeus/device/gpu.h"

namespace zeus::nvml_internal {

class NvmlGpu final : public device::Gpu {
 public:
  // `index` is this process's GPU index (after CUDA_VISIBLE_DEVICES), used in
  // messages; `nvml_index` NVML's own.
  NvmlGpu(std::shared_ptr<const NvmlLibrary> library, nvml_abi::nvmlDevice_t device, unsigned index,
          unsigned nvml_index, std::string name, std::string uuid);

  std::string name() override { return name_; }
  std::string uuid() override { return uuid_; }
  device::GpuArchitecture architecture() override;

  bool supports_energy_counter() override;
  Joules total_energy() override;
  Watts power(device::PowerDomain domain) override;
  bool read_powers(std::span<const device::PowerDomain> domains, std::span<Watts> out) override;

  device::PowerLimitConstraints power_limit_constraints() override;
  Milliwatts power_limit() override;
  Milliwatts default_power_limit() override;
  void set_power_limit(Milliwatts limit) override;

  bool persistence_mode() override;
  void set_persistence_mode(bool enabled) override;

  std::vector<Megahertz> supported_memory_clocks() override;
  std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) override;
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_gpu_locked_clocks() override;
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override;
  void reset_memory_locked_clocks() override;

  Celsius temperature() override;
  std::string pci_bus_id() override;
  device::GpuTelemetry telemetry() override;
  int minor_number() override;

  // Who runs on the GPU (nvml_processes.cc).
  std::vector<device::GpuProcessSample> process_utilization(std::uint64_t since_us) override;
  std::vector<device::GpuAccountingStat> accounting_stats() override;
  std::vector<device::GpuProcess> compute_processes() override;
  device::GpuMigLayout mig_layout() override;

 private:
  struct FieldReading {
    int nvml_return;
    double milliwatts;
  };
  FieldReading read_field(unsigned field, unsigned scope) const;
  // Reads a power field, resolving GPU scope vs MODULE scope once (cached in `scope`).
  Watts read_power_field(unsigned field, std::atomic<int>& scope, const char* what);
  Watts read_instant_power();
  // "GPU i (name, NVML index n): what", for error messages. Formatted only when
  // something failed: counter and power reads sit on every window's hot path.
  std::string context(std::string_view what) const;
  // Throws the mapped NvmlError unless nvml_return is success.
  void check(int nvml_return, std::string_view function, std::string_view what) const;
  // Throws kNotSupported when an optional entry point is missing.
  template <class Fn>
  void require(Fn fn, std::string_view symbol, std::string_view what) const {
    if (fn == nullptr) require_symbol(fn, symbol, context(what));
  }
  // For telemetry: true on success, false on NOT_SUPPORTED (the field stays
  // empty), throws on anything else.
  bool telemetry_read(int nvml_return, const char* function, std::string_view what) const;
  // nvmlDeviceGetTemperatureV or, on drivers before R570, nvmlDeviceGetTemperature.
  // Returns the NVML result; `function` names the call made.
  int read_temperature(int& celsius, const char*& function) const;
  unsigned to_nvml_mhz(Megahertz mhz, const char* what) const;
  // nvml_processes.cc: `device` is this GPU or one of its MIG devices.
  std::vector<device::GpuProcess> read_compute_processes(nvml_abi::nvmlDevice_t device,
                                                         std::string_view what) const;
  std::vector<unsigned> read_accounting_pids() const;
  // The SMs of `device` (nvmlDeviceGetAttributes_v2), 0 when NOT_SUPPORTED.
  unsigned read_sm_count(nvml_abi::nvmlDevice_t device, std::string_view what) const;
  device::GpuMigInstance read_mig_instance(nvml_abi::nvmlDevice_t mig, unsigned index) const;
  void require_mig_entry_points(std::string_view what) const;

  std::shared_ptr<const NvmlLibrary> lib_;
  const NvmlLibrary::Api& api_;
  nvml_abi::nvmlDevice_t device_;
  unsigned index_;
  unsigned nvml_index_;
  std::string name_;
  std::string uuid_;

  static constexpr int kUnresolved = -1;
  static constexpr int kArchUnresolved = -1000;  // kUnknown is -1
  std::atomic<int> arch_{kArchUnresolved};       // GpuArchitecture value once known
  std::atomic<int> instant_scope_{kUnresolved};  // NVML power scope that works for field 186
  std::atomic<int> average_scope_{kUnresolved};  // ... for field 185
  std::atomic<bool> warned_zero_memory_power_{false};
  std::atomic<bool> instant_via_power_usage_{false};  // old driver: fields 185/186 unknown
};

}  // namespace zeus::nvml_internal
