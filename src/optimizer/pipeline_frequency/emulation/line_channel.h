// One JSON message per line over a socket: how the emulation's driver and its
// stage processes talk (control messages, and activations and gradients that
// carry the sender's emulated time). Reads wait at most a deadline of real
// time so a dead peer is an error, never a hang. One reader and one writer
// thread per channel; the channel owns nothing (the caller closes the fd).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "zeus/util/units.h"

namespace zeus::pipeline_frequency_internal {

class LineChannel {
 public:
  LineChannel(int fd, std::string peer, Seconds timeout = Seconds(120.0))
      : fd_(fd), peer_(std::move(peer)), timeout_(timeout) {}
  // kIo when the peer is gone.
  void send(const nlohmann::json& message);
  // The next message; kIo at end of stream ("<peer> ended"), kTimeout after
  // `timeout` without one, kParse for a malformed line.
  nlohmann::json receive();
  int fd() const { return fd_; }

 private:
  int fd_;
  std::string peer_;
  Seconds timeout_;
  std::string buffer_;
};

// Connected stream sockets (socketpair, close-on-exec); kIo on failure.
void socket_pair(int fds[2]);

}  // namespace zeus::pipeline_frequency_internal
