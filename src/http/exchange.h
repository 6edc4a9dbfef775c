// How a handler answers: a Responder completes one request, now or later and
// from any thread, so a handler that must wait (a Perseus rank waiting for
// its peers, a database commit) returns at once and holds no thread. An
// EventStream is the Server-Sent Events form of an answer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "http/executor.h"
#include "zeus/http/message.h"

namespace zeus::http {

namespace detail {
// What the server (or a test) implements behind Responder and EventStream.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual bool write(std::string frame) = 0;  // false once closed
  virtual void close() = 0;
  virtual bool is_open() const = 0;
  virtual void on_close(std::function<void()> callback) = 0;
  virtual bool when_drained(std::size_t below, std::function<void()> callback) = 0;
};
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void send(Response response) = 0;
  virtual std::shared_ptr<EventSink> start_events(Headers headers) = 0;
  virtual Executor executor() const { return {}; }  // none by default (test doubles)
};
}  // namespace detail

// A Server-Sent Events stream (text/event-stream). Copies share one stream.
// Every method may be called from any thread. Called on the request's own
// executor (Responder::executor(), e.g. from an AsyncClient callback),
// start_events() and the sends take effect at once, with no thread hop; from
// elsewhere they are queued to it. Keep one stream's writers on one side.
class EventStream {
 public:
  EventStream() = default;
  explicit EventStream(std::shared_ptr<detail::EventSink> sink) : sink_(std::move(sink)) {}

  // Queues one event; `data` may span lines. False once the stream is closed
  // (the client left, the server is shutting down, or the client fell too far
  // behind and was dropped).
  bool send(std::string_view data, std::string_view event = {}, std::string_view id = {});
  // Events already framed ("data: ...\n\n", several at once): one write
  // instead of one per event, for streams that emit batches.
  bool send_frames(std::string frames);
  // A comment line (": text"), e.g. a keep-alive that also detects a gone client.
  bool comment(std::string_view text);
  void close();
  bool is_open() const;
  // Runs once when the stream closes, on a server thread (at once if closed).
  void on_close(std::function<void()> callback);
  // Back-pressure for a writer that can wait: true if fewer than `below`
  // bytes are queued for the client now (the callback is dropped);
  // otherwise false, and `callback` runs once, on a server thread, when
  // fewer are queued or the stream closes.
  bool when_drained(std::size_t below, std::function<void()> callback);

 private:
  std::shared_ptr<detail::EventSink> sink_;
};

// Completes one request. Copies share one exchange; the first send() or
// start_events() wins and later calls are ignored. If every copy is dropped
// without an answer, the client gets a 500, so a request never hangs forever
// on a lost handle.
class Responder {
 public:
  explicit Responder(std::shared_ptr<detail::Exchange> exchange) : exchange_(std::move(exchange)) {}

  void send(Response response) const { exchange_->send(std::move(response)); }
  // Where the request is served: the executor of its connection, for an
  // AsyncClient whose callbacks should run there (empty for a test double).
  Executor executor() const { return exchange_->executor(); }
  // Answers 200 with Content-Type text/event-stream and keeps the connection
  // for events; `headers` are added to the response head. To an HTTP/1.1
  // client the events go as a chunked body: EventStream::close() ends it and
  // the connection then serves the client's next request (keep-alive); to
  // HTTP/1.0 the body ends with the connection.
  EventStream start_events(Headers headers = {}) const {
    return EventStream(exchange_->start_events(std::move(headers)));
  }

 private:
  std::shared_ptr<detail::Exchange> exchange_;
};

}  // namespace zeus::http
