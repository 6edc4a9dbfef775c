#include "zeus/device/sim_gpu.h"
#include "device/sim_gpu_model_json.h"

#include <gtest/gtest.h>

#include <cmath>

#include "zeus/device/devices.h"
#include "zeus/util/error.h"

namespace zeus {
namespace {

using namespace zeus::literals;

TEST(SimGpuModel, SteadyStateFollowsTheCubicPowerLaw) {
  device::SimGpuModel m;
  EXPECT_DOUBLE_EQ(m.clock_fraction_at(300000_mW), 1.0);  // cap above busy power
  EXPECT_DOUBLE_EQ(m.power_at(300000_mW).value(), m.busy_power.value());
  const double x =
      std::cbrt((170.0 - m.idle_power.value()) / (m.busy_power.value() - m.idle_power.value()));
  EXPECT_NEAR(m.clock_fraction_at(170000_mW), x, 1e-12);
  EXPECT_NEAR(m.power_at(170000_mW).value(), 170.0, 1e-9);
  EXPECT_LT(m.throughput_at(170000_mW), m.throughput_at(300000_mW));
  // Energy per unit of work has an interior minimum.
  auto epw = [&](int w) {
    return m.power_at(Milliwatts(w * 1000)).value() / m.throughput_at(Milliwatts(w * 1000));
  };
  EXPECT_LT(epw(140), epw(300));
  EXPECT_LT(epw(140), epw(100));
}

TEST(SimGpuModel, JsonFilesAreValidatedField_By_Field) {
  const auto m = device_internal::parse_sim_gpu_model(
      R"({"name": "Old", "architecture": "pascal", "energy_counter": false, "busy_power_w": 250})",
      "model.json");
  EXPECT_EQ(m.name, "Old");
  EXPECT_EQ(m.architecture, device::GpuArchitecture::kPascal);
  EXPECT_FALSE(m.energy_counter);
  auto expect_bad = [](const char* text, const char* needle) {
    try {
      device_internal::parse_sim_gpu_model(text, "m.json");
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
    }
  };
  expect_bad(R"({"busy_powr_w": 1})", "busy_powr_w");
  expect_bad(R"({"busy_power_w": "a lot"})", "busy_power_w");
  expect_bad(R"({"idle_power_w": 300})", "idle_power_w");
  expect_bad(R"({"architecture": "fermi2"})", "fermi2");
  expect_bad(R"({"load": 2})", "load");
  expect_bad("{", "JSON");
  // Finite and physically sensible, so nothing computed later overflows.
  expect_bad(R"({"power_limit_max_w": 1e308, "power_limit_default_w": 1e308})",
             "power_limit_max_w");
  expect_bad(R"({"busy_power_w": 1e400})", "too large");
  expect_bad(R"({"max_graphics_clock_mhz": 4294967297})", "max_graphics_clock_mhz");
  expect_bad(R"({"power_limit_step_w": 1e-9})", "power_limit_step_w");
  expect_bad(R"({"memory_clocks_mhz": []})", "memory_clocks_mhz");
  expect_bad(R"({"memory_total_mib": 0})", "memory_total_mib");
  EXPECT_EQ(device_internal::parse_sim_gpu_model(R"({"memory_total_mib": 81920})", "m.json")
                .memory_total.value(),
            std::int64_t{81920} * 1048576);
}

TEST(SimGpu, HasNoPciAddress) {
  ManualClock clock;
  device::SimGpu gpu(device::SimGpuModel{}, clock);
  try {
    gpu.pci_bus_id();
    ADD_FAILURE() << "a simulated GPU sits in no PCI slot";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  }
}

// Telemetry follows the model's state, so tests of its consumers can see it move.
TEST(SimGpu, TelemetryFollowsLoadPowerLimitAndLock) {
  ManualClock clock;
  device::SimGpuModel model;
  model.memory_clocks = {Megahertz(877), Megahertz(1215)};
  device::SimGpu gpu(model, clock);
  const device::GpuTelemetry full = gpu.telemetry();
  ASSERT_TRUE(full.gpu_utilization && full.memory_utilization && full.sm_clock &&
              full.memory_clock && full.clock_event_reasons && full.memory_used &&
              full.memory_free && full.memory_total && full.temperature);
  EXPECT_DOUBLE_EQ(full.gpu_utilization->value(), 100.0);
  EXPECT_NEAR(full.memory_utilization->value(), 10.0, 1e-9);  // 1 - compute-bound 0.9
  EXPECT_EQ(full.sm_clock->value(), 1410);                    // uncapped: the maximum
  EXPECT_EQ(full.memory_clock->value(), 1215);                // the highest supported
  EXPECT_EQ(*full.clock_event_reasons, 0u);
  EXPECT_EQ(full.memory_total->value(), model.memory_total.value());
  EXPECT_EQ(full.memory_used->value() + full.memory_free->value(), model.memory_total.value());
  EXPECT_DOUBLE_EQ(full.temperature->value(), gpu.temperature().value());

  gpu.set_power_limit(170000_mW);  // below busy power: the cap holds the clock down
  const device::GpuTelemetry capped = gpu.telemetry();
  EXPECT_EQ(capped.sm_clock->value(), std::llround(model.clock_fraction_at(170000_mW) * 1410.0));
  EXPECT_LT(capped.sm_clock->value(), 1410);
  EXPECT_EQ(*capped.clock_event_reasons, device::clock_event::kSwPowerCap);
  EXPECT_LT(capped.temperature->value(), full.temperature->value());

  gpu.reset_power_limit();
  gpu.set_gpu_locked_clocks(Megahertz(210), Megahertz(900));
  const device::GpuTelemetry locked = gpu.telemetry();
  EXPECT_EQ(locked.sm_clock->value(), 900);
  EXPECT_EQ(*locked.clock_event_reasons, device::clock_event::kApplicationsClocksSetting);
  gpu.reset_gpu_locked_clocks();

  gpu.set_load(0.0);
  const device::GpuTelemetry idle = gpu.telemetry();
  EXPECT_DOUBLE_EQ(idle.gpu_utilization->value(), 0.0);
  EXPECT_EQ(idle.sm_clock->value(), 210);
  EXPECT_EQ(*idle.clock_event_reasons, device::clock_event::kGpuIdle);
  EXPECT_LT(idle.memory_used->value(), full.memory_used->value());

  gpu.fail_as_lost();
  try {
    gpu.telemetry();
    ADD_FAILURE() << "a lost GPU has no telemetry";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kGpuLost);
  }
}

TEST(SimGpu, EnergyCounterIntegratesPowerOverTheInjectedClock) {
  ManualClock clock;
  device::SimGpu gpu(device::SimGpuModel{}, clock);
  const Joules e0 = gpu.total_energy();
  clock.advance(Seconds(2));
  gpu.set_load(0.5);
  clock.advance(Seconds(1));
  const device::SimGpuModel& m = gpu.model();
  const double busy = m.busy_power.value();
  const double half = m.idle_power.value() + 0.5 * (busy - m.idle_power.value());
  EXPECT_NEAR((gpu.total_energy() - e0).value(), 2 * busy + half, 1e-9);
  EXPECT_NEAR(gpu.power(device::PowerDomain::kDeviceInstant).value(), half, 1e-9);
  // The 1 s average spans exactly the last (half-load) second.
  EXPECT_NEAR(gpu.power(device::PowerDomain::kDeviceAverage).value(), half, 1e-9);
  clock.advance(Seconds(0.5));
  gpu.set_load(1.0);
  clock.advance(Seconds(0.5));
  EXPECT_NEAR(gpu.power(device::PowerDomain::kDeviceAverage).value(), (half + busy) / 2, 1e-9);
  EXPECT_NEAR(gpu.power(device::PowerDomain::kMemoryAverage).value(),
              busy * m.memory_power_fraction, 1e-9);
}

TEST(SimGpu, PowerLimitSlowsExecutionAndSavesEnergyPerWork) {
  ManualClock clock;
  device::SimGpu gpu(device::SimGpuModel{}, clock);
  gpu.set_load(0.0);
  const Joules e0 = gpu.true_energy();
  const Seconds fast = gpu.execute(100.0);
  const Joules fast_energy = gpu.true_energy() - e0;
  gpu.set_power_limit(150000_mW);
  EXPECT_EQ(gpu.power_limit(), 150000_mW);
  const Joules e1 = gpu.true_energy();
  const Seconds slow = gpu.execute(100.0);
  const Joules slow_energy = gpu.true_energy() - e1;
  EXPECT_GT(slow, fast);
  EXPECT_LT(slow_energy, fast_energy);
  EXPECT_DOUBLE_EQ(gpu.load(), 0.0);  // execute() restores the load
  const device::SimGpuModel& m = gpu.model();
  EXPECT_NEAR(slow.count(), 100.0 / m.throughput_at(150000_mW), 1e-9);
  EXPECT_NEAR(slow_energy.value(), m.power_at(150000_mW).value() * slow.count(), 1e-6);
}

TEST(SimGpu, SettingsAreValidated) {
  ManualClock clock;
  device::SimGpu gpu(device::SimGpuModel{}, clock);
  EXPECT_THROW(gpu.set_power_limit(99000_mW), Error);
  EXPECT_THROW(gpu.set_power_limit(301000_mW), Error);
  gpu.set_power_limit(212345_mW);
  EXPECT_EQ(gpu.power_limit(), 212000_mW);  // 1 W grid
  gpu.reset_power_limit();
  EXPECT_EQ(gpu.power_limit(), 300000_mW);
  EXPECT_THROW(gpu.set_gpu_locked_clocks(1000_MHz, 900_MHz), Error);
  EXPECT_THROW(gpu.set_gpu_locked_clocks(100_MHz, 900_MHz), Error);
  gpu.set_gpu_locked_clocks(210_MHz, 705_MHz);
  const double c = gpu.model().compute_bound_fraction;
  EXPECT_NEAR(gpu.throughput(), gpu.model().peak_throughput / ((1 - c) + c / 0.5), 1e-9);
  gpu.reset_gpu_locked_clocks();
  EXPECT_EQ(gpu.supported_memory_clocks(), std::vector<Megahertz>{1215_MHz});
  EXPECT_EQ(gpu.supported_graphics_clocks(1215_MHz).front(), 1410_MHz);
  EXPECT_THROW(gpu.supported_graphics_clocks(999_MHz), Error);
  EXPECT_FALSE(gpu.persistence_mode());
  gpu.set_persistence_mode(true);
  EXPECT_TRUE(gpu.persistence_mode());
}

TEST(SimGpu, PreVoltaModelHasNoCounterAndCounterStepsQuantize) {
  ManualClock clock(Seconds(10.0));
  device::SimGpuModel old;
  old.energy_counter = false;
  device::SimGpu a(old, clock);
  EXPECT_FALSE(a.supports_energy_counter());
  try {
    a.total_energy();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNotSupported);
  }
  device::SimGpuModel stepped;
  stepped.counter_update_period = Seconds(0.1);
  device::SimGpu b(stepped, clock);
  const Joules e0 = b.total_energy();
  clock.advance(Seconds(0.05));
  EXPECT_DOUBLE_EQ((b.total_energy() - e0).value(), 0.0);
  clock.advance(Seconds(0.06));
  EXPECT_NEAR((b.total_energy() - e0).value(), 0.1 * stepped.busy_power.value(), 1e-9);
}

