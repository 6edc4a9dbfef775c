// The HTTP layer end to end on loopback and Unix sockets: routing, limits,
// timeouts, asynchronous answers, event streams, graceful shutdown, client.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "http/connection.h"
#include "http/server.h"
#include "zeus/http/client.h"
#include "zeus/util/error.h"

namespace zeus::http {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

nlohmann::json body_json(const Response& r) { return nlohmann::json::parse(r.body); }

std::string temp_dir() {
  std::string t = (std::filesystem::temp_directory_path() / "zeus_http_XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) throw std::runtime_error("mkdtemp");
  return t;
}

// Sends raw bytes on a fresh TCP connection and returns everything the
// server sends until it closes (or 5 s pass).
std::string raw_exchange(int port, const std::string& bytes, std::chrono::milliseconds pause = 0ms,
                         const std::string& more = "") {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "connect failed";
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)!::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  if (pause > 0ms) std::this_thread::sleep_for(pause);
  if (!more.empty()) (void)!::send(fd, more.data(), more.size(), MSG_NOSIGNAL);
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

Router echo_router() {
  Router r;
  r.route(Method::kGet, "/hello", [](const Request& q) {
    return Response::json(200, {{"path", q.path},
                                {"name", std::string(q.query_param("name").value_or("-"))},
                                {"remote_set", !q.remote.empty()}});
  });
  r.route(Method::kPost, "/echo", [](const Request& q) { return Response::text(200, q.body); });
  r.route(Method::kGet, "/not-found",
          [](const Request&) -> Response { throw Error(ErrorCode::kNotFound, "no such job x"); });
  r.route(Method::kGet, "/crash",
          [](const Request&) -> Response { throw std::runtime_error("secret detail"); });
  r.route_async(Method::kGet, "/drop", [](Request, Responder) {});
  return r;
}

struct Running {
  explicit Running(Router r, ServerOptions o = {}) : server(std::move(r), std::move(o)) {
    port = server.listen_tcp("127.0.0.1", 0);
    server.start();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  Server server;
  int port = 0;
};

TEST(HttpServer, AnswersJsonAndKeepsTheConnectionAlive) {
  Running s(echo_router());
  Client c(s.url());
  for (int i = 0; i < 3; ++i) {
    const auto r = c.get("/hello?name=a%20b+c&x=1");
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.headers.get("content-type").value_or(""), "application/json");
    const auto j = body_json(r);
    EXPECT_EQ(j["path"], "/hello");
    EXPECT_EQ(j["name"], "a b c");
    EXPECT_TRUE(j["remote_set"]);
  }
  EXPECT_EQ(s.server.connections(), 1u);  // one keep-alive connection served all three
}

TEST(HttpServer, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  Running s(echo_router());
  Client c(s.url());
  auto r = c.get("/nope");
  EXPECT_EQ(r.status, 404);
  EXPECT_THAT(body_json(r)["message"].get<std::string>(), HasSubstr("/nope"));
  r = c.request(Method::kDelete, "/echo");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers.get("Allow").value_or(""), "POST");
  EXPECT_TRUE(body_json(r).contains("message"));
}

TEST(HttpServer, PathSegmentsCaptureIntoPathParams) {
  Router r;
  r.route(Method::kPost, "/register_rank/{job_id}", [](const Request& q) {
    return Response::json(200, {{"job", std::string(q.path_param("job_id"))},
                                {"other", std::string(q.path_param("other"))}});
  });
  r.route(Method::kGet, "/a/{x}/b/{y}", [](const Request& q) {
    return Response::json(200,
                          std::string(q.path_param("x")) + "|" + std::string(q.path_param("y")));
  });
  r.route(Method::kGet, "/register_rank/fixed",
          [](const Request&) { return Response::json(200, "exact"); });
  Running s(std::move(r));
  Client c(s.url());
  auto res = c.post_json("/register_rank/2024-05-01-10-00-00+dp1+pp2%20x", "{}");
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(body_json(res)["job"], "2024-05-01-10-00-00+dp1+pp2 x");  // '+' stays, %20 decodes
  EXPECT_EQ(body_json(res)["other"], "");
  EXPECT_EQ(body_json(c.get("/a/1/b/two")), "1|two");
  EXPECT_EQ(body_json(c.get("/register_rank/fixed")), "exact");  // exact routes win
  EXPECT_EQ(c.get("/register_rank/").status, 404);               // an empty segment never matches
  EXPECT_EQ(c.get("/register_rank/a/b").status, 404);            // one segment only
  EXPECT_EQ(c.get("/a/1/c/2").status, 404);
  res = c.get("/register_rank/job");  // a known pattern with another method
  EXPECT_EQ(res.status, 405);
  EXPECT_EQ(res.headers.get("Allow").value_or(""), "POST");
}

TEST(HttpServer, HandlerErrorsBecomeJsonErrors) {
  Running s(echo_router());
  Client c(s.url());
  auto r = c.get("/not-found");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(body_json(r)["message"], "no such job x");
  r = c.get("/crash");
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, Not(HasSubstr("secret")));
  r = c.get("/drop");  // a handler that lost its Responder does not hang the client
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(c.get("/hello").status, 200);  // the connection is still usable
}

