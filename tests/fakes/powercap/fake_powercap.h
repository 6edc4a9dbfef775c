// A scriptable fake Linux powercap (RAPL) tree in a temporary directory, for
// tests and benchmarks of the RAPL backend and everything above it.
// Header-only; include as "fakes/powercap/fake_powercap.h".
//
// API (namespace zeus::testing):
//   FakePowercap fake;                      // fresh temp dir, removed on destruction
//   fake.root()                             // pass as RaplOptions::root / ZEUS_POWERCAP_ROOT
//   fake.add_zone("intel-rapl:0", "package-0", energy_uj, max_energy_range_uj);
//   fake.add_zone("intel-rapl:0:1", "dram", 0, kIntelDramRangeUj);  // parent first
//   fake.add_zone("intel-rapl:1", "psys");  // any name; ids are hex as in the kernel
//   fake.set_energy(id, uj);                // rewrites energy_uj IN PLACE
//   fake.advance_energy(id, delta_uj);      // adds, wrapping modulo range + 1; returns raw
//   fake.energy(id)                         // the raw value last written
//   fake.zone_dir(id), fake.energy_path(id)
//   fake.make_unreadable(id);               // chmod 000 energy_uj (root ignores this:
//                                           //   combine with ScopedNoFileOverride)
//   fake.remove_energy(id);                 // truncate + unlink energy_uj
//   fake.replace_energy_with_directory(id); // open() works, read() fails with EISDIR
//   fake.replace_energy_with_dangling_symlink(id);  // open() fails with ENOENT
//   ScopedNoFileOverride guard;             // root: drop CAP_DAC_OVERRIDE and
//                                           //   CAP_DAC_READ_SEARCH on this thread
//   file_is_readable(path)                  // can this thread open+read it now?
//
// Layout follows the kernel: <root>/<type>/<zone>[/<subzone>] directories (the
// devices) plus a symlink <root>/<zone> for every zone (the class directory),
// each zone holding name, energy_uj, max_energy_range_uj, enabled.
//
// Writes are in place (pwrite at offset 0, then ftruncate), so a reader that
// keeps energy_uj open and preads it sees each new value and never an empty
// file. A concurrent reader could see a mix of old and new bytes only where the
// two texts differ in more than one byte; tests that race a live reader should
// step between values of equal length that differ in one digit.
// remove_energy truncates before unlinking because kernfs makes an open
// descriptor of a removed sysfs file fail, whereas an unlinked regular file
// would keep reading its old content.
//
// Thread-safety: a FakePowercap is used from one thread (readers of the files
// it writes may run anywhere).
#pragma once

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "zeus/util/error.h"

namespace zeus::testing {

// Real max_energy_range_uj values (see nvml-rapl-facts.md §3.2).
inline constexpr std::uint64_t kIntelPackageRangeUj = 262143328850;
inline constexpr std::uint64_t kIntelDramRangeUj = 65712999613;
inline constexpr std::uint64_t kAmdPackageRangeUj = 65532610987;

class FakePowercap {
 public:
  FakePowercap() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/zeus-powercap-XXXXXX";
    if (::mkdtemp(templ.data()) == nullptr) fail("mkdtemp " + templ);
    root_ = templ;
  }
  ~FakePowercap() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  FakePowercap(const FakePowercap&) = delete;
  FakePowercap& operator=(const FakePowercap&) = delete;

  const std::string& root() const { return root_; }

  // Adds zone `id` ("<type>:<hex>[:<hex>]"); a sub-zone's parent must exist.
  // Returns the zone directory.
  std::string add_zone(const std::string& id, const std::string& name, std::uint64_t energy_uj = 0,
                       std::uint64_t max_energy_range_uj = kIntelPackageRangeUj) {
    namespace fs = std::filesystem;
    const auto colon = id.find(':');
    if (colon == std::string::npos) fail("zone id without ':' " + id);
    const std::string type = id.substr(0, colon);
    const auto last = id.rfind(':');
    std::string dir;
    if (last == colon) {
      const std::string type_dir = root_ + "/" + type;
      fs::create_directories(type_dir);
      write(type_dir + "/enabled", "1\n");
      dir = type_dir + "/" + id;
    } else {
      dir = zone_dir(id.substr(0, last)) + "/" + id;
    }
    fs::create_directories(dir);
    fs::create_directory_symlink(fs::relative(dir, root_), root_ + "/" + id);
    zones_[id] = Zone{dir, max_energy_range_uj, energy_uj};
    write(dir + "/name", name + "\n");
    write(dir + "/enabled", "1\n");
    write(dir + "/max_energy_range_uj", std::to_string(max_energy_range_uj) + "\n");
    write(dir + "/energy_uj", std::to_string(energy_uj) + "\n");
    return dir;
  }

