#include "device/nvml/nvml_gpu.h"

#include <fmt/format.h>

#include <array>
#include <limits>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::nvml_internal {
namespace {

namespace abi = nvml_abi;

device::GpuArchitecture map_architecture(unsigned arch) {
  switch (arch) {
    case 2:
      return device::GpuArchitecture::kKepler;
    case 3:
      return device::GpuArchitecture::kMaxwell;
    case 4:
      return device::GpuArchitecture::kPascal;
    case 5:
      return device::GpuArchitecture::kVolta;
    case 6:
      return device::GpuArchitecture::kTuring;
    case 7:
      return device::GpuArchitecture::kAmpere;
    case 8:
      return device::GpuArchitecture::kAda;
    case 9:
      return device::GpuArchitecture::kHopper;
    case 10:
      return device::GpuArchitecture::kBlackwell;
    case 13:
      return device::GpuArchitecture::kRubin;
    default:
      // NVML_DEVICE_ARCH_UNKNOWN, or a number newer than this code knows.
      return device::GpuArchitecture::kUnknown;
  }
}

bool field_value_to_double(const abi::nvmlFieldValue_t& v, double& out) {
  switch (v.valueType) {
    case abi::kValueTypeDouble:
      out = v.value.dVal;
      return true;
    case abi::kValueTypeUnsignedInt:
      out = static_cast<double>(v.value.uiVal);
      return true;
    case abi::kValueTypeUnsignedLong:
      out = static_cast<double>(v.value.ulVal);
      return true;
    case abi::kValueTypeUnsignedLongLong:
      out = static_cast<double>(v.value.ullVal);
      return true;
    case abi::kValueTypeSignedLongLong:
      out = static_cast<double>(v.value.sllVal);
      return true;
    case abi::kValueTypeSignedInt:
      out = static_cast<double>(v.value.siVal);
      return true;
    case abi::kValueTypeUnsignedShort:
      out = static_cast<double>(v.value.usVal);
      return true;
    default:
      return false;
  }
}

bool is_fatal_device_error(int rc) {
  return rc == abi::kErrorGpuIsLost || rc == abi::kErrorResetRequired ||
         rc == abi::kErrorUninitialized || rc == abi::kErrorDriverNotLoaded;
}

const char* scope_name(unsigned scope) {
  switch (scope) {
    case abi::kPowerScopeGpu:
      return "GPU";
    case abi::kPowerScopeModule:
      return "module";
    case abi::kPowerScopeMemory:
      return "memory";
    default:
      return "unknown";
  }
}

}  // namespace

NvmlGpu::NvmlGpu(std::shared_ptr<const NvmlLibrary> library, abi::nvmlDevice_t device,
                 unsigned index, unsigned nvml_index, std::string name, std::string uuid)
    : lib_(std::move(library)),
      api_(lib_->api()),
      device_(device),
      index_(index),
      nvml_index_(nvml_index),
      name_(std::move(name)),
      uuid_(std::move(uuid)) {}

std::string NvmlGpu::context(std::string_view what) const {
  return fmt::format("GPU {} ({}, NVML index {}): {}", index_, name_, nvml_index_, what);
}

void NvmlGpu::check(int nvml_return, std::string_view function, std::string_view what) const {
  if (nvml_return != abi::kSuccess) lib_->fail(nvml_return, function, context(what));
}

device::GpuArchitecture NvmlGpu::architecture() {
  const int cached = arch_.load(std::memory_order_acquire);
  if (cached != kArchUnresolved) return static_cast<device::GpuArchitecture>(cached);
  device::GpuArchitecture arch = device::GpuArchitecture::kUnknown;
  if (api_.device_get_architecture != nullptr) {
    unsigned raw = abi::kArchUnknown;
    const int rc = api_.device_get_architecture(device_, &raw);
    if (rc == abi::kSuccess) {
      arch = map_architecture(raw);
    } else if (rc != abi::kErrorNotSupported) {
      lib_->fail(rc, "nvmlDeviceGetArchitecture", context("reading the architecture"));
    }
  }
  arch_.store(static_cast<int>(arch), std::memory_order_release);
  return arch;
}

