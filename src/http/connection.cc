// One connection's life (http/server_state.h): read a head, check it, read the body, route, answer,
// and again. Every function here runs on the connection's strand, except the handler thread's part
// of run_route; an answer that is an event stream goes on in connection_stream.cc.
#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <chrono>
#include <cstdio>

#include "http/server_state.h"
#include "http/uri.h"

namespace cudojo::http {

namespace bhttp = beast::http;
using std::chrono::milliseconds;

namespace {

// The most of an answer one write hands the kernel; answers larger than this take turns
// (Server::State::take_large_answer_place).
constexpr std::size_t kSliceBytes = 64 * 1024;

// What the server answers a refused request with: the fixed sentence, and no connection reuse.
Response refusal(int status) {
  Response response;
  response.set_error(status, error_sentence(status));
  response.close_connection = true;
  return response;
}

bool is_parse_error(const beast::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
}

}  // namespace

// ---- The connection ------------------------------------------------------------------------------

Connection::Connection(Server::State& state, tcp::socket socket, std::string peer, std::string group,
                       bool per_address)
    : state_(state),
      stream_(std::move(socket)),
      // The head and one read's worth: Beast's parser takes the body out of it as it arrives.
      buffer_(state.limits.max_header_bytes + 64 * 1024),
      peer_(std::move(peer)),
      group_(std::move(group)),
      per_address_(per_address) {}

Connection::~Connection() {
  give_back_large_answer_place();
  end_stream();
  state_.forget(this);
  state_.release(group_, per_address_);
}

void Connection::start() {
  net::post(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
}

void Connection::shut() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    if (self->stream_queue_) return self->end_stream();
    beast::error_code ignored;
    self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    self->stream_.close();
  });
}

void Connection::read_header() {
  if (state_.stopping) return;
  request_ = Request{};
  response_ = Response{};
  route_ = nullptr;
  close_after_ = false;
  head_only_ = false;
  parser_.emplace(request_, state_.limits);
  // An idle connection gives back what its last request needed.
  if (buffer_.size() == 0) buffer_.shrink_to_fit();
  // One deadline for the whole head, however it trickles in: it is not renewed by each byte.
  stream_.expires_after(milliseconds(state_.limits.header_deadline_ms));
  bhttp::async_read_header(
      stream_, buffer_, *parser_,
      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
}

void Connection::on_header(beast::error_code ec) {
  if (ec) {
    if (ec == bhttp::error::header_limit) return refuse(parser_->target_too_long() ? 414 : 431);
    if (ec == bhttp::error::body_limit) return refuse(413);
    if (ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message && is_parse_error(ec))
      return refuse(400);
    return;  // the client left, or its deadline passed (the stream closed the socket): nothing to say
  }
  auto target = parse_target(request_.target);
  if (!target) return refuse(400);
  request_.path = std::move(target->path);
  request_.query = std::move(target->query);
  request_.params = std::move(target->params);
  request_.peer_address = peer_;
  std::vector<std::string_view> forwarded;
  for (const Header& field : request_.headers) {
    if (same_name(field.name, "X-Forwarded-For")) forwarded.push_back(field.value);
  }
  request_.client_address = state_.settings.trusted_proxies.client_address(peer_, forwarded);
  head_only_ = request_.method == "HEAD";
  // A chunked body has no length to hold it to before it arrives.
  if (parser_->chunked() || request_.has_header("Transfer-Encoding")) return refuse(411);
  close_after_ = !parser_->keep_alive();
  const bool body_follows = !parser_->is_done();

  const RouteLookup found = state_.router.find(request_.method, request_.path);
  if (!found.route) {
    if (found.allow.empty()) {
      response_.set_error(404, error_sentence(404));
    } else {
      response_.set_header("Allow", found.allow);
      response_.set_error(405,
                          fmt::format("{} answers {}, not {}", request_.path, found.allow, request_.method));
    }
    // The body is never read, so the connection cannot carry another request after this one.
    response_.close_connection = body_follows;
    return write_answer();
  }
  route_ = found.route;
  request_.matches = found.matches;
  if (state_.settings.before_body && state_.settings.before_body(request_, response_)) {
    response_.close_connection = response_.close_connection || body_follows;
    return write_answer();
  }
  if (!body_follows) return run_route();

  auto read_body = [self = shared_from_this()] {
    self->stream_.expires_after(milliseconds(self->state_.limits.body_deadline_ms));
    bhttp::async_read(self->stream_, self->buffer_, *self->parser_,
                      [self](beast::error_code read_error, std::size_t) { self->on_body(read_error); });
  };
  const auto expect = request_.header("Expect");
  if (expect && same_name(*expect, "100-continue") && request_.version >= 11) {
    // The client waits for this before it sends the body it announced.
    static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
    stream_.expires_after(milliseconds(state_.limits.write_deadline_ms));
    return net::async_write(
        stream_, net::buffer(kContinue, sizeof kContinue - 1),
        [self = shared_from_this(), read_body](beast::error_code write_error, std::size_t) {
          if (!write_error) read_body();
        });
  }
  read_body();
}

void Connection::on_body(beast::error_code ec) {
  if (ec) {
    if (ec == bhttp::error::body_limit) return refuse(413);
    if (is_parse_error(ec) && ec != bhttp::error::partial_message) return refuse(400);
    return;  // the client left, or its body did not arrive in time
  }
  run_route();
}

void Connection::handle(const Route& route, Response& response) {
  try {
    route.handler(request_, response);
  } catch (...) {
    response = Response{};
    if (state_.settings.on_exception) {
      state_.settings.on_exception(request_, response, std::current_exception());
    } else {
      response.set_error(500, error_sentence(500));
    }
  }
}

void Connection::run_route() {
  const Route& route = *route_;
  if (route.runs == Runs::kOnEventLoop) {
    handle(route, response_);
    return write_answer();
  }
  auto self = shared_from_this();
  const bool queued = state_.pool.submit(
      request_.client_address == peer_ ? group_ : address_group(request_.client_address), [self, &route] {
        Response response;
        self->handle(route, response);
        net::post(self->stream_.get_executor(), [self, answer = std::move(response)]() mutable {
          self->response_ = std::move(answer);
          self->write_answer();
        });
      });
  if (!queued) {
    response_ = refusal(503);
    response_.set_header("Retry-After", std::to_string(state_.limits.retry_after_seconds));
    response_.close_connection = false;
    write_answer();
  }
}

void Connection::refuse(int status) {
  response_ = refusal(status);
  write_answer();
}

void Connection::write_answer() {
  Response& answer = response_;
  for (const Header& field : state_.settings.answer_headers) {
    if (!answer.header(field.name)) answer.headers.push_back(field);
  }
  const bool stream = static_cast<bool>(answer.on_stream_open);
  close_after_ = close_after_ || answer.close_connection || stream || state_.stopping;
  head_ = fmt::format("HTTP/1.1 {} {}\r\n", answer.status, reason_phrase(answer.status));
  for (const Header& field : answer.headers) {
    // Framing is the server's: a route cannot set a length that disagrees with its body.
    if (same_name(field.name, "Content-Length") || same_name(field.name, "Connection") ||
        same_name(field.name, "Transfer-Encoding"))
      continue;
    head_ += fmt::format("{}: {}\r\n", field.name, field.value);
  }
  const bool bodiless = answer.status == 304 || answer.status == 204 || answer.status < 200;
  // An event stream has no length: its body ends when the connection does.
  if (!stream && !bodiless) head_ += fmt::format("Content-Length: {}\r\n", answer.content_length());
  if (close_after_) {
    head_ += "Connection: close\r\n";
  } else if (request_.version == 10) {
    head_ += "Connection: keep-alive\r\n";
  }
  head_ += "\r\n";

  unsent_.clear();
  unsent_index_ = 0;
  unsent_offset_ = 0;
  unsent_.push_back(net::buffer(head_));
  if (!head_only_ && !bodiless) {
    if (answer.shared_body) {
      unsent_.push_back(net::buffer(answer.shared_body->data() + answer.shared_offset, answer.shared_length));
    } else if (!answer.body.empty()) {
      unsent_.push_back(net::buffer(answer.body));
    }
  }
  // A large answer waits for one of the max_large_answers places before its first byte goes out.
  std::size_t total = 0;
  for (const auto& part : unsent_) total += part.size();
  if (total > kSliceBytes && !state_.take_large_answer_place(shared_from_this())) return;
  holds_large_answer_place_ = total > kSliceBytes;
  start_writing();
}

void Connection::start_writing() {
  // One deadline for the whole answer, however slowly the client takes it.
  stream_.expires_after(milliseconds(state_.limits.write_deadline_ms));
  write_slice();
}

void Connection::resume_large_answer() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->holds_large_answer_place_ = true;
    self->start_writing();
  });
}