  std::string zone_dir(const std::string& id) const { return zone(id).dir; }
  std::string energy_path(const std::string& id) const { return zone(id).dir + "/energy_uj"; }
  std::uint64_t energy(const std::string& id) const { return zone(id).energy_uj; }

  void set_energy(const std::string& id, std::uint64_t uj) {
    zone(id).energy_uj = uj;
    write(energy_path(id), std::to_string(uj) + "\n");
  }

  // Adds `delta_uj`, wrapping like the hardware (modulo range + 1).
  std::uint64_t advance_energy(const std::string& id, std::uint64_t delta_uj) {
    const Zone& z = zone(id);
    const std::uint64_t period = z.range_uj + 1;
    const std::uint64_t next = (z.energy_uj % period + delta_uj % period) % period;
    set_energy(id, next);
    return next;
  }

  void set_name(const std::string& id, const std::string& name) {
    write(zone(id).dir + "/name", name + "\n");
  }

  void make_unreadable(const std::string& id) {
    if (::chmod(energy_path(id).c_str(), 0) != 0) fail("chmod " + energy_path(id));
  }

  void remove_energy(const std::string& id) {
    const std::string path = energy_path(id);
    if (::truncate(path.c_str(), 0) != 0 || ::unlink(path.c_str()) != 0) fail("remove " + path);
  }

  void replace_energy_with_directory(const std::string& id) {
    const std::string path = energy_path(id);
    std::filesystem::remove(path);
    std::filesystem::create_directory(path);
  }

  void replace_energy_with_dangling_symlink(const std::string& id) {
    const std::string path = energy_path(id);
    std::filesystem::remove(path);
    std::filesystem::create_symlink(root_ + "/no-such-file", path);
  }

 private:
  struct Zone {
    std::string dir;
    std::uint64_t range_uj = 0;
    std::uint64_t energy_uj = 0;
  };

  [[noreturn]] static void fail(const std::string& what) {
    throw std::runtime_error("FakePowercap: " + what + ": " + zeus::errno_text(errno));
  }

  Zone& zone(const std::string& id) {
    auto it = zones_.find(id);
    if (it == zones_.end()) throw std::runtime_error("FakePowercap: no zone " + id);
    return it->second;
  }
  const Zone& zone(const std::string& id) const {
    return const_cast<FakePowercap*>(this)->zone(id);
  }

  // In place, never leaving the file empty (see the header comment).
  static void write(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) fail("open " + path);
    const bool ok =
        ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
        ::ftruncate(fd, static_cast<off_t>(text.size())) == 0;
    ::close(fd);
    if (!ok) fail("write " + path);
  }

  std::string root_;
  std::map<std::string, Zone> zones_;
};

// Can the calling thread open and read `path` now?
inline bool file_is_readable(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char c;
  const bool ok = ::read(fd, &c, 1) >= 0;
  ::close(fd);
  return ok;
}

// Makes root obey file modes on the calling thread (Linux capabilities are
// per thread) by clearing CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its
// effective set; the permitted set is kept, so the destructor restores them.
// Does nothing when not root. Check with file_is_readable() that a chmod 000
// file really is unreadable before relying on it.
class ScopedNoFileOverride {
 public:
  ScopedNoFileOverride() {
    if (::geteuid() != 0) return;
    if (::syscall(SYS_capget, &header_, saved_) != 0) return;
    __user_cap_data_struct reduced[2] = {saved_[0], saved_[1]};
    reduced[0].effective &= ~((1u << CAP_DAC_OVERRIDE) | (1u << CAP_DAC_READ_SEARCH));
    active_ = ::syscall(SYS_capset, &header_, reduced) == 0;
  }
  ~ScopedNoFileOverride() {
    if (active_) ::syscall(SYS_capset, &header_, saved_);
  }
  ScopedNoFileOverride(const ScopedNoFileOverride&) = delete;
  ScopedNoFileOverride& operator=(const ScopedNoFileOverride&) = delete;

 private:
  __user_cap_header_struct header_{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct saved_[2]{};
  bool active_ = false;
};

}  // namespace zeus::testing
