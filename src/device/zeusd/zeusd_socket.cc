#include "device/zeusd/zeusd_socket.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "zeus/util/error.h"

namespace zeus::device_internal {
namespace {

using std::chrono::milliseconds;

// Waits until `fd` is ready for `events`; false once the deadline has passed.
bool wait_ready(int fd, short events, WireClock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<milliseconds>(deadline - WireClock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) throw_error(ErrorCode::kIo, "poll failed: " + errno_text(errno));
  }
}

[[noreturn]] void timed_out(const char* what) {
  throw_error(ErrorCode::kTimeout, std::string("timed out ") + what);
}

// connect() on a non-blocking socket, finished before the deadline.
void connect_by(int fd, const sockaddr* addr, socklen_t len, WireClock::time_point deadline) {
  for (;;) {
    if (::connect(fd, addr, len) == 0) return;
    const int err = errno;
    if (err == EAGAIN) {
      // A Unix socket whose listen backlog is full: nothing is in progress,
      // so try again shortly.
      if (WireClock::now() >= deadline) timed_out("connecting");
      std::this_thread::sleep_for(milliseconds(5));
      continue;
    }
    if (err == EINPROGRESS || err == EINTR) {
      if (!wait_ready(fd, POLLOUT, deadline)) timed_out("connecting");
      int so_error = 0;
      socklen_t so_len = sizeof(so_error);
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &so_len) != 0) so_error = errno;
      if (so_error == 0) return;
      throw_error(ErrorCode::kIo, "cannot connect: " + errno_text(so_error));
    }
    // Permission on a Unix socket is its file's mode: the fix differs (a
    // group to join, not a daemon to start), so the caller is told apart.
    throw_error(err == EACCES || err == EPERM ? ErrorCode::kNoPermission : ErrorCode::kIo,
                "cannot connect: " + errno_text(err));
  }
}

int new_socket(int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw_error(ErrorCode::kIo, "cannot create a socket: " + errno_text(errno));
  return fd;
}

}  // namespace

WireSocket::~WireSocket() { close(); }

WireSocket::WireSocket(WireSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

WireSocket& WireSocket::operator=(WireSocket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void WireSocket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

WireSocket WireSocket::connect_unix(const std::string& path, WireClock::time_point deadline) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    throw_error(ErrorCode::kIo, "cannot connect: the socket path is longer than " +
                                    std::to_string(sizeof(addr.sun_path) - 1) + " bytes");
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  WireSocket s(new_socket(AF_UNIX));
  connect_by(s.fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr), deadline);
  return s;
}

WireSocket WireSocket::connect_tcp(const std::string& host, const std::string& port,
                                   WireClock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    throw_error(ErrorCode::kIo, "cannot resolve " + host + ": " +
                                    (rc == EAI_SYSTEM ? errno_text(errno) : ::gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, ::freeaddrinfo);
  std::string last_error = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    WireSocket s(new_socket(a->ai_family));
    try {
      connect_by(s.fd_, a->ai_addr, a->ai_addrlen, deadline);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kTimeout) throw;
      last_error = e.what();
      continue;
    }
    const int one = 1;
    ::setsockopt(s.fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return s;
  }
  throw_error(ErrorCode::kIo, last_error);
}

void WireSocket::send_all(std::string_view bytes, WireClock::time_point deadline) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      throw_error(ErrorCode::kIo, "sending failed: " + errno_text(errno));
    }
    if (!wait_ready(fd_, POLLOUT, deadline)) timed_out("sending the request");
  }
}

std::size_t WireSocket::receive_some(std::string& out, std::size_t max,
                                     WireClock::time_point deadline) {
  const std::size_t had = out.size();
  for (;;) {
    out.resize(had + max);
    const ssize_t n = ::recv(fd_, out.data() + had, max, 0);
    const int err = errno;
    out.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n >= 0) return static_cast<std::size_t>(n);
    if (err == EINTR) continue;
    if (err != EAGAIN && err != EWOULDBLOCK) {
      throw_error(ErrorCode::kIo, "reading the answer failed: " + errno_text(err));
    }
    if (!wait_ready(fd_, POLLIN, deadline)) timed_out("waiting for the answer");
  }
}

bool WireSocket::reusable() const {
  if (fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  int n;
  do {
    n = ::poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n == 0;
}

}  // namespace zeus::device_internal
