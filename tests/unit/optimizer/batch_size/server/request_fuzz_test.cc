// Fuzzes the REST adapter with mutated request bodies and parameters (byte
// edits and JSON-level ones: wrong types, huge numbers, missing and unknown
// fields, long strings) against a real SQLite store. Every answer must be 2xx
// or a 4xx with a JSON message, never a 5xx or a crash, and the stored state
// must stay consistent: a reopened store continues where it was.
// ZEUS_FUZZ_ITERATIONS scales the run (a soak).
#include <gtest/gtest.h>

#include <cstdlib>
#include <future>

#include "unit/optimizer/batch_size/service_test_helpers.h"
#include "zeus/optimizer/batch_size/rng.h"
#include "zeus/optimizer/batch_size/server/http_api.h"

namespace zeus::batch_size {
namespace {

using batch_size::Rng;
using nlohmann::json;

int iterations() {
  const char* v = std::getenv("ZEUS_FUZZ_ITERATIONS");
  return v != nullptr ? std::max(1, std::atoi(v)) : 400;
}

std::size_t below(Rng& rng, std::size_t n) {
  return n == 0 ? 0 : static_cast<std::size_t>(rng.uniform_int(n));
}

// Captures the one answer of a dispatched request.
class Capture final : public http::detail::Exchange {
 public:
  void send(http::Response r) override {
    std::lock_guard l(mutex_);
    if (!done_) {
      done_ = true;
      promise_.set_value(std::move(r));
    }
  }
  std::shared_ptr<http::detail::EventSink> start_events(http::Headers) override {
    send(http::Response::error(500, "unexpected event stream"));
    return nullptr;
  }
  std::future<http::Response> future() { return promise_.get_future(); }

 private:
  std::mutex mutex_;
  bool done_ = false;
  std::promise<http::Response> promise_;
};

http::Response dispatch(const http::Router& router, http::Method m, const std::string& target,
                        const std::string& body) {
  http::Request req;
  req.method = m;
  req.target = target;
  http::split_target(target, req.path, req.query);
  req.body = body;
  auto capture = std::make_shared<Capture>();
  auto f = capture->future();
  router.dispatch(std::move(req), http::Responder(capture));
  return f.get();
}

json odd_value(Rng& rng) {
  switch (below(rng, 10)) {
    case 0:
      return 1e308;
    case 1:
      return -1;
    case 2:
      return "string";
    case 3:
      return nullptr;
    case 4:
      return json::array({1, 2});
    case 5:
      return json::object({{"a", 1}});
    case 6:
      return std::string(1000, 'x');
    case 7:
      return 9223372036854775807LL;
    case 8:
      return 0.5;
    default:
      return true;
  }
}

// A JSON-level mutation: change, drop or add a field.
std::string mutate_json(json j, Rng& rng) {
  if (!j.is_object() || j.empty()) return j.dump();
  auto it = j.begin();
  std::advance(it, static_cast<long>(below(rng, j.size())));
  switch (below(rng, 3)) {
    case 0:
      *it = odd_value(rng);
      break;
    case 1:
      j.erase(it);
      break;
    default:
      j["unexpected_" + std::to_string(below(rng, 5))] = odd_value(rng);
      break;
  }
  return j.dump();
}

std::string mutate_bytes(const std::string& seed, Rng& rng) {
  static const std::string kInteresting = ",\"\n{}[]:-.eE0123456789 \\nan inf\x00\xff";
  std::string s = seed;
  for (std::size_t e = 0, n = 1 + below(rng, 6); e < n; ++e) {
    switch (below(rng, 4)) {
      case 0:
        if (!s.empty()) s[below(rng, s.size())] = static_cast<char>(rng.next_u64() & 0xff);
        break;
      case 1:
        s.insert(below(rng, s.size() + 1), 1, kInteresting[below(rng, kInteresting.size())]);
        break;
      case 2:
        if (!s.empty()) s.erase(below(rng, s.size()), 1 + below(rng, 4));
        break;
      default:
        s.resize(below(rng, s.size() + 1));
        break;
    }
  }
  return s;
}

TEST(BatchSizeFuzzTest, MutatedRequestsGetA4xxAndLoseNothing) {
  testing::TempDir d;
  const std::string url = "sqlite:///" + d.path() + "/bso.db";
  std::int64_t last_trial = 0;
  {
    auto store = open_store(url);
    Service service(*store);
    http::Router router;
    add_routes(router, service);
    ASSERT_EQ(
        dispatch(router, http::Method::kPost, "/jobs", testing::workload_spec(1).dump()).status,
        201);
    Rng rng(2024);
    int accepted = 0;
    for (int i = 0; i < iterations(); ++i) {
      // A real trial to aim reports and failures at.
      auto t = dispatch(router, http::Method::kGet, "/jobs/batch_size?job_id=w1-001", "");
      ASSERT_EQ(t.status, 200) << t.body;
      const json trial = json::parse(t.body);
      last_trial = trial["trial_number"];
      const json report = {{"job_id", "w1-001"},         {"batch_size", trial["batch_size"]},
                           {"trial_number", last_trial}, {"time", 120.0},
                           {"energy", 30000.0},          {"metric", 0.6},
                           {"current_epoch", 3}};
      std::string target = "/report", body;
      http::Method method = http::Method::kPost;
      switch (below(rng, 5)) {
        case 0:
          body = mutate_json(report, rng);
          break;
        case 1:
          body = mutate_bytes(report.dump(), rng);
          break;
        case 2:
          target = "/jobs";
          body = below(rng, 2) ? mutate_json(testing::workload_spec(2), rng)
                               : mutate_bytes(testing::workload_spec(2).dump(), rng);
          break;
        case 3:
          target = "/trials";
          method = http::Method::kPatch;
          body = mutate_json({{"job_id", "w1-001"},
                              {"batch_size", trial["batch_size"]},
                              {"trial_number", last_trial}},
                             rng);
          break;
        default:
          method = http::Method::kGet;
          target =
              "/jobs/batch_size?job_id=" + http::url_encode(mutate_bytes("w1-001", rng)) +
              (below(rng, 2) ? "&idempotency_key=" + http::url_encode(mutate_bytes("k", rng)) : "");
          break;
      }
      const auto r = dispatch(router, method, target, body);
      ASSERT_LT(r.status, 500) << target << " " << body << " -> " << r.body;
      if (r.status >= 400) {
        const json j = json::parse(r.body);
        ASSERT_TRUE(j["message"].is_string()) << r.body;
      } else {
        ++accepted;
      }
      // Whatever happened, the trial can still be ended cleanly.
      dispatch(router, http::Method::kPost, "/report", report.dump());
    }
    EXPECT_GT(accepted, 0);
    store->close();
  }
  // Reopened, the job continues with the next trial number.
  auto store = open_store(url);
  Service service(*store);
  http::Router router;
  add_routes(router, service);
  const auto t = dispatch(router, http::Method::kGet, "/jobs/batch_size?job_id=w1-001", "");
  ASSERT_EQ(t.status, 200);
  EXPECT_GT(json::parse(t.body)["trial_number"].get<std::int64_t>(), last_trial);
}

}  // namespace
}  // namespace zeus::batch_size
