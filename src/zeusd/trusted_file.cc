#include "zeusd/trusted_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>

#include "zeus/util/error.h"
#include "zeus/util/files.h"

namespace zeus::zeusd {
namespace {

[[noreturn]] void refuse(std::string_view what, const std::string& path, const std::string& why,
                         const std::string& fix) {
  throw_error(ErrorCode::kNoPermission,
              fmt::format("refusing the {} {}: {}, so another user could make zeusd act on their "
                          "content; {}",
                          what, path, why, fix));
}

// `subject` is the file itself or a directory above it.
void check_owner(std::string_view what, const std::string& path, const std::string& subject,
                 const struct stat& st) {
  if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
    const std::string who = subject == path ? "it" : "its directory " + subject;
    refuse(what, path,
           fmt::format("{} is owned by uid {}, neither root nor the daemon's user (uid {})", who,
                       st.st_uid, ::geteuid()),
           fmt::format("chown root {}", subject));
  }
}

}  // namespace

void require_only_trusted_writers(const std::string& path, std::string_view what) {
  char resolved_buf[PATH_MAX];
  if (::realpath(path.c_str(), resolved_buf) == nullptr) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot read the {} {}: {}", what, path, errno_text(errno)));
  }
  const std::filesystem::path resolved(resolved_buf);
  struct stat st {};
  if (::stat(resolved.c_str(), &st) != 0) {
    throw_error(ErrorCode::kIo,
                fmt::format("cannot read the {} {}: {}", what, path, errno_text(errno)));
  }
  if ((st.st_mode & S_IWOTH) != 0) {
    refuse(what, path, "it is world-writable", fmt::format("chmod o-w {}", path));
  }
  if ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0) {
    refuse(what, path, fmt::format("it is writable by group gid {}", st.st_gid),
           fmt::format("chmod g-w {}", path));
  }
  check_owner(what, path, path, st);
  // Each directory above: whoever may write to it may rename the file away
  // and put their own in its place, unless the sticky bit stops them.
  for (auto dir = resolved.parent_path();; dir = dir.parent_path()) {
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0) {
      throw_error(ErrorCode::kIo, fmt::format("cannot inspect {} (above the {} {}): {}",
                                              dir.string(), what, path, errno_text(errno)));
    }
    const bool sticky = (ds.st_mode & S_ISVTX) != 0;
    if ((ds.st_mode & S_IWOTH) != 0 && !sticky) {
      refuse(what, path,
             fmt::format("its directory {} is world-writable without the sticky bit", dir.string()),
             fmt::format("move the file, or chmod o-w (or +t) {}", dir.string()));
    }
    if ((ds.st_mode & S_IWGRP) != 0 && ds.st_gid != 0 && !sticky) {
      refuse(what, path,
             fmt::format("its directory {} is writable by group gid {}", dir.string(), ds.st_gid),
             fmt::format("move the file, or chmod g-w {}", dir.string()));
    }
    check_owner(what, path, dir.string(), ds);
    if (dir == dir.root_path()) break;
  }
}

}  // namespace zeus::zeusd