bool NvmlGpu::supports_energy_counter() {
  // Unknown counts as new: an unnamed chip is most likely newer than this code.
  const device::GpuArchitecture arch = architecture();
  return arch == device::GpuArchitecture::kUnknown ||
         static_cast<int>(arch) >= static_cast<int>(device::GpuArchitecture::kVolta);
}

Joules NvmlGpu::total_energy() {
  if (!supports_energy_counter()) {
    throw_error(ErrorCode::kNotSupported,
                context(fmt::format("{} GPUs have no energy counter (NVML has one from Volta on); "
                                    "integrate power readings instead",
                                    device::architecture_name(architecture()))));
  }
  constexpr std::string_view what = "reading the energy counter";
  require(api_.device_get_total_energy_consumption, "nvmlDeviceGetTotalEnergyConsumption", what);
  unsigned long long millijoules = 0;
  check(api_.device_get_total_energy_consumption(device_, &millijoules),
        "nvmlDeviceGetTotalEnergyConsumption", what);
  return from_millijoules(static_cast<double>(millijoules));
}

NvmlGpu::FieldReading NvmlGpu::read_field(unsigned field, unsigned scope) const {
  abi::nvmlFieldValue_t value{};
  value.fieldId = field;
  value.scopeId = scope;
  const int rc = api_.device_get_field_values(device_, 1, &value);
  if (rc != abi::kSuccess) return {rc, 0.0};
  if (value.nvmlReturn != abi::kSuccess) return {value.nvmlReturn, 0.0};
  double mw = 0.0;
  if (!field_value_to_double(value, mw)) {
    throw_error(ErrorCode::kUnknown,
                context(fmt::format("NVML field {} came back with unknown value type {}; update "
                                    "zeus for this driver",
                                    field, value.valueType)));
  }
  return {abi::kSuccess, mw};
}

Watts NvmlGpu::read_power_field(unsigned field, std::atomic<int>& scope, const char* what) {
  const auto fail = [&](int rc, unsigned s) {
    lib_->fail(
        rc, "nvmlDeviceGetFieldValues",
        context(fmt::format("reading {} power (field {}, {} scope)", what, field, scope_name(s))));
  };
  const int known = scope.load(std::memory_order_acquire);
  if (known != kUnresolved) {
    const FieldReading r = read_field(field, static_cast<unsigned>(known));
    if (r.nvml_return != abi::kSuccess) fail(r.nvml_return, static_cast<unsigned>(known));
    return from_milliwatts(r.milliwatts);
  }
  const FieldReading gpu = read_field(field, abi::kPowerScopeGpu);
  if (gpu.nvml_return == abi::kSuccess) {
    scope.store(static_cast<int>(abi::kPowerScopeGpu), std::memory_order_release);
    return from_milliwatts(gpu.milliwatts);
  }
  if (is_fatal_device_error(gpu.nvml_return)) fail(gpu.nvml_return, abi::kPowerScopeGpu);
  // Grace Hopper (C2C) superchips report power only for the whole module.
  const FieldReading module = read_field(field, abi::kPowerScopeModule);
  if (module.nvml_return != abi::kSuccess) fail(gpu.nvml_return, abi::kPowerScopeGpu);
  int expected = kUnresolved;
  if (scope.compare_exchange_strong(expected, static_cast<int>(abi::kPowerScopeModule))) {
    log::warn("{}",
              context(fmt::format("GPU-only {} power is not available ({}); reporting MODULE "
                                  "scope power instead, which includes the Grace CPU and memory",
                                  what, lib_->error_string(gpu.nvml_return))));
  }
  return from_milliwatts(module.milliwatts);
}

