// RAPL discovery (open_rapl_cpus) and the Cpu implementation over powercap.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "device/rapl/rapl_counter.h"
#include "device/rapl/rapl_keepalive.h"
#include "zeus/device/rapl.h"
#include "zeus/util/error.h"
#include "zeus/util/log.h"

namespace zeus::device {
namespace {

namespace fs = std::filesystem;
using rapl_internal::RaplCounter;
using rapl_internal::RaplKeepAlive;

constexpr const char* kSysRoot = "/sys/class/powercap";
constexpr const char* kContainerRoot = "/zeus_sys/class/powercap";

// One package: its counters, and a share of the set's keep-alive thread,
// which runs as long as any Cpu of the set exists.
class RaplCpu final : public Cpu {
 public:
  RaplCpu(std::string name, std::shared_ptr<RaplCounter> package, std::shared_ptr<RaplCounter> dram,
          std::shared_ptr<RaplKeepAlive> keepalive)
      : name_(std::move(name)),
        package_(std::move(package)),
        dram_(std::move(dram)),
        keepalive_(std::move(keepalive)) {}

  std::string name() override { return name_; }
  bool has_dram() override { return dram_ != nullptr; }
  CpuEnergy total_energy() override {
    CpuEnergy e;
    e.package = from_microjoules(static_cast<double>(package_->read_uj()));
    if (dram_) e.dram = from_microjoules(static_cast<double>(dram_->read_uj()));
    return e;
  }

 private:
  // All immutable after construction; the counters lock themselves.
  const std::string name_;
  const std::shared_ptr<RaplCounter> package_;
  const std::shared_ptr<RaplCounter> dram_;  // null: no (readable) DRAM zone
  const std::shared_ptr<RaplKeepAlive> keepalive_;
};

// A zone directory name: "<type>:<hex>[:<hex>...]" with a RAPL control type.
struct ZoneId {
  std::string type;
  std::vector<std::uint64_t> ids;
};

bool is_rapl_type(std::string_view type) {
  return type == "intel-rapl" || type.starts_with("intel-rapl-");
}

int type_rank(std::string_view type) {
  if (type == "intel-rapl") return 0;       // MSR: the classic interface
  if (type == "intel-rapl-tpmi") return 1;  // newest Xeons
  if (type == "intel-rapl-mmio") return 2;  // client parts mirror package-0 here
  return 3;
}

std::optional<ZoneId> parse_zone_dirname(std::string_view name) {
  const auto colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  ZoneId z{std::string(name.substr(0, colon)), {}};
  if (!is_rapl_type(z.type)) return std::nullopt;
  std::string_view rest = name.substr(colon + 1);
  while (true) {
    const auto next = rest.find(':');
    const std::string_view part = rest.substr(0, next);
    std::uint64_t id = 0;
    auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), id, 16);
    if (part.empty() || ec != std::errc() || ptr != part.data() + part.size()) {
      return std::nullopt;
    }
    z.ids.push_back(id);
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  return z;
}

// "package-N" or "package-N-die-M".
bool parse_package_name(std::string_view name, int& package, int& die) {
  constexpr std::string_view kPrefix = "package-";
  if (!name.starts_with(kPrefix)) return false;
  name.remove_prefix(kPrefix.size());
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), package);
  if (ec != std::errc() || p == name.data() || package < 0) return false;
  name.remove_prefix(static_cast<std::size_t>(p - name.data()));
  die = 0;
  if (name.empty()) return true;
  constexpr std::string_view kDie = "-die-";
  if (!name.starts_with(kDie)) return false;
  name.remove_prefix(kDie.size());
  auto [d, ec2] = std::from_chars(name.data(), name.data() + name.size(), die);
  return ec2 == std::errc() && d == name.data() + name.size() && d != name.data() && die >= 0;
}

