// http::AsyncClient on a server's I/O threads (the front server's handler
// forwards to an upstream server, as the energy proxy does) and
// EventStream::when_drained: streaming, connection reuse, failures, cancel
// while a read is pending, pause/resume, back-pressure from a slow client.
#include "http/async_client.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "http/connection.h"
#include "http/server.h"
#include "zeus/http/client.h"

namespace zeus::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using End = AsyncOutcome::End;

struct Served {
  explicit Served(Router r, ServerOptions o = {}) : server(std::move(r), std::move(o)) {
    port = server.listen_tcp("127.0.0.1", 0);
    server.start();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
  Server server;
  int port = 0;
};

// What one forwarded exchange saw, shared between the server's thread (the
// callbacks) and the test's.
struct Seen {
  std::mutex mutex;  // guards the fields below
  std::string body;
  int pieces = 0;
  int status = 0;
  std::shared_ptr<AsyncCall> call;
  std::promise<AsyncOutcome> done;
  std::promise<void> first_piece;
  bool told_first = false;
};

// A front server whose GET /fwd/<path> forwards GET /<path> upstream with
// an AsyncClient on the request's executor: events pass on as they come,
// other answers whole. `pause_first`: on_body pauses after the first piece.
Router forwarding_router(AsyncClient& client, Seen& seen, bool pause_first = false) {
  Router r;
  r.route_async(Method::kGet, "/fwd/{what}", [&, pause_first](Request req, Responder resp) {
    struct State {
      Responder responder;
      EventStream events;
      std::string plain;
    };
    auto st = std::make_shared<State>(State{resp, {}, {}});
    AsyncHandlers h;
    h.on_head = [&, st](const ResponseHead& head) {
      std::lock_guard lock(seen.mutex);
      seen.status = head.status;
      if (head.headers.get("Content-Type").value_or("").starts_with("text/event-stream")) {
        st->events = st->responder.start_events();
      }
      return true;
    };
    h.on_body = [&, st, pause_first](std::string_view bytes) {
      std::lock_guard lock(seen.mutex);
      seen.body.append(bytes);
      ++seen.pieces;
      if (!seen.told_first) {
        seen.told_first = true;
        seen.first_piece.set_value();
        if (pause_first) seen.call->pause();
      }
      if (st->events.is_open()) return st->events.send_frames(std::string(bytes));
      st->plain.append(bytes);
      return true;
    };
    h.on_done = [&, st](const AsyncOutcome& o) {
      if (st->events.is_open()) {
        st->events.close();
      } else {
        st->responder.send(Response::text(200, st->plain));
      }
      seen.done.set_value(o);
    };
    std::lock_guard lock(seen.mutex);
    seen.call = client.stream(resp.executor(), Method::kGet,
                              "/" + std::string(req.path_param("what")), {}, {}, std::move(h));
  });
  return r;
}

// The front server and what it saw. The exchange's handle must be released
// after the server's threads stop (they use `seen`) and before its I/O context
// goes (an Asio strand may not outlive its context): hence the destructor.
struct Front {
  explicit Front(AsyncClient& client, bool pause_first = false)
      : served(forwarding_router(client, seen, pause_first)) {}
  ~Front() {
    served.server.shutdown();
    std::lock_guard lock(seen.mutex);
    seen.call.reset();
  }
  Front(const Front&) = delete;
  Front& operator=(const Front&) = delete;
  std::string url() const { return served.url(); }
  Seen seen;  // before `served`: the router refers to it
  Served served;
};

TEST(AsyncClient, ForwardsAStreamAndReusesTheConnection) {
  std::mutex writer_mutex;  // the handler's thread sets writer, the test's joins it
  std::thread writer;
  std::mutex ids_mutex;                          // guards plain_connections
  std::vector<std::uint64_t> plain_connections;  // the stream's, then the plain requests'
  Router up;
  up.route_async(Method::kGet, "/events", [&](Request q, Responder resp) {
    {
      std::lock_guard lock(ids_mutex);
      plain_connections.push_back(q.connection->id());
    }
    std::lock_guard lock(writer_mutex);
    writer = std::thread([resp] {
      auto s = resp.start_events();
      for (int i = 0; i < 5; ++i) {
        s.send("event " + std::to_string(i));
        std::this_thread::sleep_for(2ms);
      }
      s.close();
    });
  });
  up.route(Method::kGet, "/plain", [&](const Request& q) {
    std::lock_guard lock(ids_mutex);
    plain_connections.push_back(q.connection->id());
    return Response::text(200, "whole");
  });
  Served upstream(std::move(up));
  AsyncClient client(upstream.url());
  Front front(client);
  Seen& seen = front.seen;

  std::vector<std::string> got;
  Client(front.url()).stream_events("/fwd/events", [&](const Event& e) {
    got.push_back(e.data);
    return true;
  });
  EXPECT_THAT(got, ::testing::ElementsAre("event 0", "event 1", "event 2", "event 3", "event 4"));
  EXPECT_EQ(seen.done.get_future().get().end, End::kComplete);
  // The event stream (chunked) ended with the connection kept alive.
  EXPECT_EQ(client.idle_connections(), 1u);

  // So does a sized answer; each exchange reuses the one connection.
  for (int i = 0; i < 2; ++i) {
    Front front2(client);
    Seen& again = front2.seen;
    const Response r = Client(front2.url()).get("/fwd/plain");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "whole");
    EXPECT_EQ(again.done.get_future().get().end, End::kComplete);
    EXPECT_EQ(client.idle_connections(), 1u);
  }
  ASSERT_EQ(plain_connections.size(), 3u);
  EXPECT_EQ(plain_connections[0], plain_connections[1]) << "the stream's connection was not reused";
  EXPECT_EQ(plain_connections[1], plain_connections[2]) << "the third opened a new connection";
  std::lock_guard lock(writer_mutex);
  writer.join();
}

