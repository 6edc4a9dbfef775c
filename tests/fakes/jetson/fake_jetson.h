// Fake sysfs trees of Jetson boards' INA3221 power monitors, one per layout
// the L4T kernels use (zeus/device/jetson.h), in a temporary directory.
// Header-only; include as "fakes/jetson/fake_jetson.h".
//
//   FakeJetson board(FakeJetson::Layout::kOrinHwmon);
//   board.root()                        // pass as DiscoveryOptions::jetson_sysfs_root
//                                       // or ZEUS_JETSON_SYSFS_ROOT
//   board.set_power(SocRail::kTotal, Watts(7.5));  // rewrites the rail's files
//
// Rail names are the boards' own (from NVIDIA's L4T documentation), including
// rails no kind matches (VDD_SOC, CV, SYS5V), which discovery must skip.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "support/temp_dir.h"
#include "zeus/device/jetson.h"

namespace zeus::testing {

class FakeJetson {
 public:
  enum class Layout {
    kNanoIioPower,          // ina3221x, iio:device0, rail_name_k + in_power<k>_input (mW)
    kTx2IioVoltageCurrent,  // ina3221x, iio:device0, in_voltage<k> (mV) x in_current<k> (mA)
    kXavierHwmonFlat,       // ina3221, <dev>/hwmon3/in<k>_label (older kernels), no total rail
    kOrinHwmon,             // ina3221, <dev>/hwmon/hwmon1/in<k>_label, in<k> x curr<k>
  };

  explicit FakeJetson(Layout layout) : layout_(layout), dir_("zeus_fake_jetson") {
    namespace fs = std::filesystem;
    const fs::path drivers = fs::path(dir_.path()) / "bus" / "i2c" / "drivers";
    switch (layout) {
      case Layout::kNanoIioPower:
        rails_dir_ = drivers / "ina3221x" / "6-0040" / "iio:device0";
        add("0", "POM_5V_IN", device::SocRail::kTotal);
        add("1", "POM_5V_GPU", device::SocRail::kGpu);
        add("2", "POM_5V_CPU", device::SocRail::kCpu);
        break;
      case Layout::kTx2IioVoltageCurrent:
        rails_dir_ = drivers / "ina3221x" / "0-0041" / "iio:device1";
        add("0", "VDD_SYS_GPU", device::SocRail::kGpu);
        add("1", "VDD_SYS_SOC", std::nullopt);
        add("2", "VDD_SYS_CPU", device::SocRail::kCpu);
        add("3", "VDD_IN", device::SocRail::kTotal);
        break;
      case Layout::kXavierHwmonFlat:
        rails_dir_ = drivers / "ina3221" / "1-0040" / "hwmon3";
        add("1", "GPU", device::SocRail::kGpu);
        add("2", "CPU", device::SocRail::kCpu);
        add("3", "SOC", std::nullopt);
        break;
      case Layout::kOrinHwmon:
        rails_dir_ = drivers / "ina3221" / "1-0040" / "hwmon" / "hwmon1";
        add("1", "VDD_IN", device::SocRail::kTotal);
        add("2", "VDD_CPU_GPU_CV", device::SocRail::kCpu);
        add("3", "VDD_SOC", std::nullopt);
        break;
    }
    for (const auto& [rail, k] : index_)
      set_power(rail, Watts(1.0 + static_cast<double>(rail_order(rail))));
  }

  const std::string& root() const { return dir_.path(); }
  const std::filesystem::path& rails_dir() const { return rails_dir_; }

  // Writes the rail's reading: milliwatts where the layout has a power file,
  // else 5000 mV and the current that gives `power`.
  void set_power(device::SocRail rail, Watts power) {
    const std::string& k = index_.at(rail);
    const double mw = power.value() * 1000.0;
    switch (layout_) {
      case Layout::kNanoIioPower:
        write("in_power" + k + "_input", std::to_string(static_cast<long>(mw)));
        break;
      case Layout::kTx2IioVoltageCurrent:
        write("in_voltage" + k + "_input", "5000");
        write("in_current" + k + "_input", std::to_string(static_cast<long>(mw / 5.0)));
        break;
      case Layout::kXavierHwmonFlat:
      case Layout::kOrinHwmon:
        write("in" + k + "_input", "5000");
        write("curr" + k + "_input", std::to_string(static_cast<long>(mw / 5.0)));
        break;
    }
  }

  // Replaces a rail's reading with text that is not a number.
  void corrupt(device::SocRail rail) {
    const std::string& k = index_.at(rail);
    write(layout_ == Layout::kNanoIioPower           ? "in_power" + k + "_input"
          : layout_ == Layout::kTx2IioVoltageCurrent ? "in_current" + k + "_input"
                                                     : "curr" + k + "_input",
          "n/a");
  }

 private:
  static int rail_order(device::SocRail rail) { return static_cast<int>(rail); }

  void add(const std::string& k, const std::string& label, std::optional<device::SocRail> rail) {
    std::filesystem::create_directories(rails_dir_);
    const bool hwmon = layout_ == Layout::kXavierHwmonFlat || layout_ == Layout::kOrinHwmon;
    write(hwmon ? "in" + k + "_label" : "rail_name_" + k, label + "\n");
    if (rail) {
      index_[*rail] = k;
    } else {  // a rail no kind matches still has readings
      write(hwmon ? "in" + k + "_input" : "in_voltage" + k + "_input", "5000");
    }
  }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(rails_dir_ / name, std::ios::trunc) << text;
  }

  Layout layout_;
  TempDir dir_;
  std::filesystem::path rails_dir_;
  std::map<device::SocRail, std::string> index_;
};

}  // namespace zeus::testing
