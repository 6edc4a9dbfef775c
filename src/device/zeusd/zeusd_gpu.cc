// A GPU whose settings go through zeusd; reads are local when a local GPU is
// given, through zeusd otherwise.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <span>

#include "zeus/device/zeusd_backend.h"
#include "zeus/util/error.h"

namespace zeus::device {
namespace {

class ZeusdGpu final : public Gpu {
 public:
  ZeusdGpu(std::shared_ptr<ZeusdConnection> c, int id, std::shared_ptr<Gpu> local)
      : c_(std::move(c)), id_(id), local_(std::move(local)) {}

  std::string name() override { return local_ ? local_->name() : info().name; }
  std::string uuid() override {
    if (local_) return local_->uuid();
    unsupported("the GPU UUID");
  }
  GpuArchitecture architecture() override {
    return local_ ? local_->architecture() : GpuArchitecture::kUnknown;
  }
  bool supports_energy_counter() override {
    return local_ ? local_->supports_energy_counter() : info().cumulative_energy_available;
  }
  Joules total_energy() override {
    if (local_) return local_->total_energy();
    return from_millijoules(read("get_cumulative_energy").at("energy_mj").get<double>());
  }
  Watts power(PowerDomain domain) override {
    if (local_) return local_->power(domain);
    if (domain != PowerDomain::kDeviceInstant)
      unsupported(std::string(power_domain_name(domain)) + " power");
    const auto j = nlohmann::json::parse(c_->get(fmt::format("/gpu/get_power?gpu_ids={}", id_)));
    return from_milliwatts(j.at("power_mw").at(std::to_string(id_)).get<double>());
  }
  bool read_powers(std::span<const PowerDomain> domains, std::span<Watts> out) override {
    return local_ && local_->read_powers(domains, out);
  }
  PowerLimitConstraints power_limit_constraints() override {
    if (local_) return local_->power_limit_constraints();
    const auto j = read("get_power_limit_constraints");
    return {Milliwatts(j.at("min_power_limit_mw").get<std::int64_t>()),
            Milliwatts(j.at("max_power_limit_mw").get<std::int64_t>())};
  }
  Milliwatts power_limit() override {
    if (local_) return local_->power_limit();
    return Milliwatts(read("get_power_limit").at("power_limit_mw").get<std::int64_t>());
  }
  Milliwatts default_power_limit() override {
    if (local_) return local_->default_power_limit();
    // zeusd has no endpoint for it; the maximum is the default on datacenter GPUs.
    return power_limit_constraints().max;
  }
  void set_power_limit(Milliwatts limit) override {
    c_->gpu_command("set_power_limit", id_, fmt::format("power_limit_mw={}", limit.value()));
  }
  bool persistence_mode() override {
    if (local_) return local_->persistence_mode();
    return read("get_persistence_mode").at("enabled").get<bool>();
  }
  void set_persistence_mode(bool enabled) override {
    c_->gpu_command("set_persistence_mode", id_, enabled ? "enabled=true" : "enabled=false");
  }
  std::vector<Megahertz> supported_memory_clocks() override {
    if (local_) return local_->supported_memory_clocks();
    unsupported("the supported memory clocks");
  }
  std::vector<Megahertz> supported_graphics_clocks(Megahertz memory_clock) override {
    if (local_) return local_->supported_graphics_clocks(memory_clock);
    unsupported("the supported graphics clocks");
  }
  void set_gpu_locked_clocks(Megahertz min, Megahertz max) override {
    c_->gpu_command("set_gpu_locked_clocks", id_,
                    fmt::format("min_clock_mhz={}&max_clock_mhz={}", min.value(), max.value()));
  }
  void reset_gpu_locked_clocks() override { c_->gpu_command("reset_gpu_locked_clocks", id_); }
  void set_memory_locked_clocks(Megahertz min, Megahertz max) override {
    c_->gpu_command("set_mem_locked_clocks", id_,
                    fmt::format("min_clock_mhz={}&max_clock_mhz={}", min.value(), max.value()));
  }
  void reset_memory_locked_clocks() override { c_->gpu_command("reset_mem_locked_clocks", id_); }
  Celsius temperature() override {
    if (local_) return local_->temperature();
    unsupported("the temperature");
  }
  std::string pci_bus_id() override {
    if (local_) return local_->pci_bus_id();
    if (info().pci_address.empty()) unsupported("the PCI address");
    return info().pci_address;
  }
  // Read-only, so from the local device when there is one; otherwise the
  // default (temperature only, which is unsupported remotely: all empty).
  GpuTelemetry telemetry() override {
    if (local_) return local_->telemetry();
    return Gpu::telemetry();
  }
  int minor_number() override {
    if (local_) return local_->minor_number();
    unsupported("the device minor number");
  }

 private:
  const ZeusdStatus::GpuInfo& info() const {
    for (const auto& g : c_->status().gpus) {
      if (g.id == id_) return g;
    }
    throw_error(ErrorCode::kNotFound, fmt::format("zeusd does not list GPU {}", id_));
  }
  nlohmann::json read(const char* op) {
    const auto j = nlohmann::json::parse(c_->get(fmt::format("/gpu/{}?gpu_ids={}", op, id_)));
    return j.at(std::to_string(id_));
  }
  [[noreturn]] void unsupported(const std::string& what) const {
    throw_error(ErrorCode::kNotSupported,
                fmt::format("zeusd does not report {} of GPU {}, and no local driver is loaded",
                            what, id_));
  }

  const std::shared_ptr<ZeusdConnection> c_;
  const int id_;
  const std::shared_ptr<Gpu> local_;
};

class ZeusdCpu final : public Cpu {
 public:
  ZeusdCpu(std::shared_ptr<ZeusdConnection> c, int id) : c_(std::move(c)), id_(id) {
    for (const auto& cpu : c_->status().cpus) {
      if (cpu.id == id_) dram_ = cpu.dram_available;
    }
  }
  std::string name() override { return fmt::format("package-{}", id_); }
  bool has_dram() override { return dram_; }
  CpuEnergy total_energy() override {
    const auto j = nlohmann::json::parse(c_->get(fmt::format(
        "/cpu/get_cumulative_energy?cpu_ids={}&cpu=true&dram={}", id_, dram_ ? "true" : "false")));
    const auto& e = j.at(std::to_string(id_));
    CpuEnergy out;
    out.package = from_microjoules(e.at("cpu_energy_uj").get<double>());
    if (dram_ && e.contains("dram_energy_uj") && !e["dram_energy_uj"].is_null()) {
      out.dram = from_microjoules(e["dram_energy_uj"].get<double>());
    }
    return out;
  }

 private:
  const std::shared_ptr<ZeusdConnection> c_;
  const int id_;
  bool dram_ = false;
};

}  // namespace

std::unique_ptr<Gpu> make_zeusd_gpu(std::shared_ptr<ZeusdConnection> connection, int daemon_id,
                                    std::shared_ptr<Gpu> local) {
  return std::make_unique<ZeusdGpu>(std::move(connection), daemon_id, std::move(local));
}

std::unique_ptr<Cpu> make_zeusd_cpu(std::shared_ptr<ZeusdConnection> connection, int daemon_id) {
  return std::make_unique<ZeusdCpu>(std::move(connection), daemon_id);
}

}  // namespace zeus::device
