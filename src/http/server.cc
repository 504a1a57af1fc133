#include "http/server.h"

#include <fmt/format.h>
#include <netinet/tcp.h>
#include <sys/resource.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <cstdio>

#include "http/server_state.h"

namespace cudojo::http {

namespace {

// Raises this process's open-file limit to its hard limit (a server holding ten thousand idle
// connections needs as many descriptors), and returns the limit now in force.
std::int64_t raise_open_file_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 1024;
  if (files.rlim_cur < files.rlim_max) {
    rlimit raised = files;
    raised.rlim_cur = files.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) files = raised;
  }
  return files.rlim_cur == RLIM_INFINITY ? (1 << 20) : static_cast<std::int64_t>(files.rlim_cur);
}

// Descriptors kept back from connections: the store, workers' pipes, logs, the listener.
constexpr std::int64_t kReservedFiles = 256;

}  // namespace

Server::State::State(const Router& router_, ServerSettings settings_)
    : router(router_),
      settings(std::move(settings_)),
      limits(settings.limits),
      io(std::max(1, settings.limits.io_threads)),
      acceptor(io),
      accept_pause(io),
      pool(settings.limits.handler_threads, settings.limits.max_waiting_requests) {
  connection_cap = std::min<std::int64_t>(
      limits.max_connections, std::max<std::int64_t>(16, raise_open_file_limit() - kReservedFiles));
}

bool Server::State::admit(const std::string& peer, bool per_address) {
  std::lock_guard lock(mutex);
  if (open >= connection_cap) return false;
  if (per_address) {
    int& from_peer = open_by_address[peer];
    if (from_peer >= limits.max_connections_per_address) return false;
    ++from_peer;
  }
  ++open;
  return true;
}

void Server::State::release(const std::string& peer, bool per_address) {
  std::lock_guard lock(mutex);
  --open;
  if (!per_address) return;
  const auto found = open_by_address.find(peer);
  if (found != open_by_address.end() && --found->second <= 0) open_by_address.erase(found);
}

void Server::State::forget(Connection* connection) {
  std::lock_guard lock(mutex);
  live.erase(connection);
}

bool Server::State::take_large_answer_place(std::shared_ptr<Connection> connection) {
  std::lock_guard lock(mutex);
  if (large_answers < limits.max_large_answers) {
    ++large_answers;
    return true;
  }
  large_answers_waiting.push_back(std::move(connection));
  return false;
}

void Server::State::give_back_large_answer_place() {
  std::shared_ptr<Connection> next;
  {
    std::lock_guard lock(mutex);
    if (!stopping && !large_answers_waiting.empty()) {
      next = std::move(large_answers_waiting.front());
      large_answers_waiting.pop_front();
    }
    if (!next) --large_answers;  // else the place passes to it
  }
  if (next) next->resume_large_answer();
}

void Server::State::accept_next() {
  acceptor.async_accept(net::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    if (stopping) return;
    if (ec) {
      // Out of descriptors or memory: wait a moment rather than spin on the same failure.
      if (ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
          ec == net::error::no_memory) {
        accept_pause.expires_after(std::chrono::milliseconds(50));
        accept_pause.async_wait([this](beast::error_code) {
          if (!stopping) accept_next();
        });
        return;
      }
      if (ec == net::error::operation_aborted) return;
      accept_next();
      return;
    }
    beast::error_code peer_error;
    const auto endpoint = socket.remote_endpoint(peer_error);
    if (peer_error) {
      accept_next();
      return;
    }
    const std::string address = endpoint.address().to_string();
    const std::string peer = normalized_address(address).value_or(address);
    const bool per_address = !settings.trusted_proxies.contains(peer);
    std::string group = address_group(peer);
    if (!admit(group, per_address)) {
      // Closed at once: a refused connection costs the server nothing after this.
      ++refused;
      socket.close(peer_error);
      accept_next();
      return;
    }
    socket.set_option(tcp::no_delay(true), peer_error);
    auto connection =
        std::make_shared<Connection>(*this, std::move(socket), peer, std::move(group), per_address);
    {
      std::lock_guard lock(mutex);
      live.emplace(connection.get(), connection);
    }
    connection->start();
    accept_next();
  });
}

Server::Server(const Router& router, ServerSettings settings)
    : state_(std::make_unique<State>(router, std::move(settings))) {}

Server::~Server() { stop(); }

int Server::listen() {
  State& state = *state_;
  const std::string& host = state.settings.host;
  beast::error_code ec;
  tcp::resolver resolver(state.io);
  const auto found = resolver.resolve(host, std::to_string(state.settings.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) throw ServerError(fmt::format("cannot listen on {}: {}", host, ec.message()));
  const tcp::endpoint endpoint = *found.begin();
  state.acceptor.open(endpoint.protocol(), ec);
  if (!ec) state.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) state.acceptor.bind(endpoint, ec);
  if (ec == net::error::address_in_use)
    throw ServerError(fmt::format("{}:{} is in use by another program", host, state.settings.port));
  if (!ec) state.acceptor.listen(std::max(16, state.limits.listen_backlog), ec);
  if (ec)
    throw ServerError(fmt::format("cannot listen on {}:{}: {}", host, state.settings.port, ec.message()));
  return state.acceptor.local_endpoint().port();
}

void Server::start() {
  State& state = *state_;
  state.keep_running.emplace(net::make_work_guard(state.io));
  state.accept_next();
  for (int i = 0; i < std::max(1, state.limits.io_threads); ++i)
    state.io_threads.emplace_back([&state] {
      for (;;) {
        try {
          state.io.run();
          return;
        } catch (const std::exception& error) {
          // A handler of ours threw on the event loop: log it and keep serving everyone else.
          std::fprintf(stderr, "cudojo serve: the event loop caught %s\n", error.what());
        }
      }
    });
}

void Server::stop() {
  State& state = *state_;
  if (state.stopping.exchange(true)) return;
  net::post(state.io, [&state] {
    beast::error_code ignored;
    state.acceptor.close(ignored);
    state.accept_pause.cancel();
  });
  // No handler starts after this; one running finishes and posts its answer.
  state.pool.stop();
  std::vector<std::shared_ptr<Connection>> open;
  {
    std::lock_guard lock(state.mutex);
    for (auto& [key, weak] : state.live) {
      if (auto connection = weak.lock()) open.push_back(std::move(connection));
    }
  }
  {
    std::lock_guard lock(state.mutex);
    for (auto& waiting : state.large_answers_waiting) open.push_back(std::move(waiting));
    state.large_answers_waiting.clear();
  }
  for (auto& connection : open) connection->shut();
  open.clear();
  state.keep_running.reset();
  // The loop ends by itself once every connection is closed; a second at most, then it is stopped.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < give_up && !state.io.stopped()) {
    {
      std::lock_guard lock(state.mutex);
      if (state.open == 0) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  state.io.stop();
  for (auto& thread : state.io_threads) {
    if (thread.joinable()) thread.join();
  }
}

ServerCounts Server::counts() const {
  ServerCounts counts;
  {
    std::lock_guard lock(state_->mutex);
    counts.open_connections = state_->open;
  }
  counts.refused_connections = state_->refused;
  counts.waiting_requests = state_->pool.waiting();
  counts.open_streams = state_->streams;
  return counts;
}

}  // namespace cudojo::http