TEST(HttpServer, BodyOverTheLimitIs413) {
  ServerOptions o;
  o.max_body_bytes = 1024;
  Running s(echo_router(), o);
  Client c(s.url());
  EXPECT_EQ(c.post_json("/echo", std::string(1000, 'x')).status, 200);
  const auto r = c.post_json("/echo", std::string(200000, 'x'));
  EXPECT_EQ(r.status, 413);
  EXPECT_THAT(body_json(r)["message"].get<std::string>(), HasSubstr("1024 bytes"));
  EXPECT_EQ(c.get("/hello").status, 200);  // the client reconnects after the close
}

TEST(HttpServer, SlowRequestIs408AndMalformedIs400AndHugeHeadIs431) {
  ServerOptions o;
  o.request_timeout = Seconds(0.2);
  o.max_header_bytes = 2048;
  Running s(echo_router(), o);
  const auto slow =
      raw_exchange(s.port, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab");
  EXPECT_THAT(slow, HasSubstr("HTTP/1.1 408"));
  EXPECT_THAT(slow, HasSubstr("\"message\""));
  EXPECT_THAT(raw_exchange(s.port, "GARBAGE\r\n\r\n"), HasSubstr("HTTP/1.1 400"));
  EXPECT_THAT(
      raw_exchange(s.port, "GET /hello HTTP/1.1\r\nX: " + std::string(4000, 'a') + "\r\n\r\n"),
      HasSubstr("HTTP/1.1 431"));
  EXPECT_THAT(raw_exchange(s.port, "GET /hello?a=%zz HTTP/1.1\r\nHost: x\r\n\r\n"),
              HasSubstr("HTTP/1.1 400"));
}

// Reading a request and writing its answer have bounds of their own: a
// short request_timeout does not cut off a large answer to a slow reader.
TEST(HttpServer, TheRequestReadIsTimedApartFromTheAnswer) {
  const std::string big(8 << 20, 'z');
  Router r;
  r.route(Method::kGet, "/big", [&](const Request&) { return Response::text(200, big); });
  ServerOptions o;
  o.request_timeout = Seconds(0.2);
  o.response_timeout = Seconds(10);
  Running s(std::move(r), o);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 16 << 10;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string get = "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  std::this_thread::sleep_for(600ms);  // three request timeouts without reading
  std::size_t got = 0;
  std::vector<char> buf(1 << 16);
  for (ssize_t n; (n = ::recv(fd, buf.data(), buf.size(), 0)) > 0;)
    got += static_cast<std::size_t>(n);
  ::close(fd);
  EXPECT_GT(got, big.size()) << "the answer was cut off after " << got << " bytes";
  // The request side keeps its own short bound.
  EXPECT_THAT(raw_exchange(s.port, "GET /big HTTP/1.1\r\nHost: x\r\nX-Slow: "),
              HasSubstr("HTTP/1.1 408"));
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  Running s(echo_router());
  const auto out =
      raw_exchange(s.port,
                   "POST /echo HTTP/1.1\r\nContent-Length: 3\r\n\r\none"
                   "POST /echo HTTP/1.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\ntwo");
  const auto one = out.find("one"), two = out.find("two");
  ASSERT_NE(one, std::string::npos);
  ASSERT_NE(two, std::string::npos);
  EXPECT_LT(one, two);
}

TEST(HttpServer, IdleConnectionIsClosedAndTheClientReconnects) {
  ServerOptions o;
  o.idle_timeout = Seconds(0.1);
  Running s(echo_router(), o);
  Client c(s.url());
  EXPECT_EQ(c.get("/hello").status, 200);
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(s.server.connections(), 0u);
  EXPECT_EQ(c.get("/hello").status, 200);  // stale connection: sent again on a new one
}

TEST(HttpServer, ServesAUnixSocketAndReplacesOnlyStaleOnes) {
  const auto dir = temp_dir();
  const auto path = dir + "/zeus.sock";
  {
    Server server(echo_router());
    server.listen_unix(path, 0660u);
    server.start();
    EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
              std::filesystem::perms(0660));
    Client c("unix:" + path);
    EXPECT_EQ(c.get("/hello").status, 200);
    Server second(echo_router());
    try {
      second.listen_unix(path);
      ADD_FAILURE() << "a live socket was replaced";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kAlreadyExists);
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path));  // removed at shutdown
  std::ofstream(dir + "/file") << "user data";
  Server third(echo_router());
  EXPECT_THROW(third.listen_unix(dir + "/file"), Error);
  std::ifstream in(dir + "/file");
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "user data");
  std::filesystem::remove_all(dir);
}

