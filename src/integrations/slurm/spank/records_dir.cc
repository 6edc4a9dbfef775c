#include "integrations/slurm/spank/records_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace zeus::slurm_internal {
namespace {

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

// Reads a small regular file; false when it is not one or cannot be read.
bool read_small_file(const std::string& path, std::string& out) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (1 << 20);
  char buffer[4096];
  while (ok) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    out.append(buffer, static_cast<std::size_t>(n));
    if (out.size() > (1 << 20)) ok = false;
  }
  ::close(fd);
  return ok;
}

}  // namespace

void ensure_directory(const std::string& dir) {
  std::string path;
  std::size_t at = 0;
  while (at != std::string::npos) {
    at = dir.find('/', at + 1);
    path = dir.substr(0, at);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) throw io_error("cannot create", path);
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw std::runtime_error("records directory " + dir + " is not a directory");
  }
}

void write_record_atomically(const std::string& dir, const std::string& name,
                             const std::string& line) {
  std::string temp = dir + "/." + name + ".XXXXXX";
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) throw io_error("cannot create a temporary file in", dir);
  const std::string text = line + "\n";
  std::size_t written = 0;
  bool ok = ::fchmod(fd, 0644) == 0;
  while (ok && written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) written += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  const std::string target = dir + "/" + name;
  if (!ok || ::rename(temp.c_str(), target.c_str()) != 0) {
    if (!ok) errno = saved;
    const auto error = io_error("cannot write", target);
    ::unlink(temp.c_str());
    throw error;
  }
}

std::vector<nlohmann::json> read_job_records(const std::string& dir, const std::string& job) {
  std::vector<nlohmann::json> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  const std::string prefix = job + ".";
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.starts_with(prefix) && name.ends_with(".json")) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string text;
    if (!read_small_file(dir + "/" + name, text)) continue;
    auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.value("job", std::string()) == job) out.push_back(std::move(j));
  }
  return out;
}

DirectoryLock::DirectoryLock(const std::string& dir, double timeout_s) {
  const std::string path = dir + "/.lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) return;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  for (;;) {
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
      held_ = true;
      return;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) return;
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace zeus::slurm_internal
