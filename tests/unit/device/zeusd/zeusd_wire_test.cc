// The HTTP/1.1 client the library talks to zeusd with, against a scripted
// peer (a thread with a listening socket that answers canned bytes): bodies
// framed by Content-Length, by chunks and by the end of the connection; one
// connection for consecutive requests (the daemon binds the lease to it);
// the retry on a connection the peer closed while idle; and a peer that
// closes mid-body, sends an oversize header or never answers, each a clear
// error in bounded time.
#include "device/zeusd/zeusd_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "support/temp_dir.h"
#include "zeus/util/error.h"

namespace zeus::device_internal {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Reads one request's head (through the blank line) from `fd`: "" when the
// client closed or sent nothing within 5 s.
std::string read_request(int fd) {
  std::string got;
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (got.find("\r\n\r\n") == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (std::chrono::steady_clock::now() > until || ::poll(&p, 1, 50) < 0) return {};
    if (p.revents == 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return {};
    got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Waits (at most `limit`) until the client closes the connection.
void wait_until_closed(int fd, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char buf[4096];
      if (::recv(fd, buf, sizeof(buf), 0) <= 0) return;
    }
  }
}

// A listening socket on a thread: the n-th connection it accepts is given to
// the n-th handler (one at a time, in order), then closed; a connection
// beyond the handlers is closed at once. Each request a handler reads with
// `read` is recorded.
class ScriptedPeer {
 public:
  using Handler = std::function<void(ScriptedPeer&, int fd)>;

  explicit ScriptedPeer(std::vector<Handler> handlers, bool tcp = false)
      : handlers_(std::move(handlers)) {
    if (tcp) {
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
      socklen_t len = sizeof(a);
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
      url_ = "http://127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    } else {
      const std::string path = dir_.path() + "/peer.sock";
      fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un a{};
      a.sun_family = AF_UNIX;
      std::strncpy(a.sun_path, path.c_str(), sizeof(a.sun_path) - 1);
      EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
      url_ = "unix:" + path;
    }
    EXPECT_EQ(::listen(fd_, 8), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedPeer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }

  const std::string& url() const { return url_; }
  int accepted() const { return accepted_; }
  std::string read(int fd) {
    std::string r = read_request(fd);
    std::lock_guard lock(mutex_);
    requests_.push_back(r);
    return r;
  }
  std::vector<std::string> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      const std::size_t n = static_cast<std::size_t>(accepted_++);
      if (n < handlers_.size()) handlers_[n](*this, c);
      ::close(c);
    }
  }

  zeus::testing::TempDir dir_{"zeusd_wire"};
  std::vector<Handler> handlers_;
  std::string url_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  mutable std::mutex mutex_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

// A handler that answers each canned answer to one request, in order, on one
// connection, then waits for the client to close it.
ScriptedPeer::Handler answers(std::vector<std::string> canned) {
  return [canned](ScriptedPeer& peer, int fd) {
    for (const auto& a : canned) {
      if (peer.read(fd).empty()) return;
      write_all(fd, a);
    }
    wait_until_closed(fd, 5s);
  };
}

WireOptions quick() {
  WireOptions o;
  o.connect_timeout = Seconds(2.0);
  o.request_timeout = Seconds(5.0);
  return o;
}

// The error `fn` throws (a default Error when it throws none).
template <class Fn>
Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error(ErrorCode::kInternal, "");
}

TEST(ZeusdWire, ContentLengthBodyAndTheRequestAsSent) {
  ScriptedPeer peer({answers({"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"})});
  WireClient c(peer.url(), quick());
  const auto r = c.request("POST", "/gpu/set_power_limit?gpu_ids=0&block=true",
                           {{"Authorization", "Bearer tok"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  ASSERT_EQ(peer.requests().size(), 1u);
  const std::string sent = peer.requests()[0];
  EXPECT_TRUE(sent.starts_with("POST /gpu/set_power_limit?gpu_ids=0&block=true HTTP/1.1\r\n"))
      << sent;
  EXPECT_THAT(sent, HasSubstr("\r\nHost: localhost\r\n"));
  EXPECT_THAT(sent, HasSubstr("\r\nAuthorization: Bearer tok\r\n"));
  EXPECT_THAT(sent, HasSubstr("\r\nContent-Length: 0\r\n"));
}

TEST(ZeusdWire, ChunkedBodyWithExtensionsAndTrailers) {
  // Sent in pieces that split the size lines and the chunks.
  ScriptedPeer peer({[](ScriptedPeer& p, int fd) {
    p.read(fd);
    for (const char* piece :
         {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;name=x\r", "\nhel",
          "lo\r\n0000000f\r\n, chunked w", "orld\r\n0\r\nX-Trailer: 1\r\n", "\r\n"}) {
      write_all(fd, piece);
      std::this_thread::sleep_for(10ms);
    }
    wait_until_closed(fd, 5s);
  }});
  WireClient c(peer.url(), quick());
  const auto r = c.request("GET", "/discover");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello, chunked world");
}

TEST(ZeusdWire, BodyUntilTheConnectionEnds) {
  ScriptedPeer peer({[](ScriptedPeer& p, int fd) {
    p.read(fd);
    write_all(fd, "HTTP/1.0 404 Not Found\r\n\r\n{\"error\":\"no\"}");
  }});
  WireClient c(peer.url(), quick());
  const auto r = c.request("GET", "/x");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, "{\"error\":\"no\"}");
}

// The daemon binds a lease to the connection that took it: consecutive
// requests, whatever their answers' framing, go on one connection.
TEST(ZeusdWire, KeepAliveCarriesConsecutiveRequestsOnOneConnection) {
  ScriptedPeer peer({answers({
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\ncd",
  })});
  WireClient c(peer.url(), quick());
  EXPECT_EQ(c.request("POST", "/lease/acquire").body, "ab");
  EXPECT_EQ(c.request("POST", "/gpu/set_persistence_mode").status, 204);
  EXPECT_EQ(c.request("GET", "/discover").body, "cd");
  EXPECT_EQ(peer.accepted(), 1);
  EXPECT_EQ(peer.requests().size(), 3u);
}

TEST(ZeusdWire, ConnectionCloseOrAnIdleCloseMeansANewConnection) {
  ScriptedPeer peer({
      answers({"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\na"}),
      [](ScriptedPeer& p, int fd) {  // answers and closes while the client is idle
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb");
      },
      answers({"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nc"}),
  });
  WireClient c(peer.url(), quick());
  EXPECT_EQ(c.request("GET", "/1").body, "a");
  EXPECT_EQ(c.request("GET", "/2").body, "b");
  std::this_thread::sleep_for(50ms);  // the peer has closed the idle connection
  EXPECT_EQ(c.request("GET", "/3").body, "c");
  EXPECT_EQ(peer.accepted(), 3);
}

// A reused connection that the peer drops once the request is on it, before
// any answer: sent once more on a new one (as an idle close racing the send).
// A fresh connection that does so is an error, not a retry.
TEST(ZeusdWire, ARequestLostOnAReusedConnectionIsSentOnceMore) {
  ScriptedPeer peer({
      [](ScriptedPeer& p, int fd) {
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na");
        p.read(fd);  // and no answer
      },
      answers({"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb"}),
      [](ScriptedPeer& p, int fd) { p.read(fd); },
  });
  WireClient c(peer.url(), quick());
  EXPECT_EQ(c.request("GET", "/1").body, "a");
  EXPECT_EQ(c.request("GET", "/2").body, "b");
  EXPECT_EQ(peer.accepted(), 2);
  c.close();
  const Error e = error_of([&] { c.request("GET", "/3"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("GET /3 on " + peer.url() +
                                  ": the connection closed before "
                                  "an answer"));
  EXPECT_EQ(peer.accepted(), 3);
}

TEST(ZeusdWire, APeerThatClosesMidBodyIsAnErrorNotAShortBody) {
  ScriptedPeer peer({
      [](ScriptedPeer& p, int fd) {
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhel");
      },
      [](ScriptedPeer& p, int fd) {
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
      },
  });
  WireClient c(peer.url(), quick());
  Error e = error_of([&] { c.request("GET", "/discover"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("closed in the middle of the answer's body (3 of 10 bytes)"));
  e = error_of([&] { c.request("GET", "/discover"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("the connection closed in a chunk's size line"));
}

TEST(ZeusdWire, AnOversizeHeaderOrBodyIsRefusedWithoutWaitingForItsEnd) {
  // The peer never ends its header and never closes: the limit, not the
  // timeout, ends the exchange.
  ScriptedPeer peer({
      [](ScriptedPeer& p, int fd) {
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nX-Big: " + std::string(8192, 'a'));
        wait_until_closed(fd, 10s);
      },
      [](ScriptedPeer& p, int fd) {
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n");
        wait_until_closed(fd, 10s);
      },
      [](ScriptedPeer& p, int fd) {
        p.read(fd);
        write_all(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" +
                          std::string(2048, 'x') + "\r\n800\r\n" + std::string(2048, 'x'));
        wait_until_closed(fd, 10s);
      },
  });
  WireOptions o = quick();
  o.request_timeout = Seconds(8.0);
  o.max_header_bytes = 1024;
  o.max_body_bytes = 3000;
  WireClient c(peer.url(), o);
  const auto start = std::chrono::steady_clock::now();
  Error e = error_of([&] { c.request("GET", "/discover"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("the answer's header is over 1024 bytes"));
  e = error_of([&] { c.request("GET", "/discover"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("the answer's body is over 3000 bytes (100000 announced)"));
  e = error_of([&] { c.request("GET", "/discover"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("the answer's body is over 3000 bytes"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
}

TEST(ZeusdWire, APeerThatNeverAnswersTimesOut) {
  ScriptedPeer peer({[](ScriptedPeer& p, int fd) {
    p.read(fd);
    wait_until_closed(fd, 20s);
  }});
  WireOptions o = quick();
  o.request_timeout = Seconds(0.3);
  WireClient c(peer.url(), o);
  const auto start = std::chrono::steady_clock::now();
  const Error e = error_of([&] { c.request("GET", "/discover"); });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(e.code(), ErrorCode::kTimeout);
  EXPECT_THAT(e.what(), HasSubstr("timed out waiting for the answer (after 0.3 s)"));
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 3s);
}

TEST(ZeusdWire, MalformedAnswersAreErrors) {
  const auto answer_to = [](std::string canned) {
    ScriptedPeer peer({answers({std::move(canned)})});
    WireClient c(peer.url(), quick());
    return error_of([&] { c.request("GET", "/discover"); });
  };
  EXPECT_THAT(answer_to("SSH-2.0-OpenSSH\r\n\r\n").what(),
              HasSubstr("malformed answer: status line 'SSH-2.0-OpenSSH'"));
  EXPECT_THAT(
      answer_to("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab").what(),
      HasSubstr("malformed answer: Content-Length '3'"));
  EXPECT_THAT(answer_to("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").what(),
              HasSubstr("malformed answer: chunk size line 'zz'"));
  EXPECT_THAT(answer_to("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n").what(),
              HasSubstr("only chunked is understood"));
}

TEST(ZeusdWire, TcpAndUrls) {
  ScriptedPeer peer({answers({"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"})}, true);
  WireClient c(peer.url(), quick());
  EXPECT_EQ(c.request("GET", "/discover").body, "ok");
  EXPECT_THAT(peer.requests().at(0), HasSubstr("\r\nHost: " + peer.url().substr(7) + "\r\n"));
  EXPECT_EQ(c.where(), peer.url().substr(7));

  EXPECT_EQ(WireClient("unix:///run/zeusd.sock").where(), "unix:/run/zeusd.sock");
  EXPECT_EQ(WireClient("http://[::1]:4938").where(), "::1:4938");
  for (const char* bad : {"unix:relative.sock", "https://host:1", "http://:80", "http://h:0",
                          "http://h:99999", "http://h:8x", "http://[::1"}) {
    EXPECT_EQ(error_of([&] { WireClient{bad}; }).code(), ErrorCode::kInvalidArgument) << bad;
  }
  // Nothing listens here: refused at once, naming the endpoint.
  const std::string gone = "unix:" + zeus::testing::TempDir("zeusd_wire_gone").path() + "/no.sock";
  WireClient nobody(gone, quick());
  const Error e = error_of([&] { nobody.request("GET", "/discover"); });
  EXPECT_EQ(e.code(), ErrorCode::kIo);
  EXPECT_THAT(e.what(), HasSubstr("GET /discover on " + gone + ": cannot connect"));
  // A header that would split the request is refused before anything is sent.
  EXPECT_EQ(error_of([&] {
              nobody.request("GET", "/", {{"Authorization", "Bearer a\r\nX: y"}});
            }).code(),
            ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace zeus::device_internal
