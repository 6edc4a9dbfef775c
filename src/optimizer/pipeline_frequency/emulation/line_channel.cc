#include "optimizer/pipeline_frequency/emulation/line_channel.h"

#include <errno.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

#include "zeus/util/error.h"

namespace zeus::pipeline_frequency_internal {

namespace {
constexpr std::size_t kMaxLine = 16 << 20;
}

void LineChannel::send(const nlohmann::json& message) {
  std::string line = message.dump();
  line.push_back('\n');
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::send(fd_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_error(ErrorCode::kIo, fmt::format("cannot send to {}: {}", peer_, errno_text(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

nlohmann::json LineChannel::receive() {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout_);
  for (;;) {
    const auto nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      const std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      try {
        return nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        throw_error(ErrorCode::kParse, fmt::format("malformed message from {}", peer_));
      }
    }
    if (buffer_.size() > kMaxLine) throw_error(ErrorCode::kParse, "message too long");
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      throw_error(ErrorCode::kTimeout,
                  fmt::format("no message from {} within {:.0f} s", peer_, timeout_.count()));
    }
    pollfd p{fd_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw_error(ErrorCode::kIo, fmt::format("waiting for {}: {}", peer_, errno_text(errno)));
    }
    if (r == 0) continue;
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw_error(ErrorCode::kIo, fmt::format("reading from {}: {}", peer_, errno_text(errno)));
    }
    if (n == 0) throw_error(ErrorCode::kIo, fmt::format("{} ended", peer_));
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void socket_pair(int fds[2]) {
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    throw_error(ErrorCode::kIo, fmt::format("socketpair failed: {}", errno_text(errno)));
  }
}

}  // namespace zeus::pipeline_frequency_internal