// Drivers before R535 do not know the power fields (185-192). On GPUs up to
// Turing, nvmlDeviceGetPowerUsage is the instantaneous board power, so it can
// stand in for field 186 there; on Ampere and newer it is a 1 s average and
// would be mislabelled, so there the field error stands.
Watts NvmlGpu::read_instant_power() {
  if (!instant_via_power_usage_.load(std::memory_order_acquire)) {
    try {
      return read_power_field(abi::kFieldPowerInstant, instant_scope_, "instant");
    } catch (const Error& e) {
      const bool field_unknown =
          e.code() == ErrorCode::kNotSupported || e.code() == ErrorCode::kInvalidArgument;
      const device::GpuArchitecture arch = architecture();
      const bool usage_is_instant =
          arch != device::GpuArchitecture::kUnknown &&
          static_cast<int>(arch) < static_cast<int>(device::GpuArchitecture::kAmpere);
      if (!field_unknown || !usage_is_instant || api_.device_get_power_usage == nullptr) throw;
      if (!instant_via_power_usage_.exchange(true)) {
        log::warn("{}", context("the driver does not report power fields (older than R535); "
                                "reading instant power through nvmlDeviceGetPowerUsage"));
      }
    }
  }
  unsigned milliwatts = 0;
  check(api_.device_get_power_usage(device_, &milliwatts), "nvmlDeviceGetPowerUsage",
        "reading instant power");
  return from_milliwatts(static_cast<double>(milliwatts));
}

Watts NvmlGpu::power(device::PowerDomain domain) {
  require(api_.device_get_field_values, "nvmlDeviceGetFieldValues", "reading power");
  switch (domain) {
    case device::PowerDomain::kDeviceInstant:
      return read_instant_power();
    case device::PowerDomain::kDeviceAverage:
      return read_power_field(abi::kFieldPowerAverage, average_scope_, "average");
    case device::PowerDomain::kMemoryAverage: {
      const FieldReading r = read_field(abi::kFieldPowerAverage, abi::kPowerScopeMemory);
      if (r.nvml_return != abi::kSuccess) {
        lib_->fail(r.nvml_return, "nvmlDeviceGetFieldValues",
                   context("reading memory power (field 185, memory scope)"));
      }
      if (r.milliwatts == 0.0 && !warned_zero_memory_power_.exchange(true)) {
        log::warn("{}", context("memory power reads 0 W; this GPU probably does not measure its "
                                "memory power separately (known to work on H100 HBM3)"));
      }
      return from_milliwatts(r.milliwatts);
    }
  }
  throw_error(ErrorCode::kInvalidArgument, context("unknown power domain"));
}

bool NvmlGpu::read_powers(std::span<const device::PowerDomain> domains, std::span<Watts> out) {
  // Only once each domain's field and scope are known (power() resolved them
  // on its first read) and for the few domains there are.
  constexpr std::size_t kMaxFields = 3;
  if (api_.device_get_field_values == nullptr || domains.size() < 2 ||
      domains.size() > kMaxFields || out.size() < domains.size()) {
    return false;
  }
  std::array<abi::nvmlFieldValue_t, kMaxFields> values{};
  for (std::size_t i = 0; i < domains.size(); ++i) {
    int scope = kUnresolved;
    unsigned field = abi::kFieldPowerAverage;
    switch (domains[i]) {
      case device::PowerDomain::kDeviceInstant:
        if (instant_via_power_usage_.load(std::memory_order_acquire)) return false;
        field = abi::kFieldPowerInstant;
        scope = instant_scope_.load(std::memory_order_acquire);
        break;
      case device::PowerDomain::kDeviceAverage:
        scope = average_scope_.load(std::memory_order_acquire);
        break;
      case device::PowerDomain::kMemoryAverage:
        scope = static_cast<int>(abi::kPowerScopeMemory);
        break;
    }
    if (scope == kUnresolved) return false;
    values[i].fieldId = field;
    values[i].scopeId = static_cast<unsigned>(scope);
  }
  if (api_.device_get_field_values(device_, static_cast<int>(domains.size()), values.data()) !=
      abi::kSuccess) {
    return false;
  }
  for (std::size_t i = 0; i < domains.size(); ++i) {
    double mw = 0.0;
    if (values[i].nvmlReturn != abi::kSuccess || !field_value_to_double(values[i], mw)) {
      return false;
    }
    if (domains[i] == device::PowerDomain::kMemoryAverage && mw == 0.0 &&
        !warned_zero_memory_power_.load(std::memory_order_acquire)) {
      return false;  // power() warns about it, once
    }
    out[i] = from_milliwatts(mw);
  }
  return true;
}