TEST(AsyncClient, AnUnreachableServerFailsWithAClearMessage) {
  int dead_port = 0;
  {
    Server s{Router{}};
    dead_port = s.listen_tcp("127.0.0.1", 0);
  }
  AsyncClient client("http://127.0.0.1:" + std::to_string(dead_port));
  Front front(client);
  Seen& seen = front.seen;
  auto answer = std::async(std::launch::async, [&] { return Client(front.url()).get("/fwd/x"); });
  const AsyncOutcome o = seen.done.get_future().get();
  EXPECT_EQ(o.end, End::kFailed);
  EXPECT_EQ(o.code, ErrorCode::kIo);
  EXPECT_THAT(o.message, HasSubstr("GET /x on 127.0.0.1:" + std::to_string(dead_port)));
  EXPECT_THAT(o.message, HasSubstr("cannot connect"));
  answer.get();
  EXPECT_THROW(AsyncClient("ftp://x"), Error);
}

TEST(AsyncClient, CancelAbortsAPendingReadAndTheServerSeesTheRequestLeave) {
  std::promise<void> left;
  std::promise<EventStream> upstream_stream;
  Router up;
  up.route_async(Method::kGet, "/slow", [&](Request, Responder resp) {
    auto s = resp.start_events();
    s.send("first");
    s.on_close([&] { left.set_value(); });
    upstream_stream.set_value(s);  // then silent: the proxy's read stays pending
  });
  Served upstream(std::move(up));
  AsyncClient client(upstream.url(), ClientOptions{.request_timeout = Seconds(30.0)});
  Front front(client);
  Seen& seen = front.seen;
  std::thread reader(
      [&] { Client(front.url()).stream_events("/fwd/slow", [](const Event&) { return true; }); });
  ASSERT_EQ(seen.first_piece.get_future().wait_for(5s), std::future_status::ready);
  auto held = upstream_stream.get_future().get();
  {
    std::lock_guard lock(seen.mutex);
    seen.call->cancel();  // from the test's thread, while a read is pending
  }
  auto done = seen.done.get_future();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready) << "the cancel did not abort the read";
  EXPECT_EQ(done.get().end, End::kStopped);
  EXPECT_EQ(left.get_future().wait_for(5s), std::future_status::ready);
  reader.join();                             // the front's stream closed too
  EXPECT_EQ(client.idle_connections(), 0u);  // a cancelled exchange's connection is not reused
}

