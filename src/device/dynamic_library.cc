#include "device/dynamic_library.h"

#include <dlfcn.h>

#include <utility>

namespace zeus::device_internal {

DynamicLibrary::DynamicLibrary(const std::string& path) {
  dlerror();  // clear a stale message
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* why = dlerror();
    error_ = why != nullptr ? why : path + ": cannot be loaded (unknown dlopen error)";
  }
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), error_(std::move(other.error_)) {}

void* DynamicLibrary::address_of(const char* name) const { return dlsym(handle_, name); }

}  // namespace zeus::device_internal
