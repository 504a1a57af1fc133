// An HTTP request and answer as routes see them. These are cudojo's own types: nothing above this
// folder depends on the HTTP library, which only server.cc and connection.cc include (Boost.Beast;
// docs/ARCHITECTURE.md says why that one).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudojo::http {

struct Header {
  std::string name;
  std::string value;
};

// Header names compare without regard to ASCII case (RFC 9110 section 5.1).
bool same_name(std::string_view a, std::string_view b);

struct Request {
  std::string method;  // as sent: "GET", "POST", ...
  std::string target;  // as sent: the path and query, still percent-encoded
  std::string path;    // the target's path, percent-decoded
  std::string query;   // the target after '?', still encoded
  int version = 11;    // 10 for HTTP/1.0, 11 for HTTP/1.1
  std::vector<Header> headers;
  std::string body;
  // The query's parameters, decoded ('+' is a space), in order.
  std::vector<std::pair<std::string, std::string>> params;
  std::string peer_address;          // the TCP peer
  std::string client_address;        // who sent it: the peer, or behind a trusted proxy the one it names
  std::vector<std::string> matches;  // the route's captures; [0] is the whole path

  // The first field of that name.
  std::optional<std::string_view> header(std::string_view name) const;
  bool has_header(std::string_view name) const { return header(name).has_value(); }
  // The first field's value, or "" when there is none.
  std::string header_value(std::string_view name) const;
  std::optional<std::string> param(std::string_view name) const;
  bool has_param(std::string_view name) const { return param(name).has_value(); }
  // The route's capture `index`, or "" when it has fewer.
  std::string match(std::size_t index) const;
};

// The write side of an open event stream (text/event-stream), safe to use from any thread. The
// event loop writes what is queued, in order; a client that stops reading is closed once it holds
// max_stream_backlog_bytes unsent.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Queues `bytes`; false when the stream is closed (its client left, or it was closed).
  virtual bool write(std::string bytes) = 0;
  // Closes the stream once what is queued has been written.
  virtual void close() = 0;
  virtual bool is_open() const = 0;
  // Called once when the stream closes, whatever the reason (the client left, close(), the server
  // stopping). Set it before the first write; it runs on the event loop and must not block.
  virtual void on_close(std::function<void()> callback) = 0;
};

struct Response {
  int status = 200;
  std::vector<Header> headers;
  std::string body;
  // A body held once in memory and shared by every answer that sends it (a static file): when set,
  // `body` is not used and [shared_offset, shared_offset + shared_length) of it is sent.
  std::shared_ptr<const std::string> shared_body;
  std::size_t shared_offset = 0;
  std::size_t shared_length = 0;
  // An event stream: the answer's header (and `body`, its first events) goes out without a length,
  // then the server hands the open stream to this. Never called when the client left first.
  std::function<void(std::shared_ptr<ResponseStream>)> on_stream_open;
  // Close the connection after this answer (the request's body was not read, say).
  bool close_connection = false;

  // Replaces any field of that name.
  void set_header(std::string name, std::string value);
  std::optional<std::string_view> header(std::string_view name) const;
  void set_content(std::string content, std::string_view type);
  // A JSON error answer: {"error": message}.
  void set_error(int error_status, std::string_view message);
  void set_redirect(std::string location, int redirect_status = 302);
  // The bytes of body this answer sends (shared or owned).
  std::size_t content_length() const { return shared_body ? shared_length : body.size(); }
};

// "OK", "Not Found", ...; "Unknown" for a status this server never sends.
std::string_view reason_phrase(int status);

// The sentence of an error the server answers by itself (no route, a header over the limit, ...).
std::string error_sentence(int status);

}  // namespace cudojo::http
