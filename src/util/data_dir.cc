#include "util/data_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace zeus {

std::string data_dir(std::string_view name) {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("ZEUS_DATA_DIR"); env != nullptr && *env != '\0') {
    return (fs::path(env) / name).string();
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  // Without /proc (a very bare container), a relative path still works from
  // the install prefix.
  const fs::path prefix = ec ? fs::path("..") : exe.parent_path().parent_path();
  const fs::path dir = prefix / "share" / "zeus" / name;
  const fs::path canonical = fs::weakly_canonical(dir, ec);
  return (ec ? dir : canonical).string();
}

}  // namespace zeus
