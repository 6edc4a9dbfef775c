#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "util/text.h"
#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/util/error.h"

namespace zeus::batch_size {
namespace {

constexpr std::size_t kMaxPolicyName = 64;

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxPolicyName) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

}  // namespace

PolicyRegistry& PolicyRegistry::global() {
  static PolicyRegistry* registry = [] {
    auto* r = new PolicyRegistry();  // never destroyed: plug-ins' code outlives main()
    add_builtin_policies(*r);
    return r;
  }();
  return *registry;
}

void PolicyRegistry::add(PolicyInfo info) {
  if (!valid_name(info.name)) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("policy name '{}' is not valid: use 1 to {} letters, digits, '-', "
                            "'_' or '.'",
                            printable(info.name), kMaxPolicyName));
  }
  if (!info.make) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("policy '{}' has no make function", info.name));
  }
  std::lock_guard lock(mu_);
  if (policies_.count(info.name)) {
    throw_error(
        ErrorCode::kAlreadyExists,
        fmt::format("a policy named '{}' is already registered; choose another name", info.name));
  }
  std::string name = info.name;
  policies_.emplace(std::move(name), std::move(info));
}

const PolicyInfo* PolicyRegistry::find_if(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = policies_.find(name);
  return it == policies_.end() ? nullptr : &it->second;
}

const PolicyInfo& PolicyRegistry::find(std::string_view name) const {
  if (const PolicyInfo* p = find_if(name)) return *p;
  throw_error(ErrorCode::kInvalidArgument, fmt::format("unknown policy '{}'; known policies: {}",
                                                       printable(name), known_names()));
}

std::vector<std::string> PolicyRegistry::names() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, info] : policies_) out.push_back(name);
  return out;
}

std::string PolicyRegistry::known_names() const {
  return fmt::format("{}", fmt::join(names(), ", "));
}

namespace {

// What to hand dlopen. dlopen looks a name without '/' up on the library
// search path only, never in the current directory, so `--policy-plugin
// eg.so` beside the user failed with "No such file": such a name that is a
// file here is taken as the path it looks like.
std::string plugin_path(const std::string& path) {
  if (path.find('/') != std::string::npos) return path;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return "./" + path;
  return path;  // not here: the library search path, as dlopen does
}

}  // namespace

std::vector<std::string> load_policy_plugin(const std::string& path, PolicyRegistry& registry) {
  // RTLD_LOCAL: the plug-in's symbols stay its own; never dlclose()d, since
  // the registered policies run its code until the process ends.
  void* handle = dlopen(plugin_path(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    const bool searched = path.find('/') == std::string::npos;
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("cannot load the policy plug-in {}: {}{}", printable(path),
                            why != nullptr ? printable(why) : std::string("unknown error"),
                            searched ? " (no such file here, and a name without '/' is then looked "
                                       "up on the library search path; give the file's path)"
                                     : ""));
  }
  auto entry = reinterpret_cast<PolicyPluginFn>(dlsym(handle, kPolicyPluginEntry));
  if (entry == nullptr) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{} is not a policy plug-in: it exports no extern \"C\" function {}",
                            printable(path), kPolicyPluginEntry));
  }
  std::vector<PolicyInfo> policies;
  entry(policies);
  if (policies.empty()) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("the policy plug-in {} registered no policy", printable(path)));
  }
  std::vector<std::string> names;
  for (auto& p : policies) {
    names.push_back(p.name);
    registry.add(std::move(p));
  }
  return names;
}

}  // namespace zeus::batch_size
