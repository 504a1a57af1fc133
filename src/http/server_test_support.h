// What the HTTP server's tests share (server_limits_test.cc, server_streams_test.cc): a raw-socket
// client from any loopback address, and a fixture with a server whose limits are made small so each
// test is quick.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "http/loopback_socket.h"
#include "http/server.h"

namespace cudojo::http::server_testing {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A client socket from a chosen loopback address (127.0.0.0/8 all reaches the server).
class Client {
 public:
  Client(int port, const char* from = "127.0.0.1")
      : fd_(connect_to_loopback(port, from)), connected_(fd_ >= 0) {}
  ~Client() { close(fd_); }
  bool connected() const { return connected_; }
  bool send(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Everything that arrives within `timeout`, or until the server closes (then closed() is true).
  std::string read_for(std::chrono::milliseconds timeout, std::size_t stop_after = SIZE_MAX) {
    std::string got;
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end && got.size() < stop_after) {
      pollfd ready{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (poll(&ready, 1, static_cast<int>(std::max<long>(1, left))) <= 0) continue;
      char buffer[65536];
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      got.append(buffer, static_cast<std::size_t>(n));
    }
    return got;
  }
  // One whole answer: the head, then Content-Length bytes of body.
  std::string answer(std::chrono::milliseconds timeout = 3000ms) {
    std::string got;
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      const auto head_end = got.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        const auto length_at = got.find("Content-Length: ");
        const std::size_t length = length_at == std::string::npos || length_at > head_end
                                       ? 0
                                       : std::stoul(got.substr(length_at + 16));
        if (got.size() >= head_end + 4 + length) return got;
      }
      const std::string more = read_for(50ms);
      got += more;
      if (closed_) break;
    }
    return got;
  }
  bool closed() const { return closed_; }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool closed_ = false;
};

inline int status_of(const std::string& answer) {
  if (answer.size() < 12 || !answer.starts_with("HTTP/1.1 ")) return 0;
  return std::stoi(answer.substr(9, 3));
}

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.add(
        "GET", "/hello",
        [](const Request&, Response& response) { response.set_content("hello", "text/plain"); },
        Runs::kOnEventLoop);
    router_.add("GET", "/who", [](const Request& request, Response& response) {
      response.set_content(request.client_address, "text/plain");
    });
    router_.add("POST", "/echo", [](const Request& request, Response& response) {
      response.set_content(request.body, "text/plain");
    });
    router_.add("GET", "/block", [this](const Request&, Response& response) {
      std::unique_lock lock(mutex_);
      ++blocked_;
      released_cv_.wait(lock, [this] { return released_; });
      response.set_content("released", "text/plain");
    });
    router_.add(
        "GET", "/big",
        [](const Request&, Response& response) {
          static const auto big = std::make_shared<const std::string>(300 * 1024, 'b');
          response.shared_body = big;
          response.shared_length = big->size();
          response.set_header("Content-Type", "application/octet-stream");
        },
        Runs::kOnEventLoop);
    router_.add("GET", "/throw",
                [](const Request&, Response&) { throw std::runtime_error("secret detail"); });
    router_.add("GET", "/stream", [this](const Request&, Response& response) {
      response.set_content("event: first\n\n", "text/event-stream");
      response.on_stream_open = [this](std::shared_ptr<ResponseStream> stream) {
        stream->on_close([this] { stream_closed_ = true; });
        std::lock_guard lock(mutex_);
        stream_ = std::move(stream);
      };
    });
    limits_.header_deadline_ms = 500;
    limits_.body_deadline_ms = 500;
    limits_.max_connections_per_address = 4;
    limits_.handler_threads = 2;
    limits_.max_waiting_requests = 2;
    limits_.max_header_fields = 10;
    limits_.max_header_bytes = 2048;
    limits_.max_target_bytes = 512;
    limits_.max_request_bytes = 1024;
    limits_.max_stream_backlog_bytes = 64 * 1024;
  }
  void TearDown() override {
    release();
    if (server_) server_->stop();
  }
  void start() {
    ServerSettings settings;
    settings.host = "127.0.0.1";
    settings.port = 0;
    settings.limits = limits_;
    std::string problem;
    settings.trusted_proxies = *TrustedProxies::parse({"127.0.0.9"}, problem);
    settings.answer_headers = {{"X-Content-Type-Options", "nosniff"}};
    server_ = std::make_unique<Server>(router_, settings);
    port_ = server_->listen();
    server_->start();
  }
  void release() {
    {
      std::lock_guard lock(mutex_);
      released_ = true;
    }
    released_cv_.notify_all();
  }
  std::shared_ptr<ResponseStream> stream() {
    for (int i = 0; i < 200; ++i) {
      {
        std::lock_guard lock(mutex_);
        if (stream_) return stream_;
      }
      std::this_thread::sleep_for(5ms);
    }
    return nullptr;
  }

  Router router_;
  ServeLimits limits_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::mutex mutex_;
  std::condition_variable released_cv_;
  bool released_ = false;
  int blocked_ = 0;
  std::shared_ptr<ResponseStream> stream_;
  std::atomic<bool> stream_closed_{false};
};

}  // namespace cudojo::http::server_testing