void Connection::give_back_large_answer_place() {
  if (!holds_large_answer_place_) return;
  holds_large_answer_place_ = false;
  state_.give_back_large_answer_place();
}

// An answer goes out a slice at a time, so no connection holds the event loop for longer than one
// slice's copy (the kernel would otherwise take megabytes from one write on loopback).
void Connection::write_slice() {
  std::array<net::const_buffer, 2> slice;
  std::size_t parts = 0, bytes = 0;
  for (std::size_t i = unsent_index_; i < unsent_.size() && bytes < kSliceBytes; ++i) {
    net::const_buffer part = unsent_[i];
    if (i == unsent_index_) part += unsent_offset_;
    const std::size_t take = std::min(part.size(), kSliceBytes - bytes);
    if (parts < slice.size()) slice[parts++] = net::const_buffer(part.data(), take);
    bytes += take;
  }
  if (bytes == 0) return on_written({});
  auto on_sent = [self = shared_from_this()](beast::error_code ec, std::size_t written) {
    if (ec) return self->on_written(ec);
    self->consume_unsent(written);
    self->write_slice();
  };
  if (parts == 1) return stream_.async_write_some(slice[0], std::move(on_sent));
  stream_.async_write_some(slice, std::move(on_sent));
}

void Connection::consume_unsent(std::size_t written) {
  while (written > 0 && unsent_index_ < unsent_.size()) {
    const std::size_t left = unsent_[unsent_index_].size() - unsent_offset_;
    const std::size_t take = std::min(left, written);
    unsent_offset_ += take;
    written -= take;
    if (unsent_offset_ == unsent_[unsent_index_].size()) {
      ++unsent_index_;
      unsent_offset_ = 0;
    }
  }
}

void Connection::on_written(beast::error_code ec) {
  give_back_large_answer_place();
  if (ec) return;  // the client left or did not take the answer in time
  if (response_.on_stream_open) return open_stream();
  if (close_after_) return linger_then_close();
  read_header();
}

void Connection::linger_then_close() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  // What was already read past the refused head counts as drained; then at most 2 s more.
  buffer_.consume(buffer_.size());
  stream_.expires_after(std::chrono::seconds(2));
  linger_read();
}

void Connection::linger_read() {
  // At most this much of whatever the client still sends is read and dropped.
  constexpr std::size_t kLingerBytes = 256 * 1024;
  stream_.async_read_some(net::buffer(drain_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t read) {
                            self->drained_ += read;
                            if (ec || self->drained_ >= kLingerBytes) return self->stream_.close();
                            self->linger_read();
                          });
}

}  // namespace cudojo::http
