#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "zeus/http/client.h"
#include "zeus/metric/pushgateway.h"
#include "zeus/util/clock.h"
#include "zeus/util/error.h"

namespace zeus::metric {
namespace {

// Numbers as prometheus_client writes them (Go's float formatting).
std::string go_float(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

void push_to_gateway(const std::string& url, const std::string& job, const std::string& text) {
  std::string base = url;
  if (base.find("://") == std::string::npos) base = "http://" + base;
  while (!base.empty() && base.back() == '/') base.pop_back();
  try {
    http::Client client(base);
    http::Headers h;
    h.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    const auto r =
        client.request(http::Method::kPut, "/metrics/job/" + http::url_encode(job), text, h);
    if (r.status / 100 != 2) {
      throw_error(ErrorCode::kIo, fmt::format("the Pushgateway at {} answered {}: {}", base,
                                              r.status, r.body.substr(0, 200)));
    }
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kIo && std::string(e.what()).starts_with("the Pushgateway")) throw;
    throw_error(ErrorCode::kIo,
                fmt::format("cannot push metrics to the Pushgateway at {}: {}", base, e.what()));
  }
}

void PushRegistry::add_family(const std::string& name, const std::string& help, Type type,
                              std::vector<double> buckets) {
  std::lock_guard lock(mutex_);
  if (families_.count(name) != 0) return;
  std::sort(buckets.begin(), buckets.end());
  families_[name] = Family{help, type, std::move(buckets), {}};
  order_.push_back(name);
}

bool PushRegistry::has_family(const std::string& name) const {
  std::lock_guard lock(mutex_);
  return families_.count(name) != 0;
}

PushRegistry::Series& PushRegistry::series_locked(Family& f, const std::string& window, int index) {
  auto [it, fresh] = f.series.try_emplace({window, index});
  if (fresh) {
    it->second.created = wall_time_seconds();
    it->second.buckets.assign(f.bounds.size(), 0);
  }
  return it->second;
}

void PushRegistry::inc(const std::string& name, const std::string& window, int index,
                       double amount) {
  std::lock_guard lock(mutex_);
  series_locked(families_.at(name), window, index).value += amount;
}

void PushRegistry::set(const std::string& name, const std::string& window, int index,
                       double value) {
  std::lock_guard lock(mutex_);
  series_locked(families_.at(name), window, index).value = value;
}

void PushRegistry::observe(const std::string& name, const std::string& window, int index,
                           double value) {
  std::lock_guard lock(mutex_);
  Family& f = families_.at(name);
  Series& s = series_locked(f, window, index);
  s.value += value;
  ++s.count;
  for (std::size_t b = 0; b < f.bounds.size(); ++b) {
    if (value <= f.bounds[b]) ++s.buckets[b];
  }
}

std::string PushRegistry::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  auto it = std::back_inserter(out);
  const auto labels = [](const std::pair<std::string, int>& key, const std::string& le = {}) {
    return le.empty() ? fmt::format(R"(index="{}",window="{}")", key.second, escape(key.first))
                      : fmt::format(R"(index="{}",le="{}",window="{}")", key.second, le,
                                    escape(key.first));
  };
  for (const auto& name : order_) {
    const Family& f = families_.at(name);
    if (f.series.empty()) continue;
    switch (f.type) {
      case Type::kCounter:
        fmt::format_to(it, "# HELP {0}_total {1}\n# TYPE {0}_total counter\n", name, f.help);
        for (const auto& [k, s] : f.series) {
          fmt::format_to(it, "{}_total{{{}}} {}\n", name, labels(k), go_float(s.value));
        }
        break;
      case Type::kGauge:
        fmt::format_to(it, "# HELP {0} {1}\n# TYPE {0} gauge\n", name, f.help);
        for (const auto& [k, s] : f.series) {
          fmt::format_to(it, "{}{{{}}} {}\n", name, labels(k), go_float(s.value));
        }
        break;
      case Type::kHistogram:
        fmt::format_to(it, "# HELP {0} {1}\n# TYPE {0} histogram\n", name, f.help);
        for (const auto& [k, s] : f.series) {
          for (std::size_t b = 0; b < f.bounds.size(); ++b) {
            fmt::format_to(it, "{}_bucket{{{}}} {}\n", name, labels(k, go_float(f.bounds[b])),
                           go_float(static_cast<double>(s.buckets[b])));
          }
          fmt::format_to(it, "{}_bucket{{{}}} {}\n", name, labels(k, "+Inf"),
                         go_float(static_cast<double>(s.count)));
          fmt::format_to(it, "{}_count{{{}}} {}\n", name, labels(k),
                         go_float(static_cast<double>(s.count)));
          fmt::format_to(it, "{}_sum{{{}}} {}\n", name, labels(k), go_float(s.value));
        }
        break;
    }
    if (f.type != Type::kGauge) {
      fmt::format_to(it, "# HELP {0}_created {1}\n# TYPE {0}_created gauge\n", name, f.help);
      for (const auto& [k, s] : f.series) {
        fmt::format_to(it, "{}_created{{{}}} {}\n", name, labels(k), go_float(s.created));
      }
    }
  }
  return out;
}

}  // namespace zeus::metric
