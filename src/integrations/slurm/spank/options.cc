#include "integrations/slurm/spank/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace zeus::slurm_internal {

PluginOptions parse_options(int argc, const char* const* argv, std::vector<std::string>& errors) {
  PluginOptions o;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i] != nullptr ? argv[i] : "";
    const auto eq = arg.find('=');
    if (eq == std::string_view::npos) {
      errors.push_back("spank_zeus: ignoring argument '" + std::string(arg) +
                       "' (expected key=value: socket=, records=, on_error=, timeout=, scontrol=)");
      continue;
    }
    const std::string_view key = arg.substr(0, eq);
    const std::string value(arg.substr(eq + 1));
    if (key == "socket" && !value.empty()) {
      o.socket = value;
    } else if (key == "records" && !value.empty()) {
      o.records = value;
    } else if (key == "scontrol" && !value.empty()) {
      o.scontrol = value;
    } else if (key == "on_error" && (value == "warn" || value == "fail")) {
      o.fail_on_error = value == "fail";
    } else if (key == "timeout") {
      errno = 0;
      char* end = nullptr;
      const double t = std::strtod(value.c_str(), &end);
      if (errno != 0 || end == value.c_str() || *end != '\0' || !std::isfinite(t) || t <= 0 ||
          t > 600) {
        errors.push_back("spank_zeus: timeout='" + value +
                         "' is not a number of seconds in (0, 600]; keeping " +
                         std::to_string(o.timeout_s));
      } else {
        o.timeout_s = t;
      }
    } else {
      errors.push_back("spank_zeus: ignoring argument '" + std::string(arg) +
                       "' (known: socket=PATH, records=DIR, on_error=warn|fail, timeout=SECONDS, "
                       "scontrol=PATH)");
    }
  }
  return o;
}

}  // namespace zeus::slurm_internal