device::PowerLimitConstraints NvmlGpu::power_limit_constraints() {
  constexpr std::string_view what = "reading the power limit range";
  require(api_.device_get_power_management_limit_constraints,
          "nvmlDeviceGetPowerManagementLimitConstraints", what);
  unsigned min_mw = 0;
  unsigned max_mw = 0;
  check(api_.device_get_power_management_limit_constraints(device_, &min_mw, &max_mw),
        "nvmlDeviceGetPowerManagementLimitConstraints", what);
  return {Milliwatts(min_mw), Milliwatts(max_mw)};
}

Milliwatts NvmlGpu::power_limit() {
  constexpr std::string_view what = "reading the power limit";
  require(api_.device_get_power_management_limit, "nvmlDeviceGetPowerManagementLimit", what);
  unsigned mw = 0;
  check(api_.device_get_power_management_limit(device_, &mw), "nvmlDeviceGetPowerManagementLimit",
        what);
  return Milliwatts(mw);
}

Milliwatts NvmlGpu::default_power_limit() {
  constexpr std::string_view what = "reading the default power limit";
  require(api_.device_get_power_management_default_limit,
          "nvmlDeviceGetPowerManagementDefaultLimit", what);
  unsigned mw = 0;
  check(api_.device_get_power_management_default_limit(device_, &mw),
        "nvmlDeviceGetPowerManagementDefaultLimit", what);
  return Milliwatts(mw);
}

void NvmlGpu::set_power_limit(Milliwatts limit) {
  const std::string what = fmt::format("setting the power limit to {} W", to_watts(limit).value());
  require(api_.device_set_power_management_limit, "nvmlDeviceSetPowerManagementLimit", what);
  const device::PowerLimitConstraints range = power_limit_constraints();
  if (limit < range.min || limit > range.max) {
    throw_error(ErrorCode::kInvalidArgument,
                context(fmt::format("power limit {} W is outside the GPU's range [{}, {}] W",
                                    to_watts(limit).value(), to_watts(range.min).value(),
                                    to_watts(range.max).value())));
  }
  // Setting needs privileges and is slow; skip it when nothing would change.
  if (power_limit() == limit) {
    log::debug("{}",
               context(fmt::format("power limit already {} mW; not setting it", limit.value())));
    return;
  }
  check(api_.device_set_power_management_limit(device_, static_cast<unsigned>(limit.value())),
        "nvmlDeviceSetPowerManagementLimit", what);
}

bool NvmlGpu::persistence_mode() {
  constexpr std::string_view what = "reading persistence mode";
  require(api_.device_get_persistence_mode, "nvmlDeviceGetPersistenceMode", what);
  int mode = abi::kFeatureDisabled;
  check(api_.device_get_persistence_mode(device_, &mode), "nvmlDeviceGetPersistenceMode", what);
  return mode == abi::kFeatureEnabled;
}

void NvmlGpu::set_persistence_mode(bool enabled) {
  const std::string what = fmt::format("turning persistence mode {}", enabled ? "on" : "off");
  require(api_.device_set_persistence_mode, "nvmlDeviceSetPersistenceMode", what);
  if (persistence_mode() == enabled) return;
  check(api_.device_set_persistence_mode(device_,
                                         enabled ? abi::kFeatureEnabled : abi::kFeatureDisabled),
        "nvmlDeviceSetPersistenceMode", what);
}

