#include "zeus/optimizer/power_limit/carbon_aware/grid_signal.h"

#include <fmt/format.h>

#include <cmath>

#include "util/iso8601.h"
#include "zeus/optimizer/power_limit/carbon_aware/signal_csv.h"
#include "zeus/util/error.h"

namespace zeus::carbon_aware {

const char* signal_kind_name(SignalKind kind) {
  return kind == SignalKind::kCarbon ? "carbon" : "price";
}

GridSignal::GridSignal(SignalKind kind, std::string unit, std::int64_t start_utc,
                       std::int64_t resolution_s, std::vector<double> values, std::string source)
    : kind_(kind),
      unit_(std::move(unit)),
      start_(start_utc),
      resolution_(resolution_s),
      values_(std::move(values)),
      source_(std::move(source)) {
  if (values_.empty()) {
    throw_error(ErrorCode::kInvalidArgument, fmt::format("{}: the signal has no samples", source_));
  }
  if (resolution_ <= 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: resolution must be positive, got {} s", source_, resolution_));
  }
  for (std::size_t i = 0; i < values_.size(); ++i) {
    if (!std::isfinite(values_[i]) || (kind_ == SignalKind::kCarbon && values_[i] < 0.0)) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("{}: sample {} ({}) is {}; carbon intensity must be finite and "
                              "non-negative, a price finite",
                              source_, i, format_iso8601(sample_start(i)), values_[i]));
    }
  }
}

std::size_t GridSignal::index_at(std::int64_t t) const {
  if (t < start_ || t >= end_utc()) {
    throw_error(
        ErrorCode::kNotFound,
        fmt::format("{} covers {} to {}; no value for {} (use a longer series, or say "
                    "how to extend it)",
                    source_, format_iso8601(start_), format_iso8601(end_utc()), format_iso8601(t)));
  }
  return static_cast<std::size_t>((t - start_) / resolution_);
}

GridSignal GridSignal::coarsened(std::int64_t factor) const {
  if (factor < 1 || values_.size() % static_cast<std::size_t>(factor) != 0) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: cannot group {} samples of {} s into periods of {} samples",
                            source_, values_.size(), resolution_, factor));
  }
  const auto k = static_cast<std::size_t>(factor);
  std::vector<double> out(values_.size() / k, 0.0);
  for (std::size_t i = 0; i < values_.size(); ++i) out[i / k] += values_[i] / double(factor);
  return GridSignal(kind_, unit_, start_, resolution_ * factor, std::move(out), source_);
}

GridSignal GridSignal::slice(std::size_t first, std::size_t count) const {
  if (count == 0 || first > values_.size() || count > values_.size() - first) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("{}: samples [{}, {}) are outside its {} samples", source_, first,
                            first + count, values_.size()));
  }
  return GridSignal(
      kind_, unit_, sample_start(first), resolution_,
      std::vector<double>(values_.begin() + static_cast<std::ptrdiff_t>(first),
                          values_.begin() + static_cast<std::ptrdiff_t>(first + count)),
      source_);
}

GridSignal GridSignal::periodic_extension() const {
  std::vector<double> out;
  out.reserve(values_.size() * 3);
  for (int c = 0; c < 3; ++c) out.insert(out.end(), values_.begin(), values_.end());
  const std::int64_t span = resolution_ * static_cast<std::int64_t>(values_.size());
  return GridSignal(kind_, unit_, start_ - span, resolution_, std::move(out),
                    source_ + " (wrapped)");
}

}  // namespace zeus::carbon_aware