// Issue 20: stopping an old server must not remove what now sits at its path:
// a newer server's live socket, or a user's file.
TEST(HttpServer, AUnixSocketAppearsListeningWithItsModeAndNothingBeside) {
  // Staged under another name and renamed into place: a client that sees the
  // path can connect at once, and the mode was set before it appeared.
  const auto dir = temp_dir();
  const auto path = dir + "/zeus.sock";
  Server server(echo_router());
  server.listen_unix(path, 0600);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_EQ(names, std::vector<std::string>{"zeus.sock"}) << "a staging file was left";
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  server.start();
  EXPECT_EQ(Client("unix:" + path).get("/hello").status, 200);
  // A second server on the same path is refused, and leaves no staging file.
  Server second(echo_router());
  EXPECT_THROW(second.listen_unix(path), Error);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  server.shutdown();
}

TEST(HttpServer, StoppingRemovesOnlyTheSocketItCreated) {
  const auto dir = temp_dir();
  const auto path = dir + "/zeus.sock";
  auto old_server = std::make_unique<Server>(echo_router());
  old_server->listen_unix(path);
  old_server->start();
  std::filesystem::remove(path);  // an operator (or a newer daemon's start-up) removed it
  Server newer(echo_router());
  newer.listen_unix(path);
  newer.start();
  old_server.reset();  // the old one stops
  ASSERT_TRUE(std::filesystem::exists(path)) << "the newer server's socket was removed";
  EXPECT_EQ(Client("unix:" + path).get("/hello").status, 200);
  newer.shutdown();
  EXPECT_FALSE(std::filesystem::exists(path));  // its own socket it removes
  // A user's file put where a stopped server's socket was is not deleted either.
  const auto other = dir + "/other.sock";
  {
    Server server(echo_router());
    server.listen_unix(other);
    server.start();
    std::filesystem::remove(other);
    std::ofstream(other) << "user data";
  }
  std::ifstream in(other);
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "user data");
  std::filesystem::remove_all(dir);
}

TEST(HttpServer, BusyPortIsAClearError) {
  Running s(echo_router());
  Server other(echo_router());
  try {
    other.listen_tcp("127.0.0.1", s.port);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_THAT(e.what(), HasSubstr(std::to_string(s.port)));
  }
  EXPECT_THROW(other.listen_tcp("not-an-ip", 0), Error);
}