namespace {

// Calls an NVML "fill this array" function, growing the buffer on
// INSUFFICIENT_SIZE (NVML then reports the size it needs in *count).
template <class Call>
std::vector<Megahertz> read_clock_list(const NvmlLibrary& lib, const char* function,
                                       const std::string& ctx, Call call,
                                       std::string_view not_found_hint = {}) {
  unsigned capacity = 128;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::vector<unsigned> buffer(capacity);
    unsigned count = capacity;
    const int rc = call(&count, buffer.data());
    if (rc == abi::kSuccess) {
      std::vector<Megahertz> out;
      out.reserve(count);
      for (unsigned i = 0; i < count && i < capacity; ++i) out.emplace_back(buffer[i]);
      return out;
    }
    if (rc == abi::kErrorInsufficientSize) {
      capacity = count > capacity ? count : capacity * 2;
      continue;
    }
    if (rc == abi::kErrorNotFound && !not_found_hint.empty()) {
      throw_error(ErrorCode::kInvalidArgument, std::string(not_found_hint));
    }
    lib.fail(rc, function, ctx);
  }
  throw_error(ErrorCode::kInternal,
              fmt::format("{}: {} kept asking for a bigger buffer", ctx, function));
}

}  // namespace

std::vector<Megahertz> NvmlGpu::supported_memory_clocks() {
  constexpr std::string_view what = "listing supported memory clocks";
  require(api_.device_get_supported_memory_clocks, "nvmlDeviceGetSupportedMemoryClocks", what);
  return read_clock_list(*lib_, "nvmlDeviceGetSupportedMemoryClocks", context(what),
                         [&](unsigned* count, unsigned* clocks) {
                           return api_.device_get_supported_memory_clocks(device_, count, clocks);
                         });
}

std::vector<Megahertz> NvmlGpu::supported_graphics_clocks(Megahertz memory_clock) {
  const std::string what =
      fmt::format("listing supported graphics clocks at memory clock {} MHz", memory_clock.value());
  require(api_.device_get_supported_graphics_clocks, "nvmlDeviceGetSupportedGraphicsClocks", what);
  const unsigned mem = to_nvml_mhz(memory_clock, "memory clock");
  return read_clock_list(
      *lib_, "nvmlDeviceGetSupportedGraphicsClocks", context(what),
      [&](unsigned* count, unsigned* clocks) {
        return api_.device_get_supported_graphics_clocks(device_, mem, count, clocks);
      },
      context(fmt::format("memory clock {} MHz is not one of the GPU's supported memory clocks "
                          "(see supported_memory_clocks())",
                          memory_clock.value())));
}

unsigned NvmlGpu::to_nvml_mhz(Megahertz mhz, const char* what) const {
  if (mhz.value() < 0 || mhz.value() > std::numeric_limits<int>::max()) {
    throw_error(ErrorCode::kInvalidArgument,
                context(fmt::format("{} {} MHz is out of range", what, mhz.value())));
  }
  return static_cast<unsigned>(mhz.value());
}

void NvmlGpu::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  const std::string what =
      fmt::format("locking the graphics clock to [{}, {}] MHz", min.value(), max.value());
  require(api_.device_set_gpu_locked_clocks, "nvmlDeviceSetGpuLockedClocks", what);
  const unsigned lo = to_nvml_mhz(min, "minimum graphics clock");
  const unsigned hi = to_nvml_mhz(max, "maximum graphics clock");
  if (lo > hi) {
    throw_error(ErrorCode::kInvalidArgument,
                context(what) + ": the minimum clock is above the maximum clock");
  }
  check(api_.device_set_gpu_locked_clocks(device_, lo, hi), "nvmlDeviceSetGpuLockedClocks", what);
}

