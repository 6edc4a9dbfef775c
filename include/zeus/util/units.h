// Strong unit types. Vendor units (mW, mJ, µJ) are converted to these once, at
// the device edge; everything above the device layer speaks these types.
#pragma once

#include <chrono>
#include <cmath>
#include <compare>
#include <cstdint>

namespace zeus {

// A number tagged with its unit. Only same-unit arithmetic compiles; scaling by
// a plain number keeps the unit; dividing two quantities of one unit gives a ratio.
template <class Tag, class Rep = double>
class Quantity {
 public:
  using rep = Rep;
  constexpr Quantity() = default;
  constexpr explicit Quantity(Rep value) : value_(value) {}
  constexpr Rep value() const { return value_; }

  constexpr Quantity operator-() const { return Quantity(-value_); }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }
  friend constexpr Quantity operator+(Quantity a, Quantity b) {
    return Quantity(a.value_ + b.value_);
  }
  friend constexpr Quantity operator-(Quantity a, Quantity b) {
    return Quantity(a.value_ - b.value_);
  }
  friend constexpr Quantity operator*(Quantity a, Rep k) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator*(Rep k, Quantity a) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator/(Quantity a, Rep k) { return Quantity(a.value_ / k); }
  friend constexpr double operator/(Quantity a, Quantity b) {
    return static_cast<double>(a.value_) / static_cast<double>(b.value_);
  }
  friend constexpr auto operator<=>(Quantity, Quantity) = default;

 private:
  Rep value_{};
};

struct JoulesTag {};
struct WattsTag {};
struct MilliwattsTag {};
struct MegahertzTag {};
struct CelsiusTag {};
struct MillijoulesTag {};

using Joules = Quantity<JoulesTag>;
using Watts = Quantity<WattsTag>;
// Integer milliwatts: the unit GPU power limits are set in. Exact, so limit
// grids and profile files compare without floating-point surprises.
using Milliwatts = Quantity<MilliwattsTag, std::int64_t>;
using Megahertz = Quantity<MegahertzTag, std::int64_t>;
using Celsius = Quantity<CelsiusTag>;
// Integer millijoules: the unit of NVML's energy counter and of the
// attribution ledger, whose shares must add up exactly.
using Millijoules = Quantity<MillijoulesTag, std::int64_t>;
using Seconds = std::chrono::duration<double>;

constexpr Joules operator*(Watts p, Seconds t) { return Joules(p.value() * t.count()); }
constexpr Joules operator*(Seconds t, Watts p) { return p * t; }
constexpr Watts operator/(Joules e, Seconds t) { return Watts(e.value() / t.count()); }
constexpr Seconds operator/(Joules e, Watts p) { return Seconds(e.value() / p.value()); }

constexpr Watts to_watts(Milliwatts mw) { return Watts(static_cast<double>(mw.value()) / 1000.0); }
inline Milliwatts to_milliwatts(Watts w) {
  return Milliwatts(static_cast<std::int64_t>(std::llround(w.value() * 1000.0)));
}
constexpr Joules from_millijoules(double mj) { return Joules(mj / 1000.0); }
constexpr Joules from_microjoules(double uj) { return Joules(uj / 1e6); }
constexpr Watts from_milliwatts(double mw) { return Watts(mw / 1000.0); }

namespace literals {
constexpr Joules operator""_J(long double v) { return Joules(static_cast<double>(v)); }
constexpr Joules operator""_J(unsigned long long v) { return Joules(static_cast<double>(v)); }
constexpr Watts operator""_W(long double v) { return Watts(static_cast<double>(v)); }
constexpr Watts operator""_W(unsigned long long v) { return Watts(static_cast<double>(v)); }
constexpr Milliwatts operator""_mW(unsigned long long v) {
  return Milliwatts(static_cast<std::int64_t>(v));
}
constexpr Megahertz operator""_MHz(unsigned long long v) {
  return Megahertz(static_cast<std::int64_t>(v));
}
}  // namespace literals

}  // namespace zeus