// Requests parked by a handler and answered later from another thread.
struct Parking {
  std::mutex m;
  std::condition_variable cv;
  std::vector<Responder> parked;
  void park(Responder r) {
    std::lock_guard l(m);
    parked.push_back(std::move(r));
    cv.notify_all();
  }
  void wait_for(std::size_t n) {
    std::unique_lock l(m);
    cv.wait(l, [&] { return parked.size() >= n; });
  }
  void answer_all(int status) {
    std::lock_guard l(m);
    for (auto& r : parked) r.send(Response::json(status, {{"ok", true}}));
    parked.clear();
  }
};

TEST(HttpServer, AsyncAnswerHoldsNoThread) {
  Parking parking;
  Router r = echo_router();
  r.route_async(Method::kGet, "/wait", [&](Request, Responder resp) { parking.park(resp); });
  ServerOptions o;
  o.threads = 1;  // one I/O thread: a parked request must not block others
  Running s(std::move(r), o);
  std::vector<std::future<int>> waiting;
  for (int i = 0; i < 4; ++i) {
    waiting.push_back(
        std::async(std::launch::async, [&] { return Client(s.url()).get("/wait").status; }));
  }
  parking.wait_for(4);
  Client c(s.url());
  EXPECT_EQ(c.get("/hello").status, 200);  // served while four requests wait
  parking.answer_all(201);
  for (auto& f : waiting) EXPECT_EQ(f.get(), 201);
}

TEST(HttpServer, GracefulShutdownFinishesInFlightRequests) {
  Parking parking;
  Router r = echo_router();
  r.route_async(Method::kGet, "/wait", [&](Request, Responder resp) { parking.park(resp); });
  auto s = std::make_unique<Running>(std::move(r));
  const std::string url = s->url();
  Client idle(url);
  EXPECT_EQ(idle.get("/hello").status, 200);  // an idle keep-alive connection
  auto in_flight = std::async(std::launch::async, [&] {
    Client c(url);
    const auto resp = c.get("/wait");
    return std::make_pair(resp.status, std::string(resp.headers.get("Connection").value_or("")));
  });
  parking.wait_for(1);
  auto stopping = std::async(std::launch::async, [&] { s->server.shutdown(); });
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(stopping.wait_for(0ms), std::future_status::timeout);  // waits for the request
  Client late(url);
  EXPECT_THROW(late.get("/hello"), Error);  // no longer accepting
  parking.answer_all(200);
  const auto [status, connection] = in_flight.get();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(connection, "close");
  stopping.get();
}

TEST(HttpServer, ShutdownGivesUpOnHandlersThatNeverAnswer) {
  Parking parking;
  Router r;
  r.route_async(Method::kGet, "/never", [&](Request, Responder resp) { parking.park(resp); });
  ServerOptions o;
  o.drain_timeout = Seconds(0.2);
  auto s = std::make_unique<Running>(std::move(r), o);
  auto stuck = std::async(std::launch::async, [&] {
    try {
      return Client(s->url()).get("/never").status;
    } catch (const Error&) {
      return -1;
    }
  });
  parking.wait_for(1);
  s->server.shutdown();
  EXPECT_EQ(stuck.get(), -1);
  parking.answer_all(200);  // answering after shutdown is harmless
  s.reset();
}