std::string read_text_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw_error(ErrorCode::kIo, fmt::format("cannot open {}: {}", path, errno_text(errno)));
  }
  char buf[256];
  const ssize_t n = ::pread(fd, buf, sizeof(buf), 0);
  const int err = errno;
  ::close(fd);
  if (n < 0) throw_error(ErrorCode::kIo, fmt::format("cannot read {}: {}", path, errno_text(err)));
  std::string s(buf, static_cast<std::size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  return ec ? p.string() : c.string();
}

struct ZoneDir {
  std::string path;
  std::string dirname;
  ZoneId id;
};

// Entries of `dir` that are zone directories with `depth` ids and, when
// `parent` is given, are children of that zone.
void collect_zones(const fs::path& dir, std::size_t depth, const std::string* parent,
                   std::map<std::string, ZoneDir>& out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return;
  for (const auto& entry : it) {
    const std::string dirname = entry.path().filename().string();
    auto id = parse_zone_dirname(dirname);
    if (!id || id->ids.size() != depth) continue;
    if (parent != nullptr && !dirname.starts_with(*parent + ":")) continue;
    std::error_code dec;
    if (!fs::is_directory(entry.path(), dec)) continue;
    // The class directory holds symlinks to every zone and the devices nest
    // too: the same zone is seen under several paths.
    out.try_emplace(canonical_or_self(entry.path()),
                    ZoneDir{entry.path().string(), dirname, std::move(*id)});
  }
}

std::vector<ZoneDir> sorted_zones(std::map<std::string, ZoneDir>& found) {
  std::vector<ZoneDir> zones;
  for (auto& [canon, z] : found) zones.push_back(std::move(z));
  std::sort(zones.begin(), zones.end(), [](const ZoneDir& a, const ZoneDir& b) {
    return std::tuple(type_rank(a.id.type), a.id.type, a.id.ids, a.path) <
           std::tuple(type_rank(b.id.type), b.id.type, b.id.ids, b.path);
  });
  // Keep one entry per directory name (a symlink that did not resolve twice).
  zones.erase(
      std::unique(zones.begin(), zones.end(),
                  [](const ZoneDir& a, const ZoneDir& b) { return a.dirname == b.dirname; }),
      zones.end());
  return zones;
}

std::vector<ZoneDir> find_top_zones(const fs::path& root) {
  std::map<std::string, ZoneDir> found;
  collect_zones(root, 1, nullptr, found);
  // Nested layout: <root>/intel-rapl/intel-rapl:0 (and root may itself be a
  // control type directory, which the line above already covers).
  std::error_code ec;
  fs::directory_iterator it(root, ec);
  if (!ec) {
    for (const auto& entry : it) {
      const std::string name = entry.path().filename().string();
      std::error_code dec;
      if (is_rapl_type(name) && fs::is_directory(entry.path(), dec)) {
        collect_zones(entry.path(), 1, nullptr, found);
      }
    }
  }
  return sorted_zones(found);
}

std::vector<ZoneDir> find_children(const ZoneDir& zone, const fs::path& root) {
  std::map<std::string, ZoneDir> found;
  collect_zones(zone.path, zone.id.ids.size() + 1, &zone.dirname, found);
  collect_zones(root, zone.id.ids.size() + 1, &zone.dirname, found);
  return sorted_zones(found);
}

bool has_rapl_zone(const fs::path& root) { return !find_top_zones(root).empty(); }