void NvmlGpu::reset_gpu_locked_clocks() {
  constexpr std::string_view what = "resetting the locked graphics clock";
  require(api_.device_reset_gpu_locked_clocks, "nvmlDeviceResetGpuLockedClocks", what);
  check(api_.device_reset_gpu_locked_clocks(device_), "nvmlDeviceResetGpuLockedClocks", what);
}

void NvmlGpu::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  const std::string what =
      fmt::format("locking the memory clock to [{}, {}] MHz", min.value(), max.value());
  require(api_.device_set_memory_locked_clocks, "nvmlDeviceSetMemoryLockedClocks", what);
  const unsigned lo = to_nvml_mhz(min, "minimum memory clock");
  const unsigned hi = to_nvml_mhz(max, "maximum memory clock");
  if (lo > hi) {
    throw_error(ErrorCode::kInvalidArgument,
                context(what) + ": the minimum clock is above the maximum clock");
  }
  check(api_.device_set_memory_locked_clocks(device_, lo, hi), "nvmlDeviceSetMemoryLockedClocks",
        what);
}

void NvmlGpu::reset_memory_locked_clocks() {
  constexpr std::string_view what = "resetting the locked memory clock";
  require(api_.device_reset_memory_locked_clocks, "nvmlDeviceResetMemoryLockedClocks", what);
  check(api_.device_reset_memory_locked_clocks(device_), "nvmlDeviceResetMemoryLockedClocks", what);
}

int NvmlGpu::read_temperature(int& celsius, const char*& function) const {
  if (api_.device_get_temperature_v != nullptr) {
    function = "nvmlDeviceGetTemperatureV";
    abi::nvmlTemperature_v1_t t{};
    t.version = abi::kTemperatureV1Version;
    t.sensorType = abi::kTemperatureGpu;
    const int rc = api_.device_get_temperature_v(device_, &t);
    celsius = t.temperature;
    return rc;
  }
  function = "nvmlDeviceGetTemperature";
  if (api_.device_get_temperature == nullptr) return abi::kErrorFunctionNotFound;
  unsigned value = 0;
  const int rc = api_.device_get_temperature(device_, abi::kTemperatureGpu, &value);
  celsius = static_cast<int>(value);
  return rc;
}

Celsius NvmlGpu::temperature() {
  constexpr std::string_view what = "reading the temperature";
  if (api_.device_get_temperature_v == nullptr) {
    require(api_.device_get_temperature, "nvmlDeviceGetTemperature", what);
  }
  int celsius = 0;
  const char* function = "nvmlDeviceGetTemperature";
  check(read_temperature(celsius, function), function, what);
  return Celsius(static_cast<double>(celsius));
}

std::string NvmlGpu::pci_bus_id() {
  constexpr std::string_view what = "reading the PCI address";
  require(api_.device_get_pci_info, "nvmlDeviceGetPciInfo_v3", what);
  abi::nvmlPciInfo_t info{};
  check(api_.device_get_pci_info(device_, &info), "nvmlDeviceGetPciInfo_v3", what);
  info.busId[sizeof(info.busId) - 1] = '\0';  // never trust a driver's terminator
  return info.busId;
}

int NvmlGpu::minor_number() {
  constexpr std::string_view what = "reading the device minor number";
  require(api_.device_get_minor_number, "nvmlDeviceGetMinorNumber", what);
  unsigned minor = 0;
  check(api_.device_get_minor_number(device_, &minor), "nvmlDeviceGetMinorNumber", what);
  return static_cast<int>(minor);
}

// The public bit names are NVML's bits; a renumbering would show here.
static_assert(device::clock_event::kGpuIdle == abi::kClocksEventGpuIdle);
static_assert(device::clock_event::kApplicationsClocksSetting ==
              abi::kClocksEventApplicationsClocksSetting);
