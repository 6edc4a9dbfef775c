// Splits measured GPU energy over the inference requests that caused it.
//
// Time is cut into slices; the caller closes a slice with the energy the GPUs
// used during it (a counter difference). Within a slice, every request that
// was active in it gets a share of the slice's energy in proportion to its
// weight: the output (decode) tokens it produced in the slice. Prompt tokens
// do not weigh: a continuous-batching server gives every running request one
// token per engine step, so a request's output-token share of a slice is its
// share of the batch slots the slice's steps ran, which is what the energy
// paid for, and the proxy sees output tokens as they stream, whereas prompt
// counts arrive only with the final usage (prefill is charged to the requests
// running beside it in that slice; see docs/proxy.md for the consequences).
//
// A request whose tokens cannot be seen as they come (a non-streaming
// request) weighs the mean weight of the streaming requests of the slice
// (the batch's per-request rate), or 1 when none streamed. A slice whose
// active requests produced no token at all (all waiting for their prefill)
// is split equally among them: the GPU worked for them. A slice with no
// active request is idle energy, reported on its own and never spread.
//
// Conservation: every joule passed to close_slice() is either given to a
// request or counted as idle, so per-request energy + idle = measured (to
// floating-point rounding). close_slice() costs O(requests active in the
// slice). Not thread-safe: the caller serializes (the proxy holds a mutex).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "zeus/util/units.h"

namespace zeus::proxy {

using RequestId = std::uint64_t;

// A request whose energy is final: it ended in the slice just closed.
struct FinishedRequest {
  RequestId id = 0;
  Joules energy{0.0};
  double tokens = 0;  // output tokens the attributor saw (streaming), else 0
};

class Attributor {
 public:
  // Starts attributing to `id` from the open slice on. `tokens_observed`:
  // whether add_tokens() will report its output tokens as they come (a
  // stream); otherwise it weighs the slice's mean. kAlreadyExists for an id
  // still active.
  void begin(RequestId id, bool tokens_observed);
  // Output tokens `id` produced in the open slice. kNotFound for an unknown
  // id; kInvalidArgument for a negative or non-finite count.
  void add_tokens(RequestId id, double tokens);
  // The request ends with the open slice: it still shares that slice, and
  // close_slice() returns its final energy. Unknown ids are kNotFound.
  void end(RequestId id);
  // Closes the open slice, whose measured energy is `energy` (kInvalidArgument
  // when negative or not finite), and opens the next one. Returns the
  // requests that ended in it, with their whole energy.
  std::vector<FinishedRequest> close_slice(Joules energy);

  // Energy given to `id` so far (closed slices only); nullopt once finished.
  std::optional<Joules> energy_of(RequestId id) const;
  std::size_t active() const { return entries_.size(); }
  Joules measured() const { return measured_; }
  Joules attributed() const { return attributed_; }  // to requests, finished or not
  Joules idle() const { return idle_; }
  std::uint64_t slices() const { return slices_; }

 private:
  struct Entry {
    RequestId id;
    bool observed;
    bool ending = false;
    double slice_tokens = 0;  // in the open slice
    double total_tokens = 0;
    double energy = 0;  // joules, closed slices
  };
  Entry& find(RequestId id);

  std::vector<Entry> entries_;                        // the active requests; order is irrelevant
  std::unordered_map<RequestId, std::size_t> index_;  // id -> position in entries_
  Joules measured_{0.0};
  Joules attributed_{0.0};
  Joules idle_{0.0};
  std::uint64_t slices_ = 0;
};

}  // namespace zeus::proxy