// HTTP/1.1: an event stream is a chunked body that ends with its last
// chunk, and the connection then serves the next request, even one the
// client sent while the stream was still running (pipelined). HTTP/1.0
// (no chunked encoding): the body ends with the connection.
TEST(HttpServer, AnEventStreamIsChunkedAndTheConnectionServesTheNextRequest) {
  Router r = echo_router();
  r.route_async(Method::kGet, "/ev", [](Request, Responder resp) {
    auto events = resp.start_events();
    std::thread([events]() mutable {
      std::this_thread::sleep_for(50ms);  // the next request arrives meanwhile
      events.send("one");
      events.send("two");
      events.close();
    }).detach();
  });
  Running s(std::move(r));
  const std::string out =
      raw_exchange(s.port,
                   "GET /ev HTTP/1.1\r\nHost: x\r\n\r\n"
                   "GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  const auto body_at = out.find("\r\n\r\n");
  ASSERT_NE(body_at, std::string::npos) << out;
  const std::string head = out.substr(0, body_at);
  EXPECT_THAT(head, HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(head, Not(HasSubstr("Connection: close")));
  const std::string chunks_then_next =
      "b\r\ndata: one\n\n\r\nb\r\ndata: two\n\n\r\n0\r\n\r\nHTTP/1.1 200";
  EXPECT_EQ(out.substr(body_at + 4, chunks_then_next.size()), chunks_then_next);
  EXPECT_THAT(out, HasSubstr("\"path\":\"/hello\""));

  const std::string old = raw_exchange(s.port, "GET /ev HTTP/1.0\r\n\r\n");
  EXPECT_THAT(old, HasSubstr("Connection: close"));
  EXPECT_THAT(old, Not(HasSubstr("chunked")));
  EXPECT_THAT(old, EndsWith("\r\n\r\ndata: one\n\ndata: two\n\n"));
}

TEST(HttpServer, EventStreamDeliversEventsToManySubscribers) {
  std::mutex m;
  std::vector<EventStream> streams;
  std::atomic<int> closed{0};
  Router r;
  r.route_async(Method::kGet, "/events", [&](Request, Responder resp) {
    auto stream = resp.start_events();
    stream.on_close([&] { ++closed; });
    std::lock_guard l(m);
    streams.push_back(stream);
  });
  ServerOptions o;
  o.threads = 2;
  Running s(std::move(r), o);
  constexpr int kSubscribers = 100;
  std::vector<std::future<std::vector<Event>>> subs;
  for (int i = 0; i < kSubscribers; ++i) {
    subs.push_back(std::async(std::launch::async, [&] {
      std::vector<Event> got;
      Client(s.url()).stream_events("/events", [&](const Event& e) {
        got.push_back(e);
        return got.size() < 3;
      });
      return got;
    }));
  }
  for (;;) {
    {
      std::lock_guard l(m);
      if (streams.size() == kSubscribers) break;
    }
    std::this_thread::sleep_for(5ms);
  }
  {
    std::lock_guard l(m);
    for (auto& st : streams) {
      EXPECT_TRUE(st.send("{\"power\": 1}", "power", "1"));
      EXPECT_TRUE(st.send("line one\nline two"));
      EXPECT_TRUE(st.comment("keep-alive"));
      EXPECT_TRUE(st.send("third"));
    }
  }
  for (auto& f : subs) {
    const auto got = f.get();
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].event, "power");
    EXPECT_EQ(got[0].id, "1");
    EXPECT_EQ(got[0].data, "{\"power\": 1}");
    EXPECT_EQ(got[1].data, "line one\nline two");
    EXPECT_EQ(got[2].data, "third");
  }
  // The clients left; the server notices on its next writes (or reads).
  for (int i = 0; i < 200 && closed.load() < kSubscribers; ++i) {
    std::lock_guard l(m);
    for (auto& st : streams) st.comment("ping");
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(closed.load(), kSubscribers);
  std::lock_guard l(m);
  EXPECT_FALSE(streams.front().send("after close"));
}

TEST(HttpServer, ShutdownEndsEventStreams) {
  std::promise<EventStream> opened;
  Router r;
  r.route_async(Method::kGet, "/events",
                [&](Request, Responder resp) { opened.set_value(resp.start_events()); });
  auto s = std::make_unique<Running>(std::move(r));
  auto sub = std::async(std::launch::async, [&] {
    int n = 0;
    Client(s->url()).stream_events("/events", [&](const Event&) { return ++n < 100; });
    return n;
  });
  auto stream = opened.get_future().get();
  stream.send("one");
  s->server.shutdown();
  EXPECT_EQ(sub.get(), 1);
  EXPECT_FALSE(stream.is_open());
}

TEST(HttpServer, AccessLogSeesEveryRequest) {
  std::mutex m;
  std::vector<AccessLogEntry> log;
  ServerOptions o;
  o.access_log = [&](const AccessLogEntry& e) {
    std::lock_guard l(m);
    log.push_back(e);
  };
  Running s(echo_router(), o);
  Client c(s.url());
  c.post_json("/echo", "{}");
  c.get("/nope?x=1");
  s.server.shutdown();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].method, Method::kPost);
  EXPECT_EQ(log[0].target, "/echo");
  EXPECT_EQ(log[0].status, 200);
  EXPECT_EQ(log[0].request_bytes, 2u);
  EXPECT_EQ(log[1].status, 404);
  EXPECT_EQ(log[1].target, "/nope?x=1");
  EXPECT_GE(log[1].duration.count(), 0.0);
}

