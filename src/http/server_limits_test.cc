// The HTTP server on loopback, spoken to over raw sockets as a hostile or careless client would:
// every limit, deadline and refusal of http/server.h.
#include "http/server_test_support.h"

namespace cudojo::http::server_testing {
namespace {

TEST_F(HttpServerTest, AnswersAndKeepsTheConnectionForTheNextRequest) {
  start();
  Client client(port_);
  ASSERT_TRUE(client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"));
  const std::string first = client.answer();
  EXPECT_EQ(status_of(first), 200) << first;
  EXPECT_NE(first.find("\r\n\r\nhello"), std::string::npos);
  EXPECT_NE(first.find("X-Content-Type-Options: nosniff"), std::string::npos);
  ASSERT_TRUE(client.send("GET /who HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(status_of(client.answer()), 200);
  EXPECT_FALSE(client.closed());
}

TEST_F(HttpServerTest, HeadAnswersTheLengthOfTheGetWithoutItsBody) {
  start();
  Client client(port_);
  client.send("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string both = client.read_for(500ms);
  EXPECT_NE(both.find("Content-Length: 5\r\n"), std::string::npos);
  // The HEAD answer has no body: the next bytes are the GET's status line.
  EXPECT_NE(both.find("\r\n\r\nHTTP/1.1 200 OK"), std::string::npos) << both;
}

TEST_F(HttpServerTest, HeadersOverTheLimitAreRefused431AtOnce) {
  start();
  Client big(port_);
  const auto asked = Clock::now();
  big.send("GET /hello HTTP/1.1\r\nX-Big: " + std::string(3000, 'b') + "\r\n\r\n");
  const std::string answer = big.answer();
  EXPECT_EQ(status_of(answer), 431) << answer;
  EXPECT_LT(Clock::now() - asked, 1s);
  EXPECT_NE(answer.find("\"error\""), std::string::npos);
  EXPECT_NE(answer.find("Connection: close"), std::string::npos);

  Client many(port_);
  std::string head = "GET /hello HTTP/1.1\r\n";
  for (int i = 0; i < 11; ++i) head += "X-F" + std::to_string(i) + ": 1\r\n";
  many.send(head + "\r\n");
  EXPECT_EQ(status_of(many.answer()), 431);

  Client ten(port_);  // at the limit: fine
  head = "GET /hello HTTP/1.1\r\n";
  for (int i = 0; i < 10; ++i) head += "X-F" + std::to_string(i) + ": 1\r\n";
  ten.send(head + "\r\n");
  EXPECT_EQ(status_of(ten.answer()), 200);
}

TEST_F(HttpServerTest, ATargetOverTheLimitIs414) {
  start();
  Client client(port_);
  client.send("GET /" + std::string(600, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(client.answer()), 414);
}

TEST_F(HttpServerTest, ABodyOverTheLimitIsRefusedBeforeItIsSent) {
  start();
  Client client(port_);
  const auto asked = Clock::now();
  client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n");
  const std::string answer = client.answer();
  EXPECT_EQ(status_of(answer), 413) << answer;
  EXPECT_LT(Clock::now() - asked, 1s);
}

TEST_F(HttpServerTest, AMalformedLengthOrRequestIs400AtOnceAndChunkedIs411) {
  start();
  for (const char* head :
       {"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", "GET /hello HTTP/9.9\r\n\r\n",
        "NOT A REQUEST\r\n\r\n", "GET /a%zz HTTP/1.1\r\n\r\n"}) {
    Client client(port_);
    const auto asked = Clock::now();
    client.send(head);
    const std::string answer = client.answer();
    EXPECT_EQ(status_of(answer), 400) << head << answer;
    EXPECT_LT(Clock::now() - asked, 1s) << head;
  }
  Client chunked(port_);
  chunked.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(status_of(chunked.answer()), 411);
}

TEST_F(HttpServerTest, TheHeaderDeadlineHoldsHoweverSlowlyItTrickles) {
  start();
  Client client(port_);
  const auto started = Clock::now();
  const std::string head = "GET /hello HTTP/1.1\r\nX-Slow: " + std::string(100, 's');
  // A byte every 50 ms: always within any idle timeout, never a whole header within 500 ms.
  for (char c : head) {
    if (!client.send(std::string(1, c))) break;
    client.read_for(50ms);
    if (client.closed()) break;
  }
  EXPECT_TRUE(client.closed());
  const auto lasted = Clock::now() - started;
  EXPECT_GE(lasted, 400ms);
  EXPECT_LT(lasted, 1500ms);
}

TEST_F(HttpServerTest, TheBodyDeadlineHoldsToo) {
  start();
  Client client(port_);
  client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n");
  const auto started = Clock::now();
  for (int i = 0; i < 40 && !client.closed(); ++i) {
    client.send("x");
    client.read_for(50ms);
  }
  EXPECT_TRUE(client.closed());
  EXPECT_LT(Clock::now() - started, 1500ms);
}

TEST_F(HttpServerTest, ConnectionsPerAddressAreCappedExceptATrustedProxys) {
  start();
  std::vector<std::unique_ptr<Client>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<Client>(port_));
    held.back()->send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_EQ(status_of(held.back()->answer()), 200) << i;
  }
  Client fifth(port_);
  fifth.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(fifth.read_for(1000ms), "");
  EXPECT_TRUE(fifth.closed());
  Client other(port_, "127.0.0.2");
  other.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(other.answer()), 200);
  std::vector<std::unique_ptr<Client>> proxied;
  for (int i = 0; i < 6; ++i) {
    proxied.push_back(std::make_unique<Client>(port_, "127.0.0.9"));
    proxied.back()->send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(status_of(proxied.back()->answer()), 200) << i;
  }
  EXPECT_GE(server_->counts().refused_connections, 1);
  // A closed connection gives its place back.
  held.clear();
  std::this_thread::sleep_for(100ms);
  Client again(port_);
  again.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(again.answer()), 200);
}

TEST_F(HttpServerTest, AFullHandlerPoolIs503AtOnceWhileTheEventLoopStillAnswers) {
  start();
  std::vector<std::unique_ptr<Client>> waiting;
  // Two running, two waiting: everything the pool holds.
  for (int i = 0; i < 4; ++i) {
    waiting.push_back(std::make_unique<Client>(port_, i < 2 ? "127.0.0.3" : "127.0.0.4"));
    waiting.back()->send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n");
  }
  for (int i = 0; i < 100 && blocked_ < 2; ++i) std::this_thread::sleep_for(10ms);
  std::this_thread::sleep_for(100ms);
  Client fifth(port_, "127.0.0.5");
  const auto asked = Clock::now();
  fifth.send("GET /block HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string refused = fifth.answer();
  EXPECT_EQ(status_of(refused), 503) << refused;
  EXPECT_NE(refused.find("Retry-After"), std::string::npos);
  EXPECT_LT(Clock::now() - asked, 1s);
  Client quick(port_, "127.0.0.6");
  quick.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(status_of(quick.answer(500ms)), 200);
  release();
  for (auto& client : waiting) EXPECT_EQ(status_of(client->answer()), 200);
}

TEST_F(HttpServerTest, ExpectContinueIsAnsweredBeforeTheBody) {
  start();
  Client client(port_);
  client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
  const std::string interim = client.read_for(500ms, 25);
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  client.send("hello");
  const std::string answer = client.answer();
  EXPECT_EQ(status_of(answer), 200);
  EXPECT_TRUE(answer.ends_with("hello"));
}

TEST_F(HttpServerTest, UnknownPathsAre404AndOtherMethods405WithAllow) {
  start();
  Client client(port_);
  client.send("GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string missing = client.answer();
  EXPECT_EQ(status_of(missing), 404);
  EXPECT_NE(missing.find("no such route"), std::string::npos);
  client.send("DELETE /hello HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string wrong = client.answer();
  EXPECT_EQ(status_of(wrong), 405);
  EXPECT_NE(wrong.find("Allow: GET\r\n"), std::string::npos);
  // With a body the server will not read, the connection cannot go on.
  Client with_body(port_);
  with_body.send("PUT /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_NE(with_body.answer().find("Connection: close"), std::string::npos);
}

TEST_F(HttpServerTest, AHandlerThatThrowsIsAPlain500WithoutItsDetail) {
  start();
  Client client(port_);
  client.send("GET /throw HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answer = client.answer();
  EXPECT_EQ(status_of(answer), 500);
  EXPECT_EQ(answer.find("secret detail"), std::string::npos);
}

TEST_F(HttpServerTest, ForwardedForIsBelievedOnlyFromATrustedProxy) {
  start();
  Client direct(port_);
  direct.send("GET /who HTTP/1.1\r\nX-Forwarded-For: 198.51.100.1\r\n\r\n");
  EXPECT_TRUE(direct.answer().ends_with("\r\n\r\n127.0.0.1"));
  Client proxied(port_, "127.0.0.9");
  proxied.send("GET /who HTTP/1.1\r\nX-Forwarded-For: 1.1.1.1, 198.51.100.1\r\n\r\n");
  EXPECT_TRUE(proxied.answer().ends_with("\r\n\r\n198.51.100.1"));
}

TEST_F(HttpServerTest, APortSomethingListensOnIsRefusedByName) {
  start();
  ServerSettings settings;
  settings.port = port_;
  Server second(router_, settings);
  try {
    second.listen();
    ADD_FAILURE() << "a second server listened on a taken port";
  } catch (const ServerError& error) {
    EXPECT_NE(std::string(error.what()).find("is in use"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace cudojo::http::server_testing
