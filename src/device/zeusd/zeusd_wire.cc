#include "device/zeusd/zeusd_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

#include "util/text.h"
#include "zeus/util/error.h"

namespace zeus::device_internal {
namespace {

constexpr std::size_t kReadSize = 16 << 10;
constexpr std::size_t kChunkLineMax = 1024;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

[[noreturn]] void malformed(const std::string& why) {
  throw_error(ErrorCode::kIo, "malformed answer: " + why);
}

// The answer's bytes, received as the parser asks for them, before one deadline.
class Incoming {
 public:
  Incoming(WireSocket& socket, WireClock::time_point deadline, bool& got_some)
      : socket_(socket), deadline_(deadline), got_some_(got_some) {}

  std::string_view pending() const { return std::string_view(buf_).substr(pos_); }
  void consume(std::size_t n) { pos_ += n; }

  // Receives more bytes; false when the peer has closed.
  bool more() {
    buf_.erase(0, pos_);
    pos_ = 0;
    const std::size_t n = socket_.receive_some(buf_, kReadSize, deadline_);
    if (n > 0) got_some_ = true;
    return n > 0;
  }

  // The bytes before the next `delim` (which is consumed too), at most `max`
  // of them; `what` names them in errors.
  std::string until(std::string_view delim, std::size_t max, const char* what) {
    std::size_t searched = 0;
    for (;;) {
      const std::string_view p = pending();
      const auto at = p.find(delim, searched);
      if (at != std::string_view::npos && at <= max) {
        std::string out(p.substr(0, at));
        consume(at + delim.size());
        return out;
      }
      if (at != std::string_view::npos || p.size() > max + delim.size()) {
        throw_error(ErrorCode::kIo, fmt::format("{} is over {} bytes", what, max));
      }
      searched = p.size() >= delim.size() ? p.size() - delim.size() + 1 : 0;
      if (!more()) {
        throw_error(ErrorCode::kIo, got_some_ ? fmt::format("the connection closed in {}", what)
                                              : std::string("the connection closed before an "
                                                            "answer"));
      }
    }
  }

  // Exactly `n` bytes, appended to `out`.
  void take(std::uint64_t n, std::string& out, const char* what) {
    const std::uint64_t wanted = n;
    while (n > 0) {
      if (pending().empty() && !more()) {
        throw_error(ErrorCode::kIo,
                    fmt::format("the connection closed in the middle of {} ({} of {} bytes)", what,
                                wanted - n, wanted));
      }
      const std::string_view p = pending();
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n, p.size()));
      out.append(p.substr(0, k));
      consume(k);
      n -= k;
    }
  }

  // Everything until the peer closes, at most `max` bytes.
  void take_to_end(std::string& out, std::size_t max) {
    for (;;) {
      out.append(pending());
      consume(pending().size());
      if (out.size() > max) {
        throw_error(ErrorCode::kIo, fmt::format("the answer's body is over {} bytes", max));
      }
      if (!more()) return;
    }
  }

 private:
  WireSocket& socket_;
  WireClock::time_point deadline_;
  bool& got_some_;
  std::string buf_;
  std::size_t pos_ = 0;
};

struct Head {
  int status = 0;
  bool chunked = false;
  std::optional<std::uint64_t> length;
  bool keep_alive = false;
};

