// The front door as a hostile client meets it: bodies and headers it cannot bound, slow and idle
// clients, limits per address.
#include "api_test_support.h"

namespace cudojo::api_testing {
namespace {

TEST_F(Api, TheFrontDoorRefusesWhatItCannotBound) {
  start({"--workers", "0"});
  // A chunked body of 300 MB would pass a Content-Length limit; it is refused before it is read.
  const auto started = std::chrono::steady_clock::now();
  const std::string chunked = raw_request(server_->port(),
                                          "POST /api/learners HTTP/1.1\r\nHost: x\r\nContent-Type: "
                                          "application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
                                          300u << 20, true);
  EXPECT_NE(chunked.find(" 411 "), std::string::npos) << chunked.substr(0, 200);
  EXPECT_NE(chunked.find("\"error\""), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);

  // JSON routes take JSON only: a form or text/plain POST is what another site's page can send.
  auto form = client().Post("/api/learners", "name=mallory", "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415);
  EXPECT_NE(form->body.find("application/json"), std::string::npos);

  // Unknown routes and oversize bodies answer JSON too, and every answer carries the headers.
  auto missing = client().Get("/api/nothing-here");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(json::parse(missing->body)["error"], "no such route");
  for (const char* path : {"/api/nothing-here", "/api/health", "/index.html"}) {
    auto response = client().Get(path);
    ASSERT_TRUE(response) << path;
    EXPECT_EQ(response->get_header_value("X-Content-Type-Options"), "nosniff") << path;
    EXPECT_NE(response->get_header_value("Content-Security-Policy").find("frame-ancestors 'none'"),
              std::string::npos)
        << path;
    EXPECT_FALSE(response->has_header("EXCEPTION_WHAT")) << path;
  }
  auto oversize = client().Post("/api/learners", std::string(ServeLimits{}.max_request_bytes + 1, ' '),
                                "application/json");
  ASSERT_TRUE(oversize);
  EXPECT_EQ(oversize->status, 413);
  EXPECT_TRUE(json::parse(oversize->body, nullptr, false).contains("error")) << oversize->body;
}

TEST_F(Api, OneAddressCannotCreateLearnersWithoutLimit) {
  start({"--workers", "0"});
  const int limit = ServeLimits{}.max_new_learners_per_address_per_hour;
  for (int i = 0; i < limit; ++i) sign_in("learner" + std::to_string(i));
  auto refused = client().Post("/api/learners", json{{"name", "one-too-many"}}.dump(), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 429);
  EXPECT_FALSE(refused->get_header_value("Retry-After").empty());
  EXPECT_NE(json::parse(refused->body)["error"].get<std::string>().find("last hour"), std::string::npos);
}

TEST_F(Api, SlowAndIdleClientsDoNotDelayOthers) {
  start({"--workers", "0"});
  auto connected = [&] {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(server_->port()));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  };
  std::vector<int> held;
  // Eight that trickle a header line now and then, eight that finished one request and stay open.
  for (int i = 0; i < 8; ++i) {
    const int slow = connected();
    const std::string start_of_request = "GET /api/health HTTP/1.1\r\nHost: x\r\n";
    EXPECT_GT(write(slow, start_of_request.data(), start_of_request.size()), 0);
    held.push_back(slow);
    const int idle = connected();
    const std::string request = "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n";
    EXPECT_GT(write(idle, request.data(), request.size()), 0);
    char buffer[1024];
    EXPECT_GT(read(idle, buffer, sizeof buffer), 0);
    held.push_back(idle);
  }
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 16; i += 2) EXPECT_GT(write(held[i], "X-Slow: 1\r\n", 11), 0);
    const auto asked = std::chrono::steady_clock::now();
    auto health = client().Get("/api/health");
    ASSERT_TRUE(health);
    EXPECT_EQ(health->status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 500ms) << "round " << round;
    std::this_thread::sleep_for(200ms);
  }
  for (int fd : held) close(fd);
}

