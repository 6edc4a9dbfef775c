// Combining per-process values across the ranks of a distributed job, so the
// power-limit optimizer of every rank sees the same measurement and makes the
// same choice. The optimizer needs two all-reduce operations: a sum (energy of
// all GPUs of all ranks) and a max (time of the slowest rank).
#pragma once

namespace zeus::power_limit {

// An all-reduce over the ranks of a job. Every rank must make the same calls
// in the same order (they are collective operations). Implementations say
// their own thread-safety; the optimizer calls them from the training thread.
class Reducer {
 public:
  virtual ~Reducer() = default;
  virtual double all_reduce_sum(double local) = 0;
  virtual double all_reduce_max(double local) = 0;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
};

// The single-process reducer: every reduction returns its input. Stateless,
// thread-safe.
class LocalReducer final : public Reducer {
 public:
  double all_reduce_sum(double local) override { return local; }
  double all_reduce_max(double local) override { return local; }
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
};

}  // namespace zeus::power_limit
