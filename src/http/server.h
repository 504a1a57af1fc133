// The HTTP front door of `cudojo serve`: one event loop (Boost.Asio, with Beast's HTTP/1.1
// parser) holds every connection, and a small pool of handler threads runs the routes that touch
// the store.
//
// Theory of operation. The event loop accepts connections (refusing one past max_connections, or
// past max_connections_per_address from one peer that is not a trusted proxy, by closing it at
// once), reads each request under limits stated before a byte is read (the header's size and field
// count, the target's length, the body's Content-Length) and under whole-request deadlines (the
// header within header_deadline_ms of the connection opening or of the previous answer, however
// slowly it trickles; the body within body_deadline_ms), and answers what it can by itself: every
// malformed or oversized request, 404 and 405, chunked bodies (411), and the routes marked
// Runs::kOnEventLoop (the page's files, from memory). The `before_body` hook sees each request's
// head before its body is read and may answer it at once. Every other route is handed to a handler
// thread; past max_waiting_requests waiting, the request is answered 503 at once. A handler's
// answer goes back to the event loop, which writes it under write_deadline_ms. An event stream
// keeps its connection: the handler's ResponseStream is written by the event loop, and a client
// that goes away is seen at once (the connection's read side ends), which closes the stream.
//
// Nobody's slowness costs anyone else a thread: a slow or silent client holds a socket and a few
// kilobytes until its deadline, and a slow database call holds only a handler thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/limits.h"
#include "http/client_address.h"
#include "http/message.h"
#include "http/router.h"

namespace cudojo::http {

// The server could not start (the address cannot be listened on, say); what() is a sentence.
class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ServerSettings {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (listen() returns it)
  ServeLimits limits;
  TrustedProxies trusted_proxies;
  // Added to every answer, the server's own errors included (the page's security headers).
  std::vector<Header> answer_headers;
  // Sees a request's method, path and header before its body is read; returns true when it has
  // answered (the body is then not read, and the connection closes after the answer).
  std::function<bool(const Request& head, Response& response)> before_body;
  // A handler threw: fills the answer (and logs). Without it the answer is a plain 500.
  std::function<void(const Request&, Response&, std::exception_ptr)> on_exception;
};

// What the server holds now, for /api/health and the tests.
struct ServerCounts {
  std::int64_t open_connections = 0;
  std::int64_t refused_connections = 0;  // closed at accept: over a connection limit
  std::int64_t waiting_requests = 0;
  std::int64_t open_streams = 0;
};

class Server {
 public:
  Server(const Router& router, ServerSettings settings);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens (SO_REUSEADDR, so sockets of an earlier server left in TIME-WAIT do not keep
  // a restart off its port; a port another program listens on is refused). Returns the port.
  // Throws ServerError with the reason.
  int listen();
  // Starts the event loop and the handler threads; returns at once.
  void start();
  // Stops accepting, gives answers being written a moment to finish, closes every connection and
  // stream, and joins every thread. Safe to call twice.
  void stop();
  ServerCounts counts() const;

  struct State;  // the event loop's shared state (connection.cc)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace cudojo::http
