#include "zeus/device/jetson.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <system_error>

#include "zeus/util/error.h"

namespace zeus::device {
namespace fs = std::filesystem;
namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_trimmed(const fs::path& file) {
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

double read_number(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw_error(ErrorCode::kIo, fmt::format("Jetson rail: cannot read {}", file.string()));
  std::string text;
  in >> text;
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw_error(ErrorCode::kIo,
                fmt::format("Jetson rail: {} holds '{}', not a number", file.string(), text));
  }
  return value;
}

std::optional<SocRail> classify(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.find("cpu") != std::string::npos) return SocRail::kCpu;
  if (name.find("gpu") != std::string::npos) return SocRail::kGpu;
  if (name.find("system") != std::string::npos || name.find("_in") != std::string::npos ||
      name.find("total") != std::string::npos) {
    return SocRail::kTotal;
  }
  return std::nullopt;
}

// One rail's files in `dir` under either naming; nullopt without a way to
// get its power.
std::optional<JetsonRail> rail_files(const fs::path& dir, const std::string& label,
                                     const std::string& k, bool hwmon_names) {
  const std::optional<SocRail> kind = classify(label);
  if (!kind) return std::nullopt;
  JetsonRail r;
  r.rail = *kind;
  r.label = label;
  const fs::path power = dir / (hwmon_names ? "power" + k + "_input" : "in_power" + k + "_input");
  const fs::path voltage = dir / (hwmon_names ? "in" + k + "_input" : "in_voltage" + k + "_input");
  const fs::path current =
      dir / (hwmon_names ? "curr" + k + "_input" : "in_current" + k + "_input");
  if (is_file(power)) {
    r.power = power;
  } else if (is_file(voltage) && is_file(current)) {
    r.voltage = voltage;
    r.current = current;
  } else {
    return std::nullopt;
  }
  return r;
}

// Rails named in one directory: in<k>_label (hwmon) and rail_name_<k> (iio).
void scan_directory(const fs::path& dir, std::map<SocRail, JetsonRail>& found) {
  for (const fs::path& file : sorted_entries(dir)) {
    const std::string name = file.filename().string();
    std::optional<JetsonRail> rail;
    if (name.size() > 8 && name.rfind("in", 0) == 0 && name.ends_with("_label")) {
      rail = rail_files(dir, read_trimmed(file), name.substr(2, name.size() - 8), true);
    } else if (name.rfind("rail_name_", 0) == 0) {
      rail = rail_files(dir, read_trimmed(file), name.substr(10), false);
    }
    if (rail) found.emplace(rail->rail, *rail);  // the first of a kind stays
  }
}

}  // namespace

const char* soc_rail_name(SocRail rail) {
  switch (rail) {
    case SocRail::kCpu:
      return "cpu";
    case SocRail::kGpu:
      return "gpu";
    case SocRail::kTotal:
      return "total";
  }
  return "?";
}

std::optional<JetsonBoard> JetsonBoard::discover(const fs::path& sysfs_root) {
  for (const char* driver : {"ina3221x", "ina3221"}) {
    const fs::path root = sysfs_root / "bus" / "i2c" / "drivers" / driver;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    std::map<SocRail, JetsonRail> found;
    for (const fs::path& device : sorted_entries(root)) {
      for (const fs::path& sub : sorted_entries(device)) {
        if (!fs::is_directory(sub, ec)) continue;
        scan_directory(sub, found);
        for (const fs::path& hwmon : sorted_entries(sub)) {
          if (hwmon.filename().string().rfind("hwmon", 0) == 0) scan_directory(hwmon, found);
        }
      }
    }
    if (found.empty()) continue;
    JetsonBoard board;
    board.driver_ = driver;
    for (auto& [kind, rail] : found) board.rails_.push_back(std::move(rail));
    return board;
  }
  return std::nullopt;
}

const JetsonRail* JetsonBoard::find(SocRail rail) const {
  for (const auto& r : rails_) {
    if (r.rail == rail) return &r;
  }
  return nullptr;
}

Watts JetsonBoard::power(SocRail rail) const {
  const JetsonRail* r = find(rail);
  if (r == nullptr) {
    throw_error(ErrorCode::kNotFound,
                fmt::format("this Jetson board has no {} power rail", soc_rail_name(rail)));
  }
  if (!r->power.empty()) return Watts(read_number(r->power) / 1e3);
  return Watts(read_number(r->voltage) * read_number(r->current) / 1e6);
}

}  // namespace zeus::device
