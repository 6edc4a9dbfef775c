// The byte stream under the zeusd client (zeusd_wire.h): one connected
// Unix-domain or TCP socket whose every wait (connect, send, receive) ends at
// a deadline, so a daemon that hangs costs a bounded time and a clear error.
// POSIX sockets only: every build of the library has it (ZEUS_MINIMAL too).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace zeus::device_internal {

using WireClock = std::chrono::steady_clock;

class WireSocket {
 public:
  WireSocket() = default;
  ~WireSocket();
  WireSocket(WireSocket&& other) noexcept;
  WireSocket& operator=(WireSocket&& other) noexcept;
  WireSocket(const WireSocket&) = delete;
  WireSocket& operator=(const WireSocket&) = delete;

  // Connected before `deadline`, or zeus::Error: kTimeout past it, kIo
  // otherwise (no such socket, refused, cannot resolve, path too long).
  static WireSocket connect_unix(const std::string& path, WireClock::time_point deadline);
  static WireSocket connect_tcp(const std::string& host, const std::string& port,
                                WireClock::time_point deadline);

  // Writes all of `bytes` (never raises SIGPIPE). kTimeout, kIo.
  void send_all(std::string_view bytes, WireClock::time_point deadline);
  // Appends what arrives, at most `max` bytes, to `out`; 0 when the peer has
  // closed. Waits for at least one byte. kTimeout, kIo.
  std::size_t receive_some(std::string& out, std::size_t max, WireClock::time_point deadline);

  // An idle connection fit to reuse: open, not closed by the peer, and with
  // nothing arrived unasked.
  bool reusable() const;
  bool is_open() const { return fd_ >= 0; }
  void close();

 private:
  explicit WireSocket(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace zeus::device_internal