TEST(AsyncClient, APausedExchangeReadsNothingUntilResumed) {
  std::promise<EventStream> opened;
  Router up;
  up.route_async(Method::kGet, "/events", [&](Request, Responder resp) {
    auto s = resp.start_events();
    s.send("one");
    opened.set_value(s);
  });
  Served upstream(std::move(up));
  AsyncClient client(upstream.url());
  Front front(client, /*pause_first=*/true);
  Seen& seen = front.seen;
  std::string got;
  std::thread reader([&] {
    Client(front.url()).stream_events("/fwd/events", [&](const Event& e) {
      got += e.data + ";";
      return true;
    });
  });
  ASSERT_EQ(seen.first_piece.get_future().wait_for(5s), std::future_status::ready);
  EventStream s = opened.get_future().get();
  s.send("two");
  s.send("three");
  s.close();
  std::this_thread::sleep_for(200ms);  // were the pause ignored, both would be read by now
  {
    std::lock_guard lock(seen.mutex);
    EXPECT_EQ(seen.pieces, 1);
    EXPECT_EQ(seen.body, "data: one\n\n");
    seen.call->resume();
  }
  auto done = seen.done.get_future();
  ASSERT_EQ(done.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(done.get().end, End::kComplete);
  reader.join();
  EXPECT_EQ(got, "one;two;three;");
}

// A client that does not read: the queue grows past the mark, when_drained
// says so and calls back only once the client has read enough.
TEST(EventStream, WhenDrainedWaitsForASlowClient) {
  std::promise<EventStream> opened;
  Router r;
  r.route_async(Method::kGet, "/ev",
                [&](Request, Responder resp) { opened.set_value(resp.start_events()); });
  ServerOptions o;
  o.max_event_backlog = 256 << 20;
  Served s(std::move(r), o);

  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 16 << 10;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string get = "GET /ev HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  EventStream ev = opened.get_future().get();

  const std::string frame = "data: " + std::string(64 << 10, 'x') + "\n\n";
  std::size_t sent = 0;
  for (int i = 0; i < 256; ++i) {  // 16 MiB: more than the kernel's buffers hold
    ASSERT_TRUE(ev.send_frames(frame));
    sent += frame.size();
  }
  std::this_thread::sleep_for(300ms);  // the queued writes have reached the I/O thread
  std::promise<void> drained;
  std::atomic<bool> called{false};
  const bool already = ev.when_drained(1 << 20, [&] {
    called = true;
    drained.set_value();
  });
  EXPECT_FALSE(already) << "16 MiB went out to a client that reads nothing";
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(called.load());
  // The client reads: the queue drains and the callback runs.
  std::size_t got = 0;
  std::vector<char> buf(1 << 16);
  auto waiting = drained.get_future();
  while (waiting.wait_for(0s) != std::future_status::ready && got < sent + 4096) {
    const ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  EXPECT_EQ(waiting.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(ev.when_drained(std::size_t(1) << 30, [] {}));  // under a high mark: at once
  ::close(fd);
}

// A client that reads nothing while its producer waits for it to drain
// never reaches max_event_backlog: event_write_timeout drops it, and on_close
// tells the producer (the proxy cancels the request upstream there).
TEST(EventStream, AClientThatReadsNothingIsDroppedAfterTheWriteTimeout) {
  std::promise<EventStream> opened;
  Router r;
  r.route_async(Method::kGet, "/ev",
                [&](Request, Responder resp) { opened.set_value(resp.start_events()); });
  ServerOptions o;
  o.max_event_backlog = 256 << 20;
  o.event_write_timeout = Seconds(0.3);
  Served s(std::move(r), o);

  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 16 << 10;
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(s.port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string get = "GET /ev HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(fd, get.data(), get.size(), MSG_NOSIGNAL), static_cast<ssize_t>(get.size()));
  EventStream ev = opened.get_future().get();
  std::promise<void> closed;
  ev.on_close([&] { closed.set_value(); });
  const std::string frame = "data: " + std::string(64 << 10, 'x') + "\n\n";
  for (int i = 0; i < 64; ++i) ASSERT_TRUE(ev.send_frames(frame));  // 4 MiB: past the buffers
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(closed.get_future().wait_for(10s), std::future_status::ready)
      << "a client that reads nothing was kept";
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 250ms);
  EXPECT_FALSE(ev.send("more"));
  ::close(fd);
}

}  // namespace
}  // namespace zeus::http
