// A time-varying grid signal (carbon intensity or electricity price) sampled
// at a fixed resolution: what the Chase optimizer forecasts and what the
// simulator charges energy at. Values are stored in one canonical unit per
// kind (g CO2 per kWh; currency per kWh) so a kg-vs-g mix-up cannot reach a
// decision: the reader converts once, from a unit the input states.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace zeus::carbon_aware {

enum class SignalKind { kCarbon, kPrice };

// "carbon" or "price".
const char* signal_kind_name(SignalKind kind);

class GridSignal {
 public:
  // Samples `values[i]` hold on [start + i*resolution, start + (i+1)*resolution)
  // (Unix seconds, UTC). `unit` is the canonical unit ("gCO2/kWh", or the
  // currency per kWh such as "GBP/kWh"). kInvalidArgument for an empty series,
  // resolution <= 0, non-finite values, or negative carbon intensity.
  GridSignal(SignalKind kind, std::string unit, std::int64_t start_utc, std::int64_t resolution_s,
             std::vector<double> values, std::string source);

  SignalKind kind() const { return kind_; }
  // On a temporary (read_signal_csv and periodic_extension return by value)
  // the strings come out by value and values() does not compile: a span of a
  // temporary's samples would dangle (a range-for over it included).
  const std::string& unit() const& { return unit_; }
  std::string unit() && { return std::move(unit_); }
  const std::string& source() const& { return source_; }
  std::string source() && { return std::move(source_); }
  std::int64_t start_utc() const { return start_; }
  std::int64_t end_utc() const { return start_ + resolution_ * static_cast<std::int64_t>(size()); }
  std::int64_t resolution_s() const { return resolution_; }
  std::size_t size() const { return values_.size(); }
  std::span<const double> values() const& { return values_; }
  std::span<const double> values() const&& = delete;
  double value(std::size_t i) const { return values_[i]; }
  std::int64_t sample_start(std::size_t i) const {
    return start_ + resolution_ * static_cast<std::int64_t>(i);
  }

  // The sample holding time `t`; kNotFound naming the source and the covered
  // span when `t` is outside it (never wraps).
  std::size_t index_at(std::int64_t t) const;

  // The mean over consecutive groups of `factor` samples (a coarser period);
  // kInvalidArgument when factor < 1 or the series is not a whole number of
  // groups long. factor 1 returns a copy.
  GridSignal coarsened(std::int64_t factor) const;

  // Samples [first, first + count); kInvalidArgument when out of range or empty.
  GridSignal slice(std::size_t first, std::size_t count) const;

  // Three copies back to back, the middle one being this series: an explicit
  // periodic extension (the simulator's --wrap, so that a year's first starts
  // have history and its last jobs can finish). Callers say so in reports.
  GridSignal periodic_extension() const;

 private:
  SignalKind kind_;
  std::string unit_;
  std::int64_t start_;
  std::int64_t resolution_;
  std::vector<double> values_;
  std::string source_;
};

}  // namespace zeus::carbon_aware
