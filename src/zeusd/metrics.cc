#include "zeus/zeusd/metrics.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <climits>
#include <iterator>
#include <optional>

#include "zeus/util/error.h"

namespace zeus::zeusd {
namespace {

// One sample line: name{labels} value
void line(std::string& out, std::string_view name, std::string_view labels, double value) {
  out.append(name).push_back('{');
  out.append(labels).append("} ");
  fmt::format_to(std::back_inserter(out), "{}", value);
  out.push_back('\n');
}

void head(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).push_back(' ');
  out.append(help).push_back('\n');
  out.append("# TYPE ").append(name).push_back(' ');
  out.append(type).push_back('\n');
}

// A scrape reads each GPU's telemetry once into a stack buffer (no
// allocation); GPUs past it (more than any node has) are read per family.
constexpr std::size_t kTelemetryBuffer = 64;

struct TelemetrySlot {
  device::GpuTelemetry t;
  bool ok = false;
};

}  // namespace

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

void append_label_value(std::string& out, std::string_view text) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
}

std::string escape_label_value(std::string_view text) {
  std::string out;
  append_label_value(out, text);
  return out;
}

MetricsRenderer::MetricsRenderer(std::vector<std::shared_ptr<device::Gpu>> gpus,
                                 std::vector<std::shared_ptr<device::Cpu>> cpus,
                                 std::string hostname, std::string_view hostname_label) {
  // Prometheus's label-name grammar; names starting "__" are reserved for it.
  const auto name_char = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
  };
  bool valid = !hostname_label.empty() && !hostname_label.starts_with("__");
  for (std::size_t i = 0; valid && i < hostname_label.size(); ++i) {
    valid = name_char(hostname_label[i], i == 0);
  }
  if (!valid) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("DCGM host label '{}' is not a Prometheus label name (letters, digits "
                            "and '_', not starting with a digit or '__'; e.g. hostname)",
                            hostname_label));
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GpuEntry e;
    e.gpu = gpus[i];
    e.index = i;
    std::string uuid, name;
    try {
      uuid = e.gpu->uuid();
    } catch (const std::exception&) {
    }
    try {
      name = e.gpu->name();
    } catch (const std::exception&) {
    }
    try {
      e.energy = e.gpu->supports_energy_counter();
    } catch (const std::exception&) {
    }
    e.labels = fmt::format(R"(gpu="{}",uuid="{}",model_name="{}")", i, escape_label_value(uuid),
                           escape_label_value(name));
    // dcgm-exporter's labels, in its order; one the backend cannot say is
    // left out rather than made up.
    e.dcgm_labels = fmt::format(R"(gpu="{}",UUID="{}")", i, escape_label_value(uuid));
    try {
      e.dcgm_labels += fmt::format(R"(,pci_bus_id="{}")", escape_label_value(e.gpu->pci_bus_id()));
    } catch (const std::exception&) {
    }
    try {
      e.dcgm_labels += fmt::format(R"(,device="nvidia{}")", e.gpu->minor_number());
    } catch (const std::exception&) {
    }
    e.dcgm_labels += fmt::format(R"(,modelName="{}")", escape_label_value(name));
    if (!hostname.empty()) {
      e.dcgm_labels += fmt::format(R"(,{}="{}")", hostname_label, escape_label_value(hostname));
    }
    gpus_.push_back(std::move(e));
  }
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    CpuEntry e;
    e.cpu = cpus[i];
    std::string zone;
    try {
      zone = e.cpu->name();
    } catch (const std::exception&) {
    }
    e.labels = fmt::format(R"(package="{}",zone="{}")", i, escape_label_value(zone));
    cpus_.push_back(std::move(e));
  }
}