TEST(HttpClient, TimesOutAndRejectsBadUrls) {
  Parking parking;
  Router r;
  r.route_async(Method::kGet, "/never", [&](Request, Responder resp) { parking.park(resp); });
  Running s(std::move(r));
  ClientOptions o;
  o.request_timeout = Seconds(0.2);
  Client c(s.url(), o);
  try {
    c.get("/never");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTimeout);
  }
  parking.answer_all(200);
  EXPECT_THROW(Client("ftp://x"), Error);
  EXPECT_THROW(Client("http://host:99999"), Error);
  EXPECT_THROW(Client("unix:relative.sock"), Error);
  try {
    Client("http://127.0.0.1:1").get("/");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_THAT(e.what(), HasSubstr("127.0.0.1:1"));
  }
}

// The hook zeusd's leases use: each request names its connection, whose
// close (for any reason) runs callbacks; a held connection outlives the idle
// timeout; Unix peers come with their credentials.
TEST(HttpServer, ConnectionsReportTheirPeerAndTheirEnd) {
  const auto dir = temp_dir();
  std::mutex m;
  std::vector<std::uint64_t> closed;
  std::vector<std::shared_ptr<Connection>> seen;
  Router r;
  r.route(Method::kGet, "/hold", [&](const Request& q) {
    EXPECT_TRUE(q.connection);
    q.connection->hold_open(q.query_param("hold") == "1");
    q.connection->on_close([&, id = q.connection->id()] {
      std::lock_guard lock(m);
      closed.push_back(id);
    });
    std::lock_guard lock(m);
    seen.push_back(q.connection);
    const auto& peer = q.connection->peer();
    return Response::json(200, {{"id", q.connection->id()},
                                {"pid", peer ? peer->pid : -1},
                                {"uid", peer ? static_cast<long>(peer->uid) : -1L}});
  });
  ServerOptions o;
  o.idle_timeout = Seconds(0.1);
  Server server(std::move(r), o);
  server.listen_unix(dir + "/s.sock");
  server.start();
  Client held("unix:" + dir + "/s.sock");
  Client idle("unix:" + dir + "/s.sock");
  const auto h = body_json(held.get("/hold?hold=1"));
  const auto i = body_json(idle.get("/hold?hold=0"));
  EXPECT_EQ(h["pid"], ::getpid());
  EXPECT_EQ(h["uid"], static_cast<long>(::getuid()));
  EXPECT_NE(h["id"], i["id"]);
  std::this_thread::sleep_for(400ms);
  {
    std::lock_guard lock(m);
    ASSERT_EQ(closed.size(), 1u);  // the idle one timed out; the held one stays
    EXPECT_EQ(closed[0], i["id"].get<std::uint64_t>());
  }
  held.close();  // the client goes away
  for (int k = 0; k < 200; ++k) {
    {
      std::lock_guard lock(m);
      if (closed.size() == 2) break;
    }
    std::this_thread::sleep_for(5ms);
  }
  std::lock_guard lock(m);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[1], h["id"].get<std::uint64_t>());
  EXPECT_TRUE(seen[0]->closed());
  // A callback added after the end runs at once.
  bool ran = false;
  seen[0]->on_close([&] { ran = true; });
  EXPECT_TRUE(ran);
  std::filesystem::remove_all(dir);
}

