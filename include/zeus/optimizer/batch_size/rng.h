// A small, fully specified pseudo-random generator for the batch-size search
// and the simulator. Its whole state is four 64-bit words, so it serializes to
// JSON and back bit-exactly (the batch-size service persists it after every
// decision) and a given seed yields the same stream on every platform and
// standard library, which std::normal_distribution does not promise.
#pragma once

#include <array>
#include <cstdint>

namespace zeus::batch_size {

// xoshiro256** (Blackman and Vigna), seeded through splitmix64. Uniform doubles
// take the top 53 bits; normals come from Box-Muller using two uniforms per draw
// (no cached spare, so the state stays the four words). Not thread-safe: one
// owner at a time.
class Rng {
 public:
  // `stream` separates independent streams made from one user seed (the
  // simulator's path sampling and the policy's draws, for instance).
  explicit Rng(std::uint64_t seed = 123456, std::uint64_t stream = 0);

  std::uint64_t next_u64();
  // Uniform in [0, 1).
  double uniform();
  // Uniform integer in [0, n), unbiased (rejection); n >= 1.
  std::uint64_t uniform_int(std::uint64_t n);
  // Standard normal N(0, 1).
  double normal();

  const std::array<std::uint64_t, 4>& state() const { return s_; }
  // The generator with exactly this state (see state_json.h for its JSON
  // form). The all-zero state is a fixed point: kInvalidArgument.
  static Rng from_state(const std::array<std::uint64_t, 4>& state);

  friend bool operator==(const Rng&, const Rng&) = default;

 private:
  std::array<std::uint64_t, 4> s_{};
};

}  // namespace zeus::batch_size
