#include "integrations/slurm/spank/unix_http.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

namespace zeus::slurm_internal {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Waits until `fd` is ready for `events` or the deadline passes.
void wait_for(int fd, short events, Clock::time_point deadline, const char* what) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) throw HttpFailure(std::string("timed out ") + what);
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (n > 0) return;
    if (n < 0 && errno != EINTR) throw HttpFailure(errno_text("poll"));
  }
}

int connect_unix(const std::string& path, Clock::time_point deadline) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    throw HttpFailure("socket path too long: " + path);
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw HttpFailure(errno_text("socket"));
  Fd guard(fd);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    // A Unix socket whose backlog is full answers EAGAIN rather than
    // EINPROGRESS; both mean "wait until writable".
    if (errno != EINPROGRESS && errno != EAGAIN) {
      throw HttpFailure("cannot connect to " + path + ": " + std::strerror(errno));
    }
    wait_for(fd, POLLOUT, deadline, "connecting");
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      throw HttpFailure("cannot connect to " + path + ": " + std::strerror(err != 0 ? err : errno));
    }
  }
  return guard.release();
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// Decodes a chunked body; HttpFailure on a malformed one.
std::string dechunk(std::string_view in) {
  std::string out;
  for (;;) {
    const auto eol = in.find("\r\n");
    if (eol == std::string_view::npos) throw HttpFailure("truncated chunked answer");
    std::size_t size = 0;
    std::size_t i = 0;
    for (; i < eol; ++i) {
      const char c = in[i];
      int digit = -1;
      if (c >= '0' && c <= '9') digit = c - '0';
      if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
      if (digit < 0) break;
      if (size > kMaxReplyBytes) throw HttpFailure("chunk too large");
      size = size * 16 + static_cast<std::size_t>(digit);
    }
    if (i == 0) throw HttpFailure("bad chunk size");
    in.remove_prefix(eol + 2);
    if (size == 0) return out;
    if (in.size() < size + 2) throw HttpFailure("truncated chunked answer");
    out.append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

HttpReply parse_reply(const std::string& raw) {
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) throw HttpFailure("answer without a complete header");
  std::string_view head(raw.data(), head_end);
  const auto first_eol = head.find("\r\n");
  const std::string_view status_line = head.substr(0, first_eol);
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ') {
    throw HttpFailure("not an HTTP answer");
  }
  HttpReply reply;
  for (std::size_t i = 9; i < 12; ++i) {
    const char c = status_line[i];
    if (c < '0' || c > '9') throw HttpFailure("bad HTTP status line");
    reply.status = reply.status * 10 + (c - '0');
  }
  bool chunked = false;
  std::optional<std::size_t> length;
  std::string_view rest = first_eol == std::string_view::npos ? "" : head.substr(first_eol + 2);
  while (!rest.empty()) {
    const auto eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest = eol == std::string_view::npos ? "" : rest.substr(eol + 2);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    if (iequals(name, "transfer-encoding") && value.find("chunked") != std::string_view::npos) {
      chunked = true;
    } else if (iequals(name, "content-length")) {
      std::size_t n = 0;
      for (char c : value) {
        if (c < '0' || c > '9') break;
        n = n * 10 + static_cast<std::size_t>(c - '0');
        if (n > kMaxReplyBytes) throw HttpFailure("answer too large");
      }
      length = n;
    }
  }
  const std::string_view body(raw.data() + head_end + 4, raw.size() - head_end - 4);
  if (chunked) {
    reply.body = dechunk(body);
  } else if (length) {
    if (body.size() < *length) throw HttpFailure("truncated answer");
    reply.body = std::string(body.substr(0, *length));
  } else {
    reply.body = std::string(body);
  }
  return reply;
}

// True once `raw` holds a whole answer with a Content-Length (chunked and
// unsized answers end at EOF).
bool answer_complete(const std::string& raw) {
  const auto head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  try {
    static_cast<void>(parse_reply(raw));  // throws while the body is short
    const std::string_view head(raw.data(), head_end);
    for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;
         at = head.find("\r\n", at + 2)) {
      if (iequals(head.substr(at + 2, 15), "content-length:")) return true;
    }
  } catch (const HttpFailure&) {
    return false;  // not complete yet (or malformed: EOF decides)
  }
  return false;
}

}  // namespace

HttpReply http_request(const std::string& socket_path, std::string_view method,
                       std::string_view target, double timeout_s) {
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 0));
  Fd fd(connect_unix(socket_path, deadline));
  std::string request;
  request.append(method).append(" ").append(target).append(" HTTP/1.1\r\n");
  request.append("Host: localhost\r\nUser-Agent: spank_zeus\r\nContent-Length: 0\r\n");
  request.append("Connection: close\r\n\r\n");
  std::size_t sent = 0;
  while (sent < request.size()) {
    wait_for(fd.get(), POLLOUT, deadline, "sending the request");
    const ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw HttpFailure(errno_text("send"));
    }
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buffer[8192];
  for (;;) {
    wait_for(fd.get(), POLLIN, deadline, "waiting for zeusd's answer");
    const ssize_t n = ::recv(fd.get(), buffer, sizeof(buffer), 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw HttpFailure(errno_text("recv"));
    }
    if (n == 0) break;  // Connection: close ends the answer
    raw.append(buffer, static_cast<std::size_t>(n));
    if (raw.size() > kMaxReplyBytes + 16384) throw HttpFailure("answer too large");
    // A server that keeps the connection open despite Connection: close
    // still ends the exchange once the announced body is in.
    if (answer_complete(raw)) break;
  }
  return parse_reply(raw);
}

std::string query_escape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '-' ||
        u == '_' || u == '.' || u == '~' || u == ',') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

}  // namespace zeus::slurm_internal
