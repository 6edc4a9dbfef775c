// The pieces every replay shares (simulator.cc's recurring jobs, alibaba.cc's
// group trace): driving a policy through the seam with every answer checked,
// and simulating one run of the trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zeus/optimizer/batch_size/policy.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/sim/trace.h"
#include "zeus/util/error.h"

namespace zeus::sim {

// Distinct RNG stream for path sampling; the policy uses stream 0 of the seed.
inline constexpr std::uint64_t kPathStream = 0x7061746873ULL;  // "paths"

// What the policy decided for one run.
struct Decision {
  batch_size::BatchSizeChoice choice;
  Milliwatts power_limit{0};
  bool profile = false;  // the run pays the just-in-time profiling epoch
  int batch_size() const { return choice.batch_size; }
};

// Drives one policy through the seam and checks what it returns, so a broken
// policy is an error naming it and the job, never a crash.
class PolicyDriver {
 public:
  // `t` and `p` are kept by reference: they must outlive the driver.
  PolicyDriver(const WorkloadTrace& t, batch_size::Policy& p, std::string name, double eta);
  PolicyDriver(WorkloadTrace&& t, batch_size::Policy& p, std::string name, double eta) = delete;

  // Asks the batch-size half, then the power-limit half (profiling first when
  // it asks for it).
  Decision decide();
  // A run at `batch_size` that the batch-size half did not choose (the Alibaba
  // replay's concurrent submissions): only asks for its power limit, which
  // must be known already.
  Decision decide_at(int batch_size, batch_size::TrialKind kind);
  void observe(const Decision& d, Joules cost, bool reached);
  const std::string& name() const { return name_; }

 private:
  const BatchSizeTrace& checked_batch(int batch_size) const;
  std::optional<Milliwatts> predict_limit(int batch_size);
  void check_limit(const BatchSizeTrace& b, Milliwatts pl) const;
  std::string where() const;
  [[noreturn]] void fail(ErrorCode code, const std::string& what) const;
  // Runs a call into the policy; what it throws comes back naming the policy.
  template <typename F>
  auto guard(const char* doing, F&& f) -> decltype(f());

  const WorkloadTrace& trace_;
  batch_size::Policy& policy_;
  std::string name_;
  double eta_;
};

struct RunOutcome {
  Joules energy{0.0};
  Seconds time{0.0};
  bool reached = false;
  // The cap allowed no epoch at all ("could not run").
  bool could_not_run() const { return energy.value() == 0 && time.count() == 0 && !reached; }
};

// One run (_run_job): sample a path, cap the epochs, account the profiling epoch.
RunOutcome run_job(const WorkloadTrace& t, int recurrence, const Decision& d, Joules cost_ub,
                   double eta, batch_size::Rng& rng);

Joules cost_of(const RunOutcome& out, double eta, Watts max_power);

}  // namespace zeus::sim
