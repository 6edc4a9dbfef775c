// Scripting the fake libamd_smi.so.<ABI> from tests.
//
// The fakes (tests/fakes/amdsmi/fake_amdsmi.cc, built once per ABI major 24,
// 25, 26) are loaded by the AMD backend through its ordinary search and dlopen
// path. FakeAmdSmi opens the same file (fakes/common/fake_library.h) and
// calls its fakeAmdsmi* control functions. Keep a FakeAmdSmi alive while you
// script the fake: it also keeps the library loaded, so state survives the
// backend's dlclose.
//
// Point the backend at a fake with AmdSmiOptions::amdsmi_lib_dir =
// fake.dir() (the AMDSMI_LIB_DIR search) or library_path = fake.path().
//
// Defaults after reset(): 2 GPUs "AMD Instinct MI300X", HIP order = socket
// order, UUIDs xxxxxxxx-... and HIP UUIDs GPU-abc000000000000<i>, energy
// (i+1)*1e6 counts at 15.3 uJ per count, current power 300 W and average
// power N/A, power caps [200, 750] W with default and current 750 W, graphics
// levels {500, 1300, 2100} MHz and memory levels {900, 1300} MHz (limits at
// the full range, performance level auto), hotspot 55 C, no processes, not
// initialized, library version 24.7.1.0 / 25.25.3.0 / 26.3.0 by ABI.
//
// Variants: FakeAmdSmi(26, "-noproc") is ABI 26 without
// amdsmi_get_gpu_process_list (an older or stripped library).
//
// Thread-safety: the fake's functions are thread-safe; FakeAmdSmi itself is
// immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "../common/fake_library.h"

namespace zeus::testing {

namespace amdsmi_status {
inline constexpr unsigned kSuccess = 0;
inline constexpr unsigned kInval = 1;
inline constexpr unsigned kNotSupported = 2;
inline constexpr unsigned kNoPerm = 10;
inline constexpr unsigned kOutOfResources = 15;
inline constexpr unsigned kNotFound = 31;
inline constexpr unsigned kDriverNotLoaded = 34;
}  // namespace amdsmi_status

inline constexpr unsigned kAmdsmiNa = 0xFFFFFFFFU;  // a power reading the driver lacks

inline std::string fake_amdsmi_root() {
#if defined(ZEUS_FAKE_AMDSMI_DIR)
  return ZEUS_FAKE_AMDSMI_DIR;
#elif defined(ZEUS_BINARY_DIR)
  return ZEUS_BINARY_DIR "/tests/fakes/amdsmi";
#else
  return "tests/fakes/amdsmi";
#endif
}

class FakeAmdSmi {
 public:
  explicit FakeAmdSmi(int abi = 26, const std::string& variant = "")
      : abi_(abi),
        dir_(fake_amdsmi_root() + "/abi" + std::to_string(abi) + variant),
        library_(dir_ + "/libamd_smi.so." + std::to_string(abi), "fake AMD SMI",
                 "build fake_amdsmi_" + std::to_string(abi) + variant) {}

  int abi() const { return abi_; }
  const std::string& dir() const { return dir_; }
  const std::string& path() const { return library_.path(); }

