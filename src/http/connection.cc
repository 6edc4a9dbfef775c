#include "http/connection.h"

namespace zeus::http {

void Connection::on_close(std::function<void()> callback) {
  {
    std::lock_guard lock(mutex_);
    if (!closed_) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  if (callback) callback();
}

bool Connection::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

void Connection::mark_closed() {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    closed_ = true;
    callbacks.swap(callbacks_);
  }
  for (auto& cb : callbacks) {
    if (cb) cb();
  }
}

}  // namespace zeus::http
