// A connection that holds an event stream (http/server_state.h): the queue any thread writes to,
// and the connection's side, which writes it out and watches for the client leaving.
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <chrono>

#include "http/server_state.h"

namespace cudojo::http {

using std::chrono::milliseconds;

StreamQueue::StreamQueue(std::weak_ptr<Connection> connection, net::any_io_executor executor,
                         std::size_t max_backlog)
    : connection_(std::move(connection)), executor_(std::move(executor)), max_backlog_(max_backlog) {}

bool StreamQueue::write(std::string bytes) {
  {
    std::lock_guard lock(mutex_);
    if (!open_ || closing_) return false;
    if (backlog_ + bytes.size() > max_backlog_) {
      // The client stopped reading: no more is kept for it.
      open_ = false;
      queue_.clear();
    } else {
      backlog_ += bytes.size();
      queue_.push_back(std::move(bytes));
    }
  }
  wake();
  return is_open();
}

void StreamQueue::close() {
  {
    std::lock_guard lock(mutex_);
    if (!open_ || closing_) return;
    closing_ = true;
  }
  wake();
}

bool StreamQueue::is_open() const {
  std::lock_guard lock(mutex_);
  return open_ && !closing_;
}

void StreamQueue::on_close(std::function<void()> callback) {
  std::lock_guard lock(mutex_);
  on_close_ = std::move(callback);
}

std::optional<std::string> StreamQueue::next() {
  std::lock_guard lock(mutex_);
  if (queue_.empty()) return std::nullopt;
  std::string bytes = std::move(queue_.front());
  queue_.pop_front();
  return bytes;
}

bool StreamQueue::closing() const {
  std::lock_guard lock(mutex_);
  return closing_ || !open_;
}

void StreamQueue::wrote(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  backlog_ -= std::min(bytes, backlog_);
}

void StreamQueue::ended() {
  std::function<void()> callback;
  {
    std::lock_guard lock(mutex_);
    open_ = false;
    queue_.clear();
    callback = std::move(on_close_);
    on_close_ = nullptr;
  }
  if (callback) callback();
}

void StreamQueue::wake() {
  net::post(executor_, [weak = connection_] {
    if (auto connection = weak.lock()) connection->pump_stream();
  });
}

void Connection::open_stream() {
  stream_queue_ = std::make_shared<StreamQueue>(weak_from_this(), stream_.get_executor(),
                                                state_.limits.max_stream_backlog_bytes);
  ++state_.streams;
  auto opened = std::move(response_.on_stream_open);
  response_ = Response{};
  request_.body.clear();
  opened(stream_queue_);
  watch_stream_client();
  pump_stream();
}

// The client sends nothing on a stream; its read side ending (a close, a reset) is how a dropped
// stream is seen at once rather than at the next write.
void Connection::watch_stream_client() {
  if (stream_ended_) return;
  stream_.expires_never();
  stream_.async_read_some(net::buffer(drain_),
                          [self = shared_from_this()](beast::error_code ec, std::size_t read) {
                            self->drained_ += read;
                            if (ec || self->drained_ > 64 * 1024) return self->end_stream();
                            self->watch_stream_client();
                          });
}

void Connection::pump_stream() {
  if (stream_ended_ || !stream_queue_ || stream_write_pending_) return;
  auto next = stream_queue_->next();
  if (!next) {
    if (stream_queue_->closing()) end_stream();
    return;
  }
  stream_writing_ = std::move(*next);
  stream_write_pending_ = true;
  stream_.expires_after(milliseconds(state_.limits.write_deadline_ms));
  net::async_write(stream_, net::buffer(stream_writing_),
                   [self = shared_from_this()](beast::error_code ec, std::size_t written) {
                     self->stream_write_pending_ = false;
                     if (ec) return self->end_stream();
                     self->stream_queue_->wrote(written);
                     self->pump_stream();
                   });
}

void Connection::end_stream() {
  if (!stream_queue_ || stream_ended_) return;
  stream_ended_ = true;
  --state_.streams;
  stream_queue_->ended();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

}  // namespace cudojo::http