static_assert(device::clock_event::kSwPowerCap == abi::kClocksEventSwPowerCap);
static_assert(device::clock_event::kHwSlowdown == abi::kClocksEventHwSlowdown);
static_assert(device::clock_event::kSyncBoost == abi::kClocksEventSyncBoost);
static_assert(device::clock_event::kSwThermalSlowdown == abi::kClocksEventSwThermalSlowdown);
static_assert(device::clock_event::kHwThermalSlowdown == abi::kClocksEventHwThermalSlowdown);
static_assert(device::clock_event::kHwPowerBrakeSlowdown == abi::kClocksEventHwPowerBrakeSlowdown);
static_assert(device::clock_event::kDisplayClockSetting == abi::kClocksEventDisplayClockSetting);

bool NvmlGpu::telemetry_read(int nvml_return, const char* function, std::string_view what) const {
  if (nvml_return == abi::kSuccess) return true;
  // NOT_SUPPORTED: this GPU (or its mode: utilization under MIG) has no such
  // value. FUNCTION_NOT_FOUND: read_temperature found no entry point.
  if (nvml_return == abi::kErrorNotSupported || nvml_return == abi::kErrorFunctionNotFound) {
    return false;
  }
  lib_->fail(nvml_return, function, context(what));
}

// Six or seven driver calls, none of which allocates on success or
// NOT_SUPPORTED: zeusd renders this on every Prometheus scrape.
device::GpuTelemetry NvmlGpu::telemetry() {
  device::GpuTelemetry t;
  if (api_.device_get_utilization_rates != nullptr) {
    abi::nvmlUtilization_t u{};
    if (telemetry_read(api_.device_get_utilization_rates(device_, &u),
                       "nvmlDeviceGetUtilizationRates", "reading utilization")) {
      t.gpu_utilization = device::Percent(u.gpu);
      t.memory_utilization = device::Percent(u.memory);
    }
  }
  if (api_.device_get_clock_info != nullptr) {
    unsigned mhz = 0;
    if (telemetry_read(api_.device_get_clock_info(device_, abi::kClockSm, &mhz),
                       "nvmlDeviceGetClockInfo", "reading the SM clock")) {
      t.sm_clock = Megahertz(mhz);
    }
    if (telemetry_read(api_.device_get_clock_info(device_, abi::kClockMem, &mhz),
                       "nvmlDeviceGetClockInfo", "reading the memory clock")) {
      t.memory_clock = Megahertz(mhz);
    }
  }
  // R535 renamed the call; older drivers export only the old name (same bits).
  const bool new_name = api_.device_get_current_clocks_event_reasons != nullptr;
  const auto reasons_fn = new_name ? api_.device_get_current_clocks_event_reasons
                                   : api_.device_get_current_clocks_throttle_reasons;
  if (reasons_fn != nullptr) {
    unsigned long long mask = 0;
    if (telemetry_read(reasons_fn(device_, &mask),
                       new_name ? "nvmlDeviceGetCurrentClocksEventReasons"
                                : "nvmlDeviceGetCurrentClocksThrottleReasons",
                       "reading the clock event reasons")) {
      t.clock_event_reasons = static_cast<std::uint64_t>(mask);
    }
  }
  if (api_.device_get_memory_info != nullptr) {
    abi::nvmlMemory_t m{};
    if (telemetry_read(api_.device_get_memory_info(device_, &m), "nvmlDeviceGetMemoryInfo",
                       "reading memory usage")) {
      t.memory_used = device::Bytes(static_cast<std::int64_t>(m.used));
      t.memory_free = device::Bytes(static_cast<std::int64_t>(m.free));
      t.memory_total = device::Bytes(static_cast<std::int64_t>(m.total));
    }
  }
  int celsius = 0;
  const char* function = "nvmlDeviceGetTemperature";
  if (telemetry_read(read_temperature(celsius, function), function, "reading the temperature")) {
    t.temperature = Celsius(static_cast<double>(celsius));
  }
  return t;
}

}  // namespace zeus::nvml_internal
