#include "fake_openai_helpers.h"

#include <chrono>
#include <nlohmann/json.hpp>

namespace zeus::proxy::testing {

using ojson = nlohmann::ordered_json;

struct FakeOpenAiServer::Generation {
  bool chat = true;
  bool stream = false;
  bool include_usage = false;
  std::string model;
  std::int64_t prompt_tokens = 0;
  std::int64_t max_tokens = 8;
  std::int64_t produced = 0;
  std::string text;
  std::string id;
  std::optional<http::Responder> responder;  // non-streaming
  http::EventStream events;                  // streaming
};

namespace {

// One word is one token, as far as this fake is concerned.
std::int64_t count_words(const std::string& s) {
  std::int64_t n = 0;
  bool in_word = false;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n' || c == '\t';
    if (!space && !in_word) ++n;
    in_word = !space;
  }
  return n;
}

ojson chunk_head(const std::string& id, bool chat, const std::string& model) {
  ojson j;
  j["id"] = id;
  j["object"] = chat ? "chat.completion.chunk" : "text_completion";
  j["created"] = 1700000000;
  j["model"] = model;
  return j;
}

ojson usage_of(std::int64_t prompt, std::int64_t completion) {
  return {{"prompt_tokens", prompt},
          {"completion_tokens", completion},
          {"total_tokens", prompt + completion}};
}

}  // namespace

FakeOpenAiServer::FakeOpenAiServer(FakeServerOptions options) : options_(std::move(options)) {
  http::Router router;
  const auto completion = [this](bool chat) {
    return [this, chat](http::Request request, http::Responder responder) {
      const auto body = nlohmann::json::parse(request.body, nullptr, false);
      if (!body.is_object()) {
        return responder.send(http::Response::error(400, "not JSON"));
      }
      if (options_.reject_stream_options && body.contains("stream_options")) {
        std::lock_guard lock(mutex_);
        bodies_.push_back(request.body);
        return responder.send(http::Response::error(400, "unknown field stream_options"));
      }
      auto g = std::make_shared<Generation>();
      g->chat = chat;
      g->stream = body.value("stream", false);
      g->include_usage = g->stream && body.contains("stream_options") &&
                         body["stream_options"].value("include_usage", false);
      g->model = body.value("model", std::string("fake-model"));
      g->max_tokens = body.value("max_tokens", 8);
      if (chat && body.contains("messages")) {
        for (const auto& m : body["messages"]) {
          g->prompt_tokens += count_words(m.value("content", std::string()));
        }
      } else {
        g->prompt_tokens = count_words(body.value("prompt", std::string()));
      }
      std::lock_guard lock(mutex_);
      bodies_.push_back(request.body);
      g->id = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(bodies_.size());
      if (g->stream) {
        g->events = responder.start_events();
        if (chat) {  // the role chunk that opens a chat stream (no token)
          ojson j = chunk_head(g->id, chat, g->model);
          j["choices"] = ojson::array({{{"index", 0},
                                        {"delta", {{"role", "assistant"}, {"content", ""}}},
                                        {"finish_reason", nullptr}}});
          g->events.send(j.dump());
        }
      } else {
        g->responder = responder;
      }
      waiting_.push_back(std::move(g));
      changed_.notify_all();
    };
  };
  router.route_async(http::Method::kPost, "/v1/chat/completions", completion(true));
  router.route_async(http::Method::kPost, "/v1/completions", completion(false));
  router.route(http::Method::kGet, "/v1/models", [](const http::Request&) {
    ojson j;
    j["object"] = "list";
    j["data"] = ojson::array({{{"id", "fake-model"}, {"object", "model"}, {"owned_by", "zeus"}}});
    http::Response r;
    r.headers.set("Content-Type", "application/json");
    r.body = j.dump();
    return r;
  });
  http::ServerOptions so;
  so.threads = 2;
  server_ = std::make_unique<http::Server>(std::move(router), so);
  port_ = server_->listen_tcp("127.0.0.1", 0);
  server_->start();
  engine_ = std::thread([this] { engine(); });
}

FakeOpenAiServer::~FakeOpenAiServer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  engine_.join();
  server_->shutdown();
}

void FakeOpenAiServer::engine() {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<std::shared_ptr<Generation>> batch;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || !running_.empty() ||
               static_cast<int>(waiting_.size()) >= (started_ ? 1 : options_.start_together);
      });
      if (stopping_) return;
      started_ = true;
      while (!waiting_.empty() && static_cast<int>(running_.size()) < options_.max_batch) {
        running_.push_back(std::move(waiting_.front()));
        waiting_.pop_front();
      }
      batch = running_;
      if (options_.gpu) {
        options_.gpu->set_load(static_cast<double>(batch.size()) / options_.max_batch);
      }
    }
    // The step's work takes its time; tokens come out at its end.
    next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.step);
    std::this_thread::sleep_until(next);
    std::vector<std::shared_ptr<Generation>> done;
    std::size_t cancelled = 0;
    for (auto& g : batch) {
      const std::string token = "t" + std::to_string(g->produced) + " ";
      ++g->produced;
      g->text += token;
      const bool last = g->produced >= g->max_tokens;
      if (g->stream) {
        ojson j = chunk_head(g->id, g->chat, g->model);
        ojson choice = {{"index", 0}};
        if (g->chat) {
          choice["delta"] = {{"content", token}};
        } else {
          choice["text"] = token;
        }
        choice["finish_reason"] = last ? ojson("length") : ojson(nullptr);
        j["choices"] = ojson::array({choice});
        if (!g->events.send(j.dump())) {
          ++cancelled;
          done.push_back(g);
          continue;
        }
        if (last) {
          if (g->include_usage) {
            ojson u = chunk_head(g->id, g->chat, g->model);
            u["choices"] = ojson::array();
            u["usage"] = usage_of(g->prompt_tokens, g->produced);
            g->events.send(u.dump());
          }
          g->events.send("[DONE]");
          g->events.close();
          done.push_back(g);
        }
      } else if (last) {
        ojson j;
        j["id"] = g->id;
        j["object"] = g->chat ? "chat.completion" : "text_completion";
        j["created"] = 1700000000;
        j["model"] = g->model;
        ojson choice = {{"index", 0}};
        if (g->chat) {
          choice["message"] = {{"role", "assistant"}, {"content", g->text}};
        } else {
          choice["text"] = g->text;
        }
        choice["finish_reason"] = "length";
        j["choices"] = ojson::array({choice});
        j["usage"] = usage_of(g->prompt_tokens, g->produced);
        http::Response r;
        r.headers.set("Content-Type", "application/json");
        r.body = j.dump();
        g->responder->send(std::move(r));
        done.push_back(g);
      }
    }
    std::lock_guard lock(mutex_);
    for (auto& g : done) std::erase(running_, g);
    cancelled_ += cancelled;
    completed_ += done.size() - cancelled;
    if (running_.empty() && waiting_.empty() && options_.gpu) options_.gpu->set_load(0.0);
    if (running_.empty()) next = std::chrono::steady_clock::now();
    changed_.notify_all();
  }
}

std::size_t FakeOpenAiServer::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}
std::size_t FakeOpenAiServer::completed() const {
  std::lock_guard lock(mutex_);
  return completed_;
}
std::vector<std::string> FakeOpenAiServer::bodies() const {
  std::lock_guard lock(mutex_);
  return bodies_;
}
bool FakeOpenAiServer::wait_cancelled(std::size_t n, Seconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, std::chrono::duration<double>(timeout.count()),
                           [&] { return cancelled_ >= n; });
}

}  // namespace zeus::proxy::testing
