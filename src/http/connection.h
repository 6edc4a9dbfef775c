// The connection a request arrived on, for services that tie state to a
// client rather than to a request (zeusd's connection-bound leases): who is
// on the other end of a Unix socket, and a callback when the connection ends
// for any reason (the client closed it, crashed or was killed, a timeout, the
// server shutting down).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

namespace zeus::http {

// The peer process of a Unix-domain connection (SO_PEERCRED, taken at accept).
struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Thread-safe: callbacks may be added from any thread; the server marks the
// connection closed on one of its I/O threads and runs the callbacks there.
// The mutex guards closed_ and callbacks_.
class Connection {
 public:
  Connection(std::uint64_t id, std::optional<PeerCredentials> peer) : id_(id), peer_(peer) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Unique among the connections of one process.
  std::uint64_t id() const { return id_; }
  // Set for Unix-domain connections; nullopt for TCP.
  const std::optional<PeerCredentials>& peer() const { return peer_; }

  // Runs `callback` once when the connection closes (at once, on the calling
  // thread, if it already has). Keep it short: it runs on an I/O thread.
  void on_close(std::function<void()> callback);
  bool closed() const;

  // While held, an idle keep-alive connection is not closed after the
  // server's idle_timeout: the client keeps it open on purpose (a lease).
  void hold_open(bool hold) { held_.store(hold, std::memory_order_relaxed); }
  bool held_open() const { return held_.load(std::memory_order_relaxed); }

  // The server calls this when the connection ends; idempotent.
  void mark_closed();

 private:
  const std::uint64_t id_;
  const std::optional<PeerCredentials> peer_;
  std::atomic<bool> held_{false};
  mutable std::mutex mutex_;
  bool closed_ = false;
  std::vector<std::function<void()>> callbacks_;
};

}  // namespace zeus::http
