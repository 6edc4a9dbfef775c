// FrequencyController: sets one GPU's SM frequency off the training thread,
// as upstream's (which runs a process; here a thread in the same process).
// At start it resets the power limit to the default, locks the memory clock
// to its maximum (where supported) and the SM clock to its maximum; then it
// applies each requested frequency as a locked range min = max. Everything
// goes through a GpuSettingsGuard, so the clocks and the power limit come
// back when the controller is destroyed and on every other exit path the
// guard covers (exit(), SIGINT, SIGTERM). Works with any Gpu: NVML, the
// simulated GPU, a zeusd-backed one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "zeus/device/gpu.h"
#include "zeus/device/gpu_settings_guard.h"
#include "zeus/util/error.h"

namespace zeus::pipeline_frequency {

struct FrequencyControllerOptions {
  bool reset_power_limit = true;  // upstream: the default limit, so clocks are not capped
  bool lock_memory_clock = true;  // upstream: memory at its maximum (kNotSupported ignored)
};

// set_frequency() and flush() are for one thread (the training thread); the
// controller's own thread does the driver calls. mutex_ guards the request
// and the progress counters; the guard serializes device changes with a
// restore from the signal thread.
class FrequencyController {
 public:
  // Does the start-up settings now, on the calling thread, so a refusal
  // (kNoPermission without privileges, kNotSupported) is thrown here, then
  // starts the thread. Settings made before a failure are restored.
  explicit FrequencyController(std::shared_ptr<device::Gpu> gpu,
                               FrequencyControllerOptions options = {});
  // Stops the thread and restores the GPU's settings.
  ~FrequencyController();
  FrequencyController(const FrequencyController&) = delete;
  FrequencyController& operator=(const FrequencyController&) = delete;

  // Asks for `frequency` and returns at once. 0 means "leave it" (upstream)
  // and a value equal to the last one asked for is dropped here; the thread
  // applies only the newest request and skips a value already set. Throws,
  // once, the error the thread met applying an earlier request.
  void set_frequency(Megahertz frequency);
  // Blocks until every request made so far has been applied (or has failed;
  // the error is thrown here). For emulators and tests that must know the
  // clock before work starts.
  void flush();

  Megahertz max_frequency() const { return max_frequency_; }
  Megahertz current_frequency() const;  // last value applied to the GPU
  // How many times the thread changed the locked clock (not counting start-up).
  std::uint64_t changes() const;

 private:
  void run();
  void rethrow_locked();  // requires mutex_

  const std::shared_ptr<device::Gpu> gpu_;
  device::GpuSettingsGuard guard_;
  Megahertz max_frequency_{0};
  Megahertz last_requested_{0};  // the calling thread's, for dropping repeats
  mutable std::mutex mutex_;     // guards everything below
  std::condition_variable wake_;
  std::condition_variable applied_;
  Megahertz requested_{0};
  std::uint64_t requested_seq_ = 0;
  std::uint64_t applied_seq_ = 0;
  Megahertz current_{0};
  std::uint64_t changes_ = 0;
  std::optional<Error> error_;
  std::atomic<bool> has_error_{false};
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace zeus::pipeline_frequency
