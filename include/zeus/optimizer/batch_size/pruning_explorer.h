// The Zeus pruning exploration stage: rounds of a down-then-up walk over the
// batch sizes from a default one; a direction stops at its first failure; the
// next round starts from the cheapest survivor and visits only survivors.
// The state is the exploration history, so out-of-order (concurrent) reports
// and cancelled trials need no special cases. Not thread-safe. JSON form:
// state_json.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::batch_size {

class PruningExplorer {
 public:
  enum class Action {
    kExplore,  // run `batch_size` as the next exploration
    kWait,     // the walk waits on an exploration still in flight
    kDone,     // all rounds are complete; survivors() are the result
  };
  struct Step {
    Action action;
    int batch_size = 0;
  };
  // One exploration trial of one batch size.
  struct Exploration {
    std::int64_t trial_id = 0;
    bool done = false;
    bool converged = false;
    Joules cost{0};
  };
  // Per batch size, in dispatch order.
  using History = std::map<int, std::vector<Exploration>>;

  // `batch_sizes` non-empty and distinct, `default_batch_size` among them,
  // num_rounds >= 0; else kInvalidArgument.
  PruningExplorer(std::vector<int> batch_sizes, int default_batch_size, int num_rounds,
                  History history = {});

  // What to do next; a pure function of the history.
  Step next() const;
  // Records that exploration trial `trial_id` of `batch_size` was dispatched.
  void dispatched(std::int64_t trial_id, int batch_size);
  // Records its outcome. Returns false if the trial is not a pending exploration.
  bool finished(std::int64_t trial_id, Joules cost, bool converged);
  // Forgets a dispatched trial that will never report (client died); the
  // batch size is explored again.
  bool cancelled(std::int64_t trial_id);
  bool is_pending(std::int64_t trial_id) const;

  // The final survivors (ascending); only meaningful once next() is kDone. If
  // a round ends with no survivor, the previous round's list stands.
  std::vector<int> survivors() const;
  // The first round (0-based) that ended with no survivor, if any.
  std::optional<int> round_without_survivor() const;

  const std::vector<int>& batch_sizes() const { return batch_sizes_; }
  int default_batch_size() const { return default_; }
  int num_rounds() const { return num_rounds_; }
  const History& history() const { return history_; }

 private:
  // Walks the rounds; stops at the first exploration to issue or to wait on.
  Step walk(std::vector<int>* survivors, std::optional<int>* empty_round) const;

  std::vector<int> batch_sizes_;
  int default_;
  int num_rounds_;
  History history_;
};

}  // namespace zeus::batch_size
