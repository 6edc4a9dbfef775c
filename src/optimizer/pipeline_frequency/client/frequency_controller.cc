#include "zeus/optimizer/pipeline_frequency/client/frequency_controller.h"

#include <fmt/format.h>

#include <algorithm>

#include "zeus/util/log.h"

namespace zeus::pipeline_frequency {

FrequencyController::FrequencyController(std::shared_ptr<device::Gpu> gpu,
                                         FrequencyControllerOptions options)
    : gpu_(std::move(gpu)), guard_({gpu_}) {
  if (options.reset_power_limit) guard_.set_power_limit(0, gpu_->default_power_limit());
  const auto memory = gpu_->supported_memory_clocks();
  if (memory.empty()) {
    throw_error(ErrorCode::kNotSupported, "the GPU reports no memory clocks");
  }
  const Megahertz max_memory = *std::max_element(memory.begin(), memory.end());
  if (options.lock_memory_clock) {
    try {
      guard_.set_memory_locked_clocks(0, max_memory, max_memory);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kNotSupported) throw;
      log::debug("frequency controller: memory clocks cannot be locked on this GPU: {}", e.what());
    }
  }
  const auto graphics = gpu_->supported_graphics_clocks(max_memory);
  if (graphics.empty()) {
    throw_error(ErrorCode::kNotSupported, "the GPU reports no graphics clocks");
  }
  max_frequency_ = *std::max_element(graphics.begin(), graphics.end());
  guard_.set_gpu_locked_clocks(0, max_frequency_, max_frequency_);
  current_ = max_frequency_;
  last_requested_ = max_frequency_;
  requested_ = max_frequency_;
  thread_ = std::thread([this] { run(); });
}

FrequencyController::~FrequencyController() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  guard_.restore();
}

void FrequencyController::set_frequency(Megahertz frequency) {
  if (has_error_.load(std::memory_order_relaxed)) {
    std::lock_guard lock(mutex_);
    rethrow_locked();
  }
  if (frequency.value() == 0 || frequency == last_requested_) return;
  last_requested_ = frequency;
  {
    std::lock_guard lock(mutex_);
    requested_ = frequency;
    ++requested_seq_;
  }
  wake_.notify_one();
}

void FrequencyController::flush() {
  std::unique_lock lock(mutex_);
  applied_.wait(lock, [this] { return applied_seq_ == requested_seq_; });
  rethrow_locked();
}

Megahertz FrequencyController::current_frequency() const {
  std::lock_guard lock(mutex_);
  return current_;
}

std::uint64_t FrequencyController::changes() const {
  std::lock_guard lock(mutex_);
  return changes_;
}

void FrequencyController::rethrow_locked() {
  if (!error_) return;
  const Error e = *error_;
  error_.reset();
  has_error_.store(false, std::memory_order_relaxed);
  throw e;
}

void FrequencyController::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || applied_seq_ != requested_seq_; });
    if (stop_) return;
    const Megahertz target = requested_;
    const std::uint64_t seq = requested_seq_;
    const Megahertz current = current_;
    lock.unlock();
    std::optional<Error> failure;
    bool changed = false;
    if (target != current) {
      try {
        changed = guard_.set_gpu_locked_clocks(0, target, target);
      } catch (const Error& e) {
        failure = e;
      } catch (const std::exception& e) {
        failure = Error(ErrorCode::kInternal, e.what());
      }
    }
    lock.lock();
    if (changed) {
      current_ = target;
      ++changes_;
    }
    if (failure && !error_) {
      log::error("frequency controller: could not lock the GPU clock at {} MHz: {}", target.value(),
                 failure->what());
      error_ = std::move(failure);
      has_error_.store(true, std::memory_order_relaxed);
    }
    applied_seq_ = seq;
    applied_.notify_all();
  }
}

}  // namespace zeus::pipeline_frequency
