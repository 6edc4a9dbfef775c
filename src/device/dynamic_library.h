// A vendor runtime opened with dlopen (NVML, AMD SMI): the handle that closes
// itself on every path unless the library was handed on, typed symbol
// lookups, and the registry that keeps one live session per library path. The
// NVML and AMD SMI loaders are both built on it, so they differ only in what
// they look up and how they initialize.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace zeus::device_internal {

class DynamicLibrary {
 public:
  // Opens `path` now (RTLD_NOW | RTLD_LOCAL). When it cannot be opened,
  // is_open() is false and error() says why (dlerror's text).
  explicit DynamicLibrary(const std::string& path);
  ~DynamicLibrary();  // closes the library if open
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(DynamicLibrary&&) = delete;

  bool is_open() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  // The function the library exports under `name`, or nullptr.
  template <class Fn>
  Fn symbol(const char* name) const {
    // POSIX guarantees that dlsym's object pointer converts to a function pointer.
    return reinterpret_cast<Fn>(address_of(name));
  }

 private:
  void* address_of(const char* name) const;

  void* handle_ = nullptr;
  std::string error_;
};

// One live session of a vendor library per path: whoever acquires a path
// while an earlier session of it lives shares that session. The instance is
// never destroyed, so sessions released during static destruction still find
// it.
template <class Session>
class SessionRegistry {
 public:
  static SessionRegistry& instance() {
    static auto* registry = new SessionRegistry;
    return *registry;
  }
  // Held while looking up and opening, so one path is opened once.
  std::mutex& mutex() { return mutex_; }
  // The live session of `path`, or null. Requires mutex().
  std::shared_ptr<Session> live(const std::string& path) { return sessions_[path].lock(); }
  // Requires mutex().
  void remember(const std::string& path, const std::shared_ptr<Session>& session) {
    sessions_[path] = session;
  }

 private:
  SessionRegistry() = default;
  std::mutex mutex_;
  std::map<std::string, std::weak_ptr<Session>> sessions_;
};

}  // namespace zeus::device_internal