// The status line and the fields that frame the body and the connection.
Head parse_head(std::string_view text) {
  Head h;
  const auto eol = text.find("\r\n");
  const std::string_view line = text.substr(0, eol);
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (line.size() < 12 || !line.starts_with("HTTP/1.") || !digit(line[7]) || line[8] != ' ' ||
      !digit(line[9]) || !digit(line[10]) || !digit(line[11]) ||
      (line.size() > 12 && line[12] != ' ')) {
    malformed(fmt::format("status line '{}'", printable(line)));
  }
  const bool http11 = line[7] >= '1';
  h.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  bool close = false;
  bool keep_alive_token = false;
  std::string_view rest = eol == std::string_view::npos ? "" : text.substr(eol + 2);
  while (!rest.empty()) {
    const auto end = rest.find("\r\n");
    const std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? "" : rest.substr(end + 2);
    const auto colon = field.find(':');
    if (colon == 0 || colon == std::string_view::npos || field.front() == ' ' ||
        field.front() == '\t' || trim(field.substr(0, colon)).size() != colon) {
      malformed(fmt::format("header line '{}'", printable(field)));
    }
    const std::string_view name = field.substr(0, colon);
    const std::string_view value = trim(field.substr(colon + 1));
    if (iequals(name, "Content-Length")) {
      std::uint64_t n = 0;
      const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size() ||
          (h.length && *h.length != n)) {
        malformed(fmt::format("Content-Length '{}'", printable(value)));
      }
      h.length = n;
    } else if (iequals(name, "Transfer-Encoding")) {
      const auto comma = value.rfind(',');
      const std::string_view last =
          trim(comma == std::string_view::npos ? value : value.substr(comma + 1));
      if (!iequals(last, "chunked")) {
        malformed(
            fmt::format("Transfer-Encoding '{}' (only chunked is understood)", printable(value)));
      }
      h.chunked = true;
    } else if (iequals(name, "Connection")) {
      std::string_view tokens = value;
      while (!tokens.empty()) {
        const auto comma = tokens.find(',');
        const std::string_view token = trim(tokens.substr(0, comma));
        tokens = comma == std::string_view::npos ? "" : tokens.substr(comma + 1);
        if (iequals(token, "close")) close = true;
        if (iequals(token, "keep-alive")) keep_alive_token = true;
      }
    }
  }
  // A body both chunked and sized is framed by the chunks, and the
  // connection is not trusted afterwards.
  if (h.chunked && h.length) close = true;
  h.keep_alive = !close && (http11 || keep_alive_token);
  return h;
}

void read_chunked(Incoming& in, const WireOptions& o, std::string& body) {
  for (;;) {
    const std::string line = in.until("\r\n", kChunkLineMax, "a chunk's size line");
    const std::string_view digits = trim(std::string_view(line).substr(0, line.find(';')));
    std::uint64_t size = 0;
    const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
    if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size()) {
      malformed(fmt::format("chunk size line '{}'", printable(line)));
    }
    if (size == 0) break;
    if (size > o.max_body_bytes - body.size()) {
      throw_error(ErrorCode::kIo,
                  fmt::format("the answer's body is over {} bytes", o.max_body_bytes));
    }
    in.take(size, body, "a chunk");
    std::string crlf;
    in.take(2, crlf, "a chunk's end");
    if (crlf != "\r\n") malformed("a chunk longer than its size");
  }
  // Trailer fields, ignored, up to the blank line.
  std::size_t trailer = 0;
  for (;;) {
    const std::string line = in.until("\r\n", o.max_header_bytes, "the answer's trailer");
    if (line.empty()) return;
    trailer += line.size() + 2;
    if (trailer > o.max_header_bytes) {
      throw_error(ErrorCode::kIo,
                  fmt::format("the answer's trailer is over {} bytes", o.max_header_bytes));
    }
  }
}

// One answer; `keep` says whether the connection may carry the next request.
WireResponse read_response(Incoming& in, const WireOptions& o, bool& keep) {
  for (;;) {
    const std::string head_text = in.until("\r\n\r\n", o.max_header_bytes, "the answer's header");
    const Head h = parse_head(head_text);
    if (h.status == 101) malformed("101 Switching Protocols");
    if (h.status >= 100 && h.status < 200) continue;  // an interim answer: the real one follows
    WireResponse r;
    r.status = h.status;
    keep = h.keep_alive;
    if (h.chunked) {
      read_chunked(in, o, r.body);
    } else if (h.length) {
      if (*h.length > o.max_body_bytes) {
        throw_error(ErrorCode::kIo, fmt::format("the answer's body is over {} bytes ({} announced)",
                                                o.max_body_bytes, *h.length));
      }
      in.take(*h.length, r.body, "the answer's body");
    } else if (h.status != 204 && h.status != 304) {
      keep = false;  // the body ends where the connection does
      in.take_to_end(r.body, o.max_body_bytes);
    }
    if (!in.pending().empty()) keep = false;  // bytes nobody asked for
    return r;
  }
}

bool has_line_break(std::string_view s) {
  return s.find_first_of("\r\n") != std::string_view::npos;
}

}  // namespace

