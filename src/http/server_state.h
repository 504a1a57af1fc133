// Inside the HTTP server (http/server.h): the event loop's shared state and one connection. Only
// server.cc and connection.cc include this, so Boost's headers stay out of every other file.
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "http/handler_pool.h"
#include "http/server.h"

namespace cudojo::http {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

class Connection;

// Members are in an order that matters: the io_context is destroyed after the acceptor, the timer
// and the pool, and before the counts, because destroying it destroys the handlers it still holds,
// and with them the last connections, whose destructors release their counts here.
struct Server::State {
  State(const Router& router, ServerSettings settings);

  // Accepts the next connection (and the one after, for as long as the server runs).
  void accept_next();
  // Counts a new connection from `peer`; false when it is over a limit (and is to be closed).
  bool admit(const std::string& peer, bool per_address);
  // A connection admitted with `per_address` ended.
  void release(const std::string& peer, bool per_address);
  void forget(Connection* connection);
  // Large answers are sent max_large_answers at a time, in the order they were ready: the event
  // loop then cycles through at most that many big copies between looking at everyone else (a
  // thousand clients fetching a 270 KB script at once otherwise held every other client for
  // 100-200 ms on 2 cores). True when `connection` may start now; else it is resumed when a place
  // frees.
  bool take_large_answer_place(std::shared_ptr<Connection> connection);
  void give_back_large_answer_place();

  const Router& router;
  const ServerSettings settings;
  const ServeLimits& limits;
  // max_connections, or fewer when the process may not open that many files.
  std::int64_t connection_cap = 0;
  std::atomic<bool> stopping{false};
  std::atomic<std::int64_t> refused{0};
  std::atomic<std::int64_t> streams{0};
  std::mutex mutex;  // guards what follows, up to the io_context
  std::int64_t open = 0;
  std::unordered_map<std::string, int> open_by_address;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> live;
  int large_answers = 0;  // being sent now
  // Held here while they wait: a waiting connection has no operation pending to keep it alive.
  std::deque<std::shared_ptr<Connection>> large_answers_waiting;

  net::io_context io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> keep_running;
  tcp::acceptor acceptor;
  net::steady_timer accept_pause;
  HandlerPool pool;
  std::vector<std::thread> io_threads;
};

// Reads one request straight into a Request, refusing it as soon as a limit is passed: the
// target's length, the number of header fields (Beast's own header_limit bounds their bytes, and
// body_limit a Content-Length before any of the body is read).
class RequestParser final : public beast::http::basic_parser<true> {
 public:
  RequestParser(Request& request, const ServeLimits& limits);
  bool target_too_long() const { return target_too_long_; }

 private:
  void on_request_impl(beast::http::verb, beast::string_view method, beast::string_view target, int version,
                       beast::error_code& ec) override;
  void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}
  void on_field_impl(beast::http::field, beast::string_view name, beast::string_view value,
                     beast::error_code& ec) override;
  void on_header_impl(beast::error_code&) override {}
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code&) override;
  std::size_t on_body_impl(beast::string_view body, beast::error_code&) override;
  void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code& ec) override;
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view, beast::error_code& ec) override;
  void on_finish_impl(beast::error_code&) override {}

  Request& request_;
  const ServeLimits& limits_;
  bool target_too_long_ = false;
};

// An open event stream's queue, shared by whoever writes it (any thread) and its connection (the
// event loop).
class StreamQueue final : public ResponseStream {
 public:
  StreamQueue(std::weak_ptr<Connection> connection, net::any_io_executor executor, std::size_t max_backlog);

  bool write(std::string bytes) override;
  void close() override;
  bool is_open() const override;
  void on_close(std::function<void()> callback) override;

  // The event loop's side.
  std::optional<std::string> next();  // the next queued bytes
  bool closing() const;               // close() was called
  void wrote(std::size_t bytes);
  void ended();  // the stream is over: fires the callback once

 private:
  void wake();  // asks the connection to write what is queued
  const std::weak_ptr<Connection> connection_;
  const net::any_io_executor executor_;
  const std::size_t max_backlog_;
  mutable std::mutex mutex_;
  std::deque<std::string> queue_;
  std::size_t backlog_ = 0;
  bool open_ = true;
  bool closing_ = false;
  std::function<void()> on_close_;
};

// One client connection: reads a request, has it answered, writes the answer, and again, until the
// client leaves, a deadline passes, or the answer is an event stream (which then owns the
// connection until it ends). Every step runs on the connection's strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // `group`: the peer's address group (address_group), which its count is kept under.
  Connection(Server::State& state, tcp::socket socket, std::string peer, std::string group, bool per_address);
  ~Connection();
  void start();
  // The server is stopping: end now.
  void shut();
  // A place for this connection's large answer freed: send it.
  void resume_large_answer();

 private:
  friend class StreamQueue;
  void read_header();
  void on_header(beast::error_code ec);
  void on_body(beast::error_code ec);
  void run_route();
  void handle(const Route& route, Response& response);
  // Answers a request the server refuses by itself, then closes.
  void refuse(int status);
  void write_answer();
  void start_writing();
  void give_back_large_answer_place();
  void write_slice();
  void consume_unsent(std::size_t written);
  void on_written(beast::error_code ec);
  // Closes after an answer to a request whose rest may still be arriving: the answer is left to be
  // read (reading and dropping what follows for a moment) instead of being lost to a reset.
  void linger_then_close();
  void linger_read();
  void open_stream();
  void watch_stream_client();
  void pump_stream();
  void end_stream();

  Server::State& state_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  const std::string peer_;
  const std::string group_;
  const bool per_address_;
  Request request_;
  std::optional<RequestParser> parser_;
  const Route* route_ = nullptr;
  Response response_;
  std::string head_;                       // the answer's status line and fields, as written
  std::vector<net::const_buffer> unsent_;  // the answer: head_, then its body
  std::size_t unsent_index_ = 0;           // the first part of unsent_ not wholly written
  std::size_t unsent_offset_ = 0;          // bytes of that part already written
  bool holds_large_answer_place_ = false;
  bool close_after_ = false;
  bool head_only_ = false;  // HEAD: the fields of a GET answer, no body
  std::shared_ptr<StreamQueue> stream_queue_;
  std::string stream_writing_;
  bool stream_write_pending_ = false;
  bool stream_ended_ = false;
  std::array<char, 512> drain_{};
  std::size_t drained_ = 0;
};

}  // namespace cudojo::http
