#include "zeus/device/gpu_settings_guard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::device {
namespace {

// The live guards, for restore_all() and the atexit hook. Leaked on purpose:
// atexit handlers may run after static destructors would have destroyed it.
struct GuardList {
  std::mutex mutex;  // guards both fields
  std::vector<GpuSettingsGuard*> guards;
  pid_t pid = 0;  // process the list belongs to: a forked child starts its own
  bool atexit_registered = false;
};

GuardList& guard_list() {
  static GuardList* list = new GuardList;
  return *list;
}

void add_guard(GpuSettingsGuard* guard) {
  GuardList& l = guard_list();
  std::lock_guard lock(l.mutex);
  if (l.pid != ::getpid()) {
    l.guards.clear();  // the parent's guards are not this child's to restore
    l.pid = ::getpid();
  }
  if (!l.atexit_registered) {
    std::atexit([] { GpuSettingsGuard::restore_all(); });
    l.atexit_registered = true;
  }
  l.guards.push_back(guard);
}

void remove_guard(GpuSettingsGuard* guard) {
  GuardList& l = guard_list();
  std::lock_guard lock(l.mutex);
  std::erase(l.guards, guard);
}

template <class F>
void try_restore(const char* what, std::size_t gpu, F&& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    log::error("could not restore the {} of GPU {}: {}", what, gpu, e.what());
  }
}

}  // namespace

GpuSettingsGuard::GpuSettingsGuard(std::vector<std::shared_ptr<Gpu>> gpus)
    : gpus_(std::move(gpus)) {
  for (const auto& gpu : gpus_) {
    Record r;
    r.original_limit = gpu->power_limit();
    r.current_limit = r.original_limit;
    try {
      r.original_persistence = gpu->persistence_mode();
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotSupported) throw;
    }
    records_.push_back(r);
  }
  add_guard(this);
  try {
    on_signal_.emplace(SignalSubscription::Kind::kCleanup, [this](int sig) {
      log::warn("caught signal {}; restoring GPU settings before exiting", sig);
      restore();
    });
  } catch (...) {
    remove_guard(this);
    throw;
  }
}

GpuSettingsGuard::~GpuSettingsGuard() {
  restore();
  on_signal_.reset();
  remove_guard(this);
}

void GpuSettingsGuard::check_index(std::size_t gpu) const {
  if (gpu >= gpus_.size()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("GPU position {} is outside this guard's {} GPUs", gpu, gpus_.size()));
  }
}

bool GpuSettingsGuard::set_power_limit(Milliwatts limit) {
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (!set_power_limit(k, limit)) return false;
  }
  return true;
}

bool GpuSettingsGuard::set_persistence_mode(bool enabled) {
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (!set_persistence_mode(k, enabled)) return false;
  }
  return true;
}

bool GpuSettingsGuard::set_gpu_locked_clocks(Megahertz min, Megahertz max) {
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (!set_gpu_locked_clocks(k, min, max)) return false;
  }
  return true;
}

bool GpuSettingsGuard::set_memory_locked_clocks(Megahertz min, Megahertz max) {
  for (std::size_t k = 0; k < gpus_.size(); ++k) {
    if (!set_memory_locked_clocks(k, min, max)) return false;
  }
  return true;
}

bool GpuSettingsGuard::set_power_limit(std::size_t gpu, Milliwatts limit) {
  check_index(gpu);
  std::lock_guard lock(mutex_);
  if (restored_) return false;
  Record& r = records_[gpu];
  if (r.current_limit == limit) return true;
  r.limit_changed = true;  // before the call: a half-done set is restored too
  gpus_[gpu]->set_power_limit(limit);
  r.current_limit = limit;
  return true;
}

bool GpuSettingsGuard::set_persistence_mode(std::size_t gpu, bool enabled) {
  check_index(gpu);
  std::lock_guard lock(mutex_);
  if (restored_) return false;
  Record& r = records_[gpu];
  if (!r.original_persistence) {
    gpus_[gpu]->set_persistence_mode(enabled);  // says why it has none; nothing to restore
    return true;
  }
  if (r.original_persistence == enabled && !r.persistence_changed) return true;
  r.persistence_changed = true;
  gpus_[gpu]->set_persistence_mode(enabled);
  return true;
}

bool GpuSettingsGuard::set_gpu_locked_clocks(std::size_t gpu, Megahertz min, Megahertz max) {
  check_index(gpu);
  std::lock_guard lock(mutex_);
  if (restored_) return false;
  records_[gpu].gpu_clocks_locked = true;
  gpus_[gpu]->set_gpu_locked_clocks(min, max);
  return true;
}

bool GpuSettingsGuard::set_memory_locked_clocks(std::size_t gpu, Megahertz min, Megahertz max) {
  check_index(gpu);
  std::lock_guard lock(mutex_);
  if (restored_) return false;
  records_[gpu].memory_clocks_locked = true;
  gpus_[gpu]->set_memory_locked_clocks(min, max);
  return true;
}

void GpuSettingsGuard::restore_locked(std::size_t k) noexcept {
  Record& r = records_[k];
  Gpu& gpu = *gpus_[k];
  if (r.gpu_clocks_locked) {
    try_restore("locked graphics clocks", k, [&] { gpu.reset_gpu_locked_clocks(); });
  }
  if (r.memory_clocks_locked) {
    try_restore("locked memory clocks", k, [&] { gpu.reset_memory_locked_clocks(); });
  }
  if (r.limit_changed) {
    try_restore("power limit", k, [&] { gpu.set_power_limit(r.original_limit); });
  }
  if (r.persistence_changed) {
    try_restore("persistence mode", k, [&] { gpu.set_persistence_mode(*r.original_persistence); });
  }
  r.current_limit = r.original_limit;
  r.limit_changed = r.persistence_changed = r.gpu_clocks_locked = r.memory_clocks_locked = false;
}

void GpuSettingsGuard::restore_gpu(std::size_t gpu) noexcept {
  std::lock_guard lock(mutex_);
  if (restored_ || gpu >= gpus_.size()) return;
  restore_locked(gpu);
}

void GpuSettingsGuard::restore() noexcept {
  std::lock_guard lock(mutex_);
  if (restored_) return;
  restored_ = true;
  for (std::size_t k = 0; k < gpus_.size(); ++k) restore_locked(k);
}

bool GpuSettingsGuard::restored() const {
  std::lock_guard lock(mutex_);
  return restored_;
}

std::vector<Milliwatts> GpuSettingsGuard::original_power_limits() const {
  std::lock_guard lock(mutex_);
  std::vector<Milliwatts> out;
  for (const auto& r : records_) out.push_back(r.original_limit);
  return out;
}

std::vector<bool> GpuSettingsGuard::original_persistence_modes() const {
  std::lock_guard lock(mutex_);
  std::vector<bool> out;
  for (const auto& r : records_) out.push_back(r.original_persistence.value_or(false));
  return out;
}

void GpuSettingsGuard::restore_all() noexcept {
  GuardList& l = guard_list();
  std::lock_guard lock(l.mutex);
  for (GpuSettingsGuard* g : l.guards) g->restore();
}

std::size_t GpuSettingsGuard::live_count() {
  GuardList& l = guard_list();
  std::lock_guard lock(l.mutex);
  return l.guards.size();
}

}  // namespace zeus::device