  // Back to the defaults above. Call it in SetUp, with no backend GPU alive.
  void reset() const { call<void (*)()>("fakeAmdsmiReset")(); }
  bool set_device_count(unsigned n) const {
    return call<int (*)(unsigned)>("fakeAmdsmiSetDeviceCount")(n) == 0;
  }
  // ABI 24/25 report {year, major, minor, release}; ABI 26 ignores year.
  void set_lib_version(unsigned year, unsigned major, unsigned minor, unsigned release) const {
    call<void (*)(unsigned, unsigned, unsigned, unsigned)>("fakeAmdsmiSetLibVersion")(
        year, major, minor, release);
  }
  void set_name(unsigned i, const std::string& name) const {
    call<void (*)(unsigned, const char*)>("fakeAmdsmiSetName")(i, name.c_str());
  }
  void set_hip_index(unsigned i, unsigned hip) const {
    call<void (*)(unsigned, unsigned)>("fakeAmdsmiSetHipIndex")(i, hip);
  }
  void set_energy(unsigned i, unsigned long long counts, float resolution_uj) const {
    call<void (*)(unsigned, unsigned long long, float)>("fakeAmdsmiSetEnergy")(i, counts,
                                                                               resolution_uj);
  }
  void advance_energy(unsigned i, unsigned long long counts) const {
    call<void (*)(unsigned, unsigned long long)>("fakeAmdsmiAdvanceEnergy")(i, counts);
  }
  // amdsmi_get_energy_count answers `status` (e.g. NOT_SUPPORTED in a VM).
  void set_energy_status(unsigned i, unsigned status) const {
    call<void (*)(unsigned, unsigned)>("fakeAmdsmiSetEnergyStatus")(i, status);
  }
  // Whole watts; kAmdsmiNa for "N/A".
  void set_power(unsigned i, unsigned current_w, unsigned average_w) const {
    call<void (*)(unsigned, unsigned, unsigned)>("fakeAmdsmiSetPower")(i, current_w, average_w);
  }
  void set_power_caps_uw(unsigned i, unsigned long long min, unsigned long long max,
                         unsigned long long def, unsigned long long cap) const {
    call<void (*)(unsigned, unsigned long long, unsigned long long, unsigned long long,
                  unsigned long long)>("fakeAmdsmiSetPowerCaps")(i, min, max, def, cap);
  }
  unsigned long long power_cap_uw(unsigned i) const {
    return call<unsigned long long (*)(unsigned)>("fakeAmdsmiGetPowerCap")(i);
  }
  void set_clock_levels(unsigned i, bool memory, const unsigned long long* mhz,
                        unsigned count) const {
    call<void (*)(unsigned, int, const unsigned long long*, unsigned)>("fakeAmdsmiSetClockLevels")(
        i, memory ? 1 : 0, mhz, count);
  }
  struct ClockLimits {
    unsigned gfx_min, gfx_max, mem_min, mem_max;
    int perf_level;  // 0 auto, 3 manual
  };
  ClockLimits clock_limits(unsigned i) const {
    ClockLimits c{};
    c.perf_level = call<int (*)(unsigned, unsigned*, unsigned*, unsigned*, unsigned*)>(
        "fakeAmdsmiGetClockLimits")(i, &c.gfx_min, &c.gfx_max, &c.mem_min, &c.mem_max);
    return c;
  }
  void set_temperature_millic(unsigned i, long long millidegrees) const {
    call<void (*)(unsigned, long long)>("fakeAmdsmiSetTemperature")(i, millidegrees);
  }
  // GPU i's processes (amdsmi_get_gpu_process_list), in this order.
  struct Process {
    unsigned pid;
    unsigned long long mem_bytes;
  };
  void set_processes(unsigned i, const std::vector<Process>& processes) const {
    std::vector<unsigned> pids;
    std::vector<unsigned long long> mem;
    for (const auto& p : processes) {
      pids.push_back(p.pid);
      mem.push_back(p.mem_bytes);
    }
    call<void (*)(unsigned, const unsigned*, const unsigned long long*, unsigned)>(
        "fakeAmdsmiSetProcesses")(i, pids.data(), mem.data(), static_cast<unsigned>(pids.size()));
  }
  // `extra` processes (pids 90000 + position, 1 MiB) start right after GPU
  // i's next count query, so the fill that follows is short of room.
  void grow_processes_after_count(unsigned i, unsigned extra) const {
    call<void (*)(unsigned, unsigned)>("fakeAmdsmiGrowProcessesAfterCount")(i, extra);
  }
  void set_permission_denied(bool denied) const {
    call<void (*)(int)>("fakeAmdsmiSetPermissionDenied")(denied ? 1 : 0);
  }
  void fail_next(const std::string& function, unsigned status) const {
    call<void (*)(const char*, unsigned)>("fakeAmdsmiFailNext")(function.c_str(), status);
  }
  void fail_always(const std::string& function, unsigned status) const {
    call<void (*)(const char*, unsigned)>("fakeAmdsmiFailAlways")(function.c_str(), status);
  }
  unsigned call_count(const std::string& function) const {
    return call<unsigned (*)(const char*)>("fakeAmdsmiCallCount")(function.c_str());
  }
  int init_ref_count() const { return call<int (*)()>("fakeAmdsmiInitRefCount")(); }
  void set_call_delay_us(int us) const { call<void (*)(int)>("fakeAmdsmiSetCallDelay")(us); }
  int max_in_flight() const { return call<int (*)()>("fakeAmdsmiMaxInFlight")(); }
  std::string journal() const {
    auto fn = call<unsigned (*)(char*, unsigned)>("fakeAmdsmiJournal");
    const unsigned n = fn(nullptr, 0);
    std::string out(n + 1, '\0');
    fn(out.data(), n + 1);
    out.resize(n);
    return out;
  }

 private:
  template <class Fn>
  Fn call(const char* symbol) const {
    return library_.function<Fn>(symbol);
  }

  int abi_;
  std::string dir_;
  FakeLibrary library_;
};

}  // namespace zeus::testing
