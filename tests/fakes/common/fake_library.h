// The control side of a fake driver library: tests dlopen the same file the
// backend loads, so both share one copy of the fake's state, and call its
// control functions (fakeNvml*, fakeAmdsmi*) through dlsym. Holding a
// FakeLibrary also keeps the fake loaded, so its state survives the backend's
// dlclose.
#pragma once

#include <dlfcn.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace zeus::testing {

class FakeLibrary {
 public:
  // `what` names the fake in errors ("fake NVML"); `build_hint` says how to get it.
  FakeLibrary(std::string path, std::string what, const std::string& build_hint)
      : path_(std::move(path)), what_(std::move(what)) {
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* why = dlerror();
      throw std::runtime_error("cannot load the " + what_ + " " + path_ + ": " +
                               (why != nullptr ? why : "?") + " (" + build_hint + ")");
    }
  }
  ~FakeLibrary() { dlclose(handle_); }
  FakeLibrary(const FakeLibrary&) = delete;
  FakeLibrary& operator=(const FakeLibrary&) = delete;

  const std::string& path() const { return path_; }

  // The control function `symbol`, as a pointer of type Fn.
  template <class Fn>
  Fn function(const char* symbol) const {
    void* p = dlsym(handle_, symbol);
    if (p == nullptr) throw std::runtime_error(what_ + " lacks " + symbol);
    return reinterpret_cast<Fn>(p);
  }

 private:
  std::string path_;
  std::string what_;
  void* handle_ = nullptr;
};

}  // namespace zeus::testing