std::string resolve_root(const RaplOptions& options) {
  if (!options.root.empty()) return options.root;
  if (const char* env = std::getenv("ZEUS_POWERCAP_ROOT"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  if (!has_rapl_zone(kSysRoot) && fs::is_directory(kContainerRoot, ec)) return kContainerRoot;
  return kSysRoot;
}

// Opens one zone's counter, or records in `info` why it cannot be read.
std::shared_ptr<RaplCounter> open_counter(const ZoneDir& zone, RaplZoneInfo& info) {
  const std::string energy = zone.path + "/energy_uj";
  try {
    const std::uint64_t range = rapl_internal::read_uint_file(zone.path + "/max_energy_range_uj");
    if (range == 0 || range == std::numeric_limits<std::uint64_t>::max()) {
      throw_error(
          ErrorCode::kParse,
          fmt::format("{}/max_energy_range_uj is {}: cannot correct wraparound", zone.path, range));
    }
    return std::make_shared<RaplCounter>(energy, range);
  } catch (const Error& e) {
    info.readable = false;
    info.problem =
        e.code() == ErrorCode::kNoPermission ? rapl_internal::kNoPermissionHint : e.what();
    log::debug("RAPL zone {} ({}) left out: {}", info.name, zone.path, e.what());
    return nullptr;
  }
}

struct PackageFound {
  int package = 0;
  int die = 0;
  std::string name;
  std::shared_ptr<RaplCounter> package_counter;
  std::shared_ptr<RaplCounter> dram_counter;
};

}  // namespace

RaplCpuSet open_rapl_cpus(const RaplOptions& options) {
  RaplCpuSet set;
  const fs::path root = resolve_root(options);
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    log::debug("RAPL: no powercap directory at {}", root.string());
    return set;
  }

  std::vector<PackageFound> packages;
  for (const ZoneDir& top : find_top_zones(root)) {
    RaplZoneInfo info;
    info.path = top.path;
    try {
      info.name = read_text_file(top.path + "/name");
    } catch (const Error& e) {
      info.readable = false;
      info.problem = e.what();
      set.zones.push_back(std::move(info));
      continue;
    }
    int package = 0;
    int die = 0;
    const bool is_package = parse_package_name(info.name, package, die);
    const bool duplicate =
        is_package && std::any_of(packages.begin(), packages.end(), [&](const PackageFound& p) {
          return p.package == package && p.die == die;
        });
    if (duplicate) info.problem = "the same package is measured through another control type";
    info.measured = is_package && !duplicate;

    PackageFound found;
    if (info.measured) {
      found.package_counter = open_counter(top, info);
      found.package = package;
      found.die = die;
      found.name = info.name;
    }
    const bool keep = found.package_counter != nullptr;
    set.zones.push_back(std::move(info));

    for (const ZoneDir& child : find_children(top, root)) {
      RaplZoneInfo cinfo;
      cinfo.path = child.path;
      try {
        cinfo.name = read_text_file(child.path + "/name");
      } catch (const Error& e) {
        cinfo.readable = false;
        cinfo.problem = e.what();
        set.zones.push_back(std::move(cinfo));
        continue;
      }
      // Only DRAM adds to the package: core/uncore are parts of the package.
      if (keep && cinfo.name == "dram" && found.dram_counter == nullptr) {
        cinfo.measured = true;
        found.dram_counter = open_counter(child, cinfo);
      }
      set.zones.push_back(std::move(cinfo));
    }
    if (keep) packages.push_back(std::move(found));
  }

  std::stable_sort(packages.begin(), packages.end(), [](const auto& a, const auto& b) {
    return std::pair(a.package, a.die) < std::pair(b.package, b.die);
  });

  std::vector<std::shared_ptr<RaplCounter>> counters;
  std::uint64_t smallest_range = std::numeric_limits<std::uint64_t>::max();
  for (const auto& p : packages) {
    for (const auto& c : {p.package_counter, p.dram_counter}) {
      if (!c) continue;
      counters.push_back(c);
      smallest_range = std::min(smallest_range, c->max_energy_range_uj());
    }
  }
  std::shared_ptr<RaplKeepAlive> keepalive;
  if (!counters.empty() && options.keepalive_period.count() >= 0.0) {
    const Seconds period = options.keepalive_period.count() > 0.0
                               ? options.keepalive_period
                               : rapl_internal::default_keepalive_period(smallest_range);
    keepalive = std::make_shared<RaplKeepAlive>(
        std::move(counters), period,
        options.clock != nullptr ? *options.clock : SteadyClock::instance());
  }
  for (auto& p : packages) {
    set.cpus.push_back(std::make_unique<RaplCpu>(std::move(p.name), std::move(p.package_counter),
                                                 std::move(p.dram_counter), keepalive));
  }
  return set;
}

}  // namespace zeus::device