TEST_F(Api, HeadersPastTheirLimitsAre431AtOnceAndTheServerGoesOn) {
  start({"--workers", "0"});
  const std::vector<std::pair<std::string, std::string>> heads = {
      {"one long field",
       "GET /api/health HTTP/1.1\r\nHost: x\r\nX-Long: " + std::string(20'000, 'a') + "\r\n\r\n"},
      {"101 fields",
       [] {
         std::string head = "GET /api/health HTTP/1.1\r\nHost: x\r\n";
         for (int i = 0; i < 100; ++i) head += "X-F" + std::to_string(i) + ": 1\r\n";
         return head + "\r\n";
       }()},
  };
  for (const auto& [what, head] : heads) {
    const auto asked = std::chrono::steady_clock::now();
    const std::string answer = raw_request(server_->port(), head, 0, false);
    EXPECT_NE(answer.find(" 431 "), std::string::npos) << what << ": " << answer.substr(0, 200);
    EXPECT_NE(answer.find("\"error\""), std::string::npos) << what;
    EXPECT_LT(std::chrono::steady_clock::now() - asked, 2s) << what;
  }
  // 100,000 header lines (2 MB): refused once the first 16 KiB are read, not stored.
  std::string flood = "GET /api/health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 100'000; ++i) flood += "X-H: v\r\n";
  const std::string answer = raw_request(server_->port(), flood, 0, false);
  EXPECT_TRUE(answer.empty() || answer.find(" 431 ") != std::string::npos) << answer.substr(0, 200);
  const std::string target =
      raw_request(server_->port(), "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\n\r\n", 0, false);
  EXPECT_NE(target.find(" 414 "), std::string::npos) << target.substr(0, 200);
  const std::string length =
      raw_request(server_->port(), "POST /api/learners HTTP/1.1\r\nContent-Length: x\r\n\r\n", 0, false);
  EXPECT_NE(length.find(" 400 "), std::string::npos) << length.substr(0, 200);
  EXPECT_EQ(client().Get("/api/health")->status, 200);
}

// max_pending_per_address: one address (however many learners it made) has a bounded share of the
// queue; another address still submits.
TEST_F(Api, OneAddressCannotFillTheQueue) {
  start({"--workers", "0", "--limit", "max_pending_per_address=3"});
  const std::string ada = sign_in("ada"), bob = sign_in("bob");
  const std::string job = json{{"stage", "reduction/2"}, {"source", "x"}}.dump();
  EXPECT_EQ(request_from("127.0.0.1", server_->port(), "POST", "/api/jobs", bearer(ada), job).first, 202);
  EXPECT_EQ(request_from("127.0.0.1", server_->port(), "POST", "/api/jobs", bearer(ada), job).first, 202);
  EXPECT_EQ(request_from("127.0.0.1", server_->port(), "POST", "/api/jobs", bearer(bob), job).first, 202);
  const auto [status, body] =
      request_from("127.0.0.1", server_->port(), "POST", "/api/jobs", bearer(bob), job);
  EXPECT_EQ(status, 429);
  EXPECT_NE(body.find("address"), std::string::npos) << body;
  // The same learner from another address has a share there.
  EXPECT_EQ(request_from("127.0.0.2", server_->port(), "POST", "/api/jobs", bearer(bob), job).first, 202);
}

// Behind a trusted proxy, the per-address limits count the address it names, and only its: a client
// cannot pose as another by writing X-Forwarded-For itself.
TEST_F(Api, BehindATrustedProxyEachClientIsItsOwnAddress) {
  start({"--workers", "0", "--trusted-proxy", "127.0.0.1", "--limit",
         "max_new_learners_per_address_per_hour=1"});
  auto sign_up = [&](const char* from, const std::string& name, const std::string& forwarded) {
    return request_from(from, server_->port(), "POST", "/api/learners",
                        forwarded.empty() ? "" : "X-Forwarded-For: " + forwarded + "\r\n",
                        json{{"name", name}}.dump())
        .first;
  };
  EXPECT_EQ(sign_up("127.0.0.1", "ada", "198.51.100.1"), 201);
  EXPECT_EQ(sign_up("127.0.0.1", "bob", "198.51.100.1"), 429);
  EXPECT_EQ(sign_up("127.0.0.1", "bob", "198.51.100.2"), 201);
  EXPECT_EQ(sign_up("127.0.0.1", "cat", "198.51.100.1, 198.51.100.3"), 201);  // the proxy's hop counts
  // Not from the trusted proxy: its X-Forwarded-For is not read.
  EXPECT_EQ(sign_up("127.0.0.2", "dan", "198.51.100.9"), 201);
  EXPECT_EQ(sign_up("127.0.0.2", "eve", "198.51.100.10"), 429);
}

TEST_F(Api, LimitsAreSetByNameAndBadOptionsRefused) {
  const auto [listed, list] = serve_briefly("--list-limits --limit max_queue_length=77");
  EXPECT_EQ(listed, 0) << list;
  for (const char* name : {"max_connections_per_address", "header_deadline_ms", "max_pending_per_address"})
    EXPECT_NE(list.find(name), std::string::npos) << name;
  EXPECT_NE(list.find("77 jobs"), std::string::npos) << list;
  const auto [unknown, unknown_out] = serve_briefly("--port 0 --workers 0 --limit max_qeue_length=5");
  EXPECT_EQ(unknown, 2) << unknown_out;
  EXPECT_NE(unknown_out.find("max_queue_length"), std::string::npos) << unknown_out;
  const auto [negative, negative_out] = serve_briefly("--port 0 --workers 0 --limit max_queue_length=-3");
  EXPECT_EQ(negative, 2) << negative_out;
  const auto [proxy, proxy_out] = serve_briefly("--port 0 --workers 0 --trusted-proxy example.com");
  EXPECT_EQ(proxy, 2) << proxy_out;
  EXPECT_NE(proxy_out.find("example.com"), std::string::npos) << proxy_out;
}

}  // namespace
}  // namespace cudojo::api_testing