void MetricsRenderer::render(std::string& out) {
  // Read every device once per metric family; a failed read is skipped.
  const auto gpu_family = [&](std::string_view name, std::string_view type, std::string_view help,
                              auto read) {
    head(out, name, type, help);
    for (auto& e : gpus_) {
      try {
        double v = 0;
        if (read(e, v)) line(out, name, e.labels, v);
      } catch (const std::exception&) {
        gpu_errors_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  };
  if (!gpus_.empty()) {
    gpu_family("zeus_gpu_energy_joules_total", "counter",
               "Energy the GPU used since the driver loaded (Volta and newer).",
               [this](GpuEntry& e, double& v) {
                 if (!e.energy) return false;
                 if (gpu_energy && gpu_energy(e.index, v)) return true;
                 v = e.gpu->total_energy().value();
                 return true;
               });
    gpu_family("zeus_gpu_power_watts", "gauge", "Instant board power of the GPU.",
               [](GpuEntry& e, double& v) {
                 v = e.gpu->power(device::PowerDomain::kDeviceInstant).value();
                 return true;
               });
    gpu_family("zeus_gpu_power_average_watts", "gauge",
               "Board power of the GPU averaged by the driver over about 1 s.",
               [](GpuEntry& e, double& v) {
                 v = e.gpu->power(device::PowerDomain::kDeviceAverage).value();
                 return true;
               });
    gpu_family("zeus_gpu_power_limit_watts", "gauge", "Power management limit of the GPU.",
               [](GpuEntry& e, double& v) {
                 v = to_watts(e.gpu->power_limit()).value();
                 return true;
               });
    gpu_family("zeus_gpu_temperature_celsius", "gauge", "GPU core temperature.",
               [](GpuEntry& e, double& v) {
                 v = e.gpu->temperature().value();
                 return true;
               });
    render_dcgm(out);
  }
  if (!cpus_.empty()) {
    // One read per package gives both counters.
    head(out, "zeus_cpu_package_energy_joules_total", "counter",
         "Energy of the CPU package (RAPL), corrected for counter wraparound.");
    bool any_dram = false;
    double dram_values[64];
    bool dram_have[64] = {};
    for (std::size_t i = 0; i < cpus_.size(); ++i) {
      try {
        device::CpuEnergy e;
        if (!cpu_energy || !cpu_energy(i, e)) e = cpus_[i].cpu->total_energy();
        line(out, "zeus_cpu_package_energy_joules_total", cpus_[i].labels, e.package.value());
        if (e.dram && i < 64) {
          dram_values[i] = e.dram->value();
          dram_have[i] = true;
          any_dram = true;
        }
      } catch (const std::exception&) {
        cpu_errors_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    if (any_dram) {
      head(out, "zeus_cpu_dram_energy_joules_total", "counter",
           "Energy of the DRAM attached to the CPU package (RAPL).");
      for (std::size_t i = 0; i < cpus_.size() && i < 64; ++i) {
        if (dram_have[i])
          line(out, "zeus_cpu_dram_energy_joules_total", cpus_[i].labels, dram_values[i]);
      }
    }
  }
  head(out, "zeus_metrics_read_errors_total", "counter",
       "Device reads that failed while rendering metrics (the value was left out).");
  line(out, "zeus_metrics_read_errors_total", R"(device="gpu")",
       static_cast<double>(gpu_errors_.load(std::memory_order_relaxed)));
  line(out, "zeus_metrics_read_errors_total", R"(device="cpu")",
       static_cast<double>(cpu_errors_.load(std::memory_order_relaxed)));
  if (extra) extra(out);
}

// The DCGM exporter's names, units and labels for what we also read, so its
// dashboards work on zeusd. The telemetry is read once per GPU per scrape.
void MetricsRenderer::render_dcgm(std::string& out) {
  std::array<TelemetrySlot, kTelemetryBuffer> slots;
  for (std::size_t i = 0; i < gpus_.size() && i < kTelemetryBuffer; ++i) {
    try {
      slots[i].t = gpus_[i].gpu->telemetry();
      slots[i].ok = true;
    } catch (const std::exception&) {
      gpu_errors_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  const auto telemetry_family = [&](std::string_view name, std::string_view help, auto pick) {
    head(out, name, "gauge", help);
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      std::optional<double> v;
      if (i < kTelemetryBuffer) {
        if (slots[i].ok) v = pick(slots[i].t);
      } else {
        try {
          v = pick(gpus_[i].gpu->telemetry());
        } catch (const std::exception&) {
          gpu_errors_.fetch_add(1, std::memory_order_relaxed);
        }
      }
      if (v) line(out, name, gpus_[i].dcgm_labels, *v);
    }
  };
  const auto device_family = [&](std::string_view name, std::string_view type,
                                 std::string_view help, auto read) {
    head(out, name, type, help);
    for (auto& e : gpus_) {
      try {
        double v = 0;
        if (read(e, v)) line(out, name, e.dcgm_labels, v);
      } catch (const std::exception&) {
        gpu_errors_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  };
  const auto opt = [](const auto& field, auto value) -> std::optional<double> {
    if (!field) return std::nullopt;
    return value(*field);
  };
  telemetry_family("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.sm_clock, [](Megahertz m) { return double(m.value()); });
                   });
  telemetry_family("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.memory_clock, [](Megahertz m) { return double(m.value()); });
                   });
  telemetry_family("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.temperature, [](Celsius c) { return c.value(); });
                   });
  device_family("DCGM_FI_DEV_POWER_USAGE", "gauge",
                "Power draw (in W), the driver's ~1 s average as DCGM reports it.",
                [](GpuEntry& e, double& v) {
                  v = e.gpu->power(device::PowerDomain::kDeviceAverage).value();
                  return true;
                });
  device_family("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
                "Total energy consumption since the driver loaded (in mJ).",
                [this](GpuEntry& e, double& v) {
                  if (!e.energy) return false;
                  if (gpu_energy && gpu_energy(e.index, v)) {
                    v *= 1000.0;
                    return true;
                  }
                  v = e.gpu->total_energy().value() * 1000.0;
                  return true;
                });
  telemetry_family("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.gpu_utilization, [](device::Percent p) { return p.value(); });
                   });
  telemetry_family("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.memory_utilization, [](device::Percent p) { return p.value(); });
                   });
  telemetry_family("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.memory_free,
                                [](device::Bytes b) { return device::to_mebibytes(b); });
                   });
  telemetry_family("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
                   [&](const device::GpuTelemetry& t) {
                     return opt(t.memory_used,
                                [](device::Bytes b) { return device::to_mebibytes(b); });
                   });
  // DCGM renamed the field with NVML (R535); dashboards of either age use one
  // of the two names, so both carry the same bitmask.
  for (const std::string_view name : {std::string_view("DCGM_FI_DEV_CLOCKS_EVENT_REASONS"),
                                      std::string_view("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")}) {
    telemetry_family(name, "Current clock event (throttle) reasons, NVML's bitmask.",
                     [&](const device::GpuTelemetry& t) {
                       return opt(t.clock_event_reasons,
                                  [](std::uint64_t m) { return static_cast<double>(m); });
                     });
  }
}

}  // namespace zeus::zeusd
