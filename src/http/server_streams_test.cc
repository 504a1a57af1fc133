// The HTTP server's event streams, large answers and stop, on loopback over raw sockets.
#include "http/server_test_support.h"

namespace cudojo::http::server_testing {
namespace {

TEST_F(HttpServerTest, AStreamIsWrittenFromAnyThreadAndADroppedClientEndsItAtOnce) {
  start();
  auto client = std::make_unique<Client>(port_);
  client->send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string head = client->read_for(300ms);
  EXPECT_EQ(status_of(head), 200);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos);
  EXPECT_NE(head.find("event: first"), std::string::npos);
  auto open = stream();
  ASSERT_TRUE(open);
  std::thread writer([&] { EXPECT_TRUE(open->write("event: second\n\n")); });
  writer.join();
  EXPECT_NE(client->read_for(300ms).find("event: second"), std::string::npos);
  EXPECT_EQ(server_->counts().open_streams, 1);
  client.reset();  // the client goes away without a word
  const auto left = Clock::now();
  while (!stream_closed_ && Clock::now() - left < 2s) std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(stream_closed_);
  EXPECT_LT(Clock::now() - left, 200ms);
  EXPECT_FALSE(open->is_open());
  EXPECT_FALSE(open->write("event: late\n\n"));
  EXPECT_EQ(server_->counts().open_streams, 0);
}

TEST_F(HttpServerTest, AStreamWhoseClientStopsReadingIsClosedAtItsBacklog) {
  start();
  Client client(port_);
  const int small = 4096;
  setsockopt(client.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  client.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  auto open = stream();
  ASSERT_TRUE(open);
  const std::string piece(16 * 1024, 'x');
  bool refused = false;
  for (int i = 0; i < 2000 && !refused; ++i) {
    refused = !open->write("data: " + piece + "\n\n");
    if (i % 50 == 0) std::this_thread::sleep_for(1ms);
  }
  EXPECT_TRUE(refused) << "32 MB written to a client that reads nothing, and still open";
}

TEST_F(HttpServerTest, StopEndsStreamsAndIdleConnections) {
  start();
  Client streaming(port_);
  streaming.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(stream());
  Client idle(port_);
  idle.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(status_of(idle.answer()), 200);
  const auto asked = Clock::now();
  server_->stop();
  EXPECT_LT(Clock::now() - asked, 2s);
  EXPECT_TRUE(stream_closed_);
  streaming.read_for(500ms);
  EXPECT_TRUE(streaming.closed());
  idle.read_for(500ms);
  EXPECT_TRUE(idle.closed());
}

// Large answers take turns (max_large_answers at a time): every one still arrives whole, and a small
// answer is not kept waiting behind them.
TEST_F(HttpServerTest, LargeAnswersTakeTurnsAndEveryOneArrivesWhole) {
  limits_.max_large_answers = 2;
  limits_.header_deadline_ms = 10000;  // the second round comes a while after the first
  limits_.max_connections_per_address = 100;
  start();
  std::vector<std::unique_ptr<Client>> crowd;
  for (int i = 0; i < 20; ++i) {
    crowd.push_back(std::make_unique<Client>(port_, "127.0.0.7"));
    crowd.back()->send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  Client small(port_);
  small.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(small.answer(1000ms)), 200);
  for (auto& client : crowd) {
    const std::string answer = client->answer(5000ms);
    EXPECT_EQ(status_of(answer), 200);
    EXPECT_EQ(answer.size() - answer.find("\r\n\r\n") - 4, 300u * 1024);
  }
  // A second round on the same connections: the places were all given back.
  for (auto& client : crowd) client->send("GET /big HTTP/1.1\r\nHost: x\r\n\r\n");
  for (auto& client : crowd) {
    const std::string answer = client->answer(5000ms);
    EXPECT_EQ(status_of(answer), 200) << answer.substr(0, 200);
    EXPECT_GT(answer.size(), 300u * 1024);
  }
}

}  // namespace
}  // namespace cudojo::http::server_testing