TEST(SimGpu, LostGpuFailsEveryCall) {
  ManualClock clock;
  device::SimGpu gpu(device::SimGpuModel{}, clock);
  gpu.fail_as_lost();
  try {
    gpu.power(device::PowerDomain::kDeviceInstant);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kGpuLost);
  }
  EXPECT_THROW(gpu.set_power_limit(200000_mW), Error);
}

TEST(Discovery, SimBackendCountAndModelComeFromOptions) {
  device::DiscoveryOptions o;
  o.gpu_backend = "sim";
  o.sim_gpus = 3;
  o.cpus = false;
  const auto inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "sim");
  ASSERT_EQ(inv.gpus.size(), 3u);
  EXPECT_NE(inv.gpus[0]->uuid(), inv.gpus[1]->uuid());
  o.gpu_backend = "quantum";
  try {
    device::discover_devices(o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("auto, nvml, amdsmi, sim, zeusd or none"),
              std::string::npos);
  }
  o.gpu_backend = "none";
  EXPECT_TRUE(device::discover_devices(o).gpus.empty());
  o.gpu_backend = "sim";
  o.sim_gpus = -1;
  EXPECT_THROW(device::discover_devices(o), Error);
  o.sim_gpus = 1;
  o.sim_model_path = "/nonexistent/model.json";
  EXPECT_THROW(device::discover_devices(o), Error);
}

TEST(Discovery, MissingDriverIsANoteNotAnError) {
  device::DiscoveryOptions o;
  o.gpu_backend = "auto";
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.cpus = false;
  const auto inv = device::discover_devices(o);
  EXPECT_EQ(inv.gpu_backend, "none");
  ASSERT_FALSE(inv.notes.empty());
  EXPECT_NE(inv.notes[0].find("no NVIDIA driver found"), std::string::npos);
  o.gpu_backend = "nvml";  // asked for explicitly: an error
  EXPECT_THROW(device::discover_devices(o), Error);
}

}  // namespace
}  // namespace zeus