WireClient::WireClient(std::string_view url, WireOptions options) : options_(options) {
  const auto bad = [&](const char* why) {
    throw_error(ErrorCode::kInvalidArgument,
                fmt::format("'{}' is not a server URL ({}); use http://HOST:PORT or "
                            "unix:/path/to/socket",
                            printable(url), why));
  };
  if (url.starts_with("unix:")) {
    std::string_view rest = url.substr(5);
    if (rest.starts_with("//")) rest.remove_prefix(2);
    if (rest.empty() || rest.front() != '/') bad("the socket path must be absolute");
    is_unix_ = true;
    path_ = std::string(rest);
    return;
  }
  if (!url.starts_with("http://")) bad("only http:// and unix: are supported");
  std::string_view authority = url.substr(7);
  if (const auto slash = authority.find('/'); slash != std::string_view::npos) {
    prefix_ = std::string(authority.substr(slash));
    while (!prefix_.empty() && prefix_.back() == '/') prefix_.pop_back();
    authority = authority.substr(0, slash);
  }
  if (has_line_break(url)) bad("a line break");
  std::string_view port = "80";
  if (authority.starts_with("[")) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad("unclosed '['");
    host_ = std::string(authority.substr(1, close - 1));
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') bad("junk after the IPv6 address");
    if (!after.empty()) port = after.substr(1);
  } else {
    const auto colon = authority.rfind(':');
    host_ = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  int number = 0;
  const auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
  if (host_.empty()) bad("no host");
  if (ec != std::errc() || p != port.data() + port.size() || number <= 0 || number > 65535) {
    bad("bad port");
  }
  port_ = std::string(port);
  host_field_ = std::string(authority);
}

std::string WireClient::where() const { return is_unix_ ? "unix:" + path_ : host_ + ":" + port_; }

WireResponse WireClient::exchange(const std::string& request_text, bool& got_some) {
  using std::chrono::duration_cast;
  if (!socket_.is_open()) {
    limit_ = options_.connect_timeout;
    const auto deadline = WireClock::now() + duration_cast<WireClock::duration>(limit_);
    socket_ = is_unix_ ? WireSocket::connect_unix(path_, deadline)
                       : WireSocket::connect_tcp(host_, port_, deadline);
  }
  limit_ = options_.request_timeout;
  const auto deadline = WireClock::now() + duration_cast<WireClock::duration>(limit_);
  socket_.send_all(request_text, deadline);
  Incoming in(socket_, deadline, got_some);
  bool keep = false;
  WireResponse r = read_response(in, options_, keep);
  if (!keep) socket_.close();
  return r;
}

WireResponse WireClient::request(std::string_view method, std::string_view target,
                                 const WireHeaders& headers) {
  if (has_line_break(method) || has_line_break(target)) {
    throw_error(ErrorCode::kInvalidArgument, "an HTTP request line may not contain a line break");
  }
  std::string text = fmt::format("{} {}{} HTTP/1.1\r\nHost: {}\r\nUser-Agent: zeus-cpp\r\n", method,
                                 prefix_, target, is_unix_ ? "localhost" : host_field_);
  for (const auto& [name, value] : headers) {
    if (name.empty() || has_line_break(name) || has_line_break(value) ||
        name.find(':') != std::string::npos) {
      throw_error(ErrorCode::kInvalidArgument,
                  fmt::format("the HTTP header '{}' cannot be sent (a line break or a colon in it)",
                              printable(name)));
    }
    text += fmt::format("{}: {}\r\n", name, value);
  }
  if (method == "POST" || method == "PUT" || method == "PATCH") text += "Content-Length: 0\r\n";
  text += "\r\n";
  for (int attempt = 0;; ++attempt) {
    // An idle connection the daemon has closed (or sent something on unasked)
    // is dropped before it is used.
    if (socket_.is_open() && !socket_.reusable()) socket_.close();
    const bool reused = socket_.is_open();
    bool got_some = false;
    try {
      return exchange(text, got_some);
    } catch (const Error& e) {
      socket_.close();
      const bool timeout = e.code() == ErrorCode::kTimeout;
      if (reused && !got_some && !timeout && attempt == 0) continue;
      throw_error(e.code(), fmt::format("{} {} on {}: {}{}", method, target, where(), e.what(),
                                        timeout ? fmt::format(" (after {:g} s)", limit_.count())
                                                : std::string()));
    }
  }
}

}  // namespace zeus::device_internal