TEST(HttpServer, EventFramesGoOutAsOneWrite) {
  Router r;
  r.route_async(Method::kGet, "/ev", [](Request, Responder resp) {
    auto s = resp.start_events();
    s.send_frames("data: 1\n\ndata: 2\n\n");
    s.close();
  });
  Running s(std::move(r));
  Client c(s.url());
  std::vector<std::string> got;
  c.stream_events("/ev", [&](const Event& e) {
    got.push_back(e.data);
    return true;
  });
  EXPECT_EQ(got, (std::vector<std::string>{"1", "2"}));
}

TEST(HttpClient, StreamHandsOverTheBodyAsItComesAndAStopAbortsABlockedRead) {
  std::promise<EventStream> opened;
  std::promise<void> left;
  Router r;
  r.route_async(Method::kPost, "/gen", [&](Request req, Responder resp) {
    auto st = resp.start_events({});
    st.send(req.body);
    st.on_close([&] { left.set_value(); });
    opened.set_value(st);  // then silent: the client's read blocks
  });
  Running s(std::move(r));
  Client c(s.url(), ClientOptions{.request_timeout = Seconds(30.0)});
  std::stop_source stop;
  std::mutex got_mutex;  // guards got and hello_seen (appended on the reader's thread)
  std::string got;
  bool hello_seen = false;
  std::promise<void> said_hello;
  int status = 0;
  auto reader = std::async(std::launch::async, [&] {
    return c.stream(
        Method::kPost, "/gen", "hello", {},
        [&](const ResponseHead& head) {
          status = head.status;
          return true;
        },
        [&](std::string_view bytes) {
          std::lock_guard lock(got_mutex);
          got.append(bytes);
          if (!hello_seen && got.find("hello") != std::string::npos) {
            hello_seen = true;
            said_hello.set_value();
          }
          return true;
        },
        stop.get_token());
  });
  auto stream = opened.get_future().get();
  EXPECT_EQ(said_hello.get_future().wait_for(5s), std::future_status::ready);
  stop.request_stop();
  EXPECT_EQ(reader.wait_for(5s), std::future_status::ready) << "the stop did not abort the read";
  EXPECT_FALSE(reader.get());
  EXPECT_EQ(status, 200);
  EXPECT_EQ(got, "data: hello\n\n");
  // The server sees the client leave (its stream closes).
  EXPECT_EQ(left.get_future().wait_for(5s), std::future_status::ready);
  // The client works on afterwards, and a body that ends is `true`.
  Router r2;
  r2.route(Method::kGet, "/x", [](const Request&) { return Response::text(200, "whole"); });
  Running s2(std::move(r2));
  Client c2(s2.url());
  std::string body;
  EXPECT_TRUE(c2.stream(
      Method::kGet, "/x", {}, {}, [](const ResponseHead&) { return true; },
      [&](std::string_view b) {
        body.append(b);
        return true;
      }));
  EXPECT_EQ(body, "whole");
}

TEST(HttpMessage, TargetsAndEncoding) {
  std::string path;
  std::vector<std::pair<std::string, std::string>> q;
  split_target("/a%2Fb?x=1&y=%41+b&flag&=v", path, q);
  EXPECT_EQ(path, "/a/b");
  ASSERT_EQ(q.size(), 4u);
  EXPECT_EQ(q[1], (std::pair<std::string, std::string>{"y", "A b"}));
  EXPECT_EQ(q[2].first, "flag");
  EXPECT_THROW(split_target("no-slash", path, q), Error);
  EXPECT_THROW(split_target("/x?a=%4", path, q), Error);
  EXPECT_EQ(url_encode("w1-007 a/b"), "w1-007%20a%2Fb");
  Headers h;
  h.add("Content-Type", "a");
  h.set("content-type", "b");
  EXPECT_EQ(h.fields().size(), 1u);
  EXPECT_EQ(h.get("CONTENT-TYPE").value_or(""), "b");
}

}  // namespace
}  // namespace zeus::http
