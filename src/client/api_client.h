// The learner's calls of the cudojo API (docs/openapi.yaml), over HttpClient: each returns the
// answer's JSON or throws ApiError with the server's own sentence, the status and Retry-After.
// ConnectionError (http_client.h) means the server was not reached at all.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "client/http_client.h"

namespace cudojo::client {

struct ApiError : std::runtime_error {
  ApiError(int status_code, const std::string& message, std::optional<int> retry)
      : std::runtime_error(message), status(status_code), retry_after(retry) {}
  int status;
  std::optional<int> retry_after;
  // The answer was not a cudojo server's (no JSON error): the message says so, with the URL.
  bool not_cudojo = false;
};

// A random 128-bit hex name for one submission (the Idempotency-Key header).
std::string new_idempotency_key();

class ApiClient {
 public:
  explicit ApiClient(const ClientSettings& settings) : http_(settings) {}

  nlohmann::json me();
  nlohmann::json join(const std::string& invite, const std::string& name);
  // POST /api/jobs under `key`; a dropped connection is retried under the same key, so the job is
  // queued once.
  nlohmann::json submit(const std::string& stage, const std::string& source, const std::string& language,
                        const std::string& key);
  nlohmann::json job(std::int64_t id);
  // true: withdrawn; false: it had already started (409).
  bool withdraw(std::int64_t id);
  nlohmann::json history(const std::string& stage, int limit,
                         std::optional<std::int64_t> before = std::nullopt);
  nlohmann::json drafts(const std::string& stage);
  nlohmann::json nodes();
  // Whether some node seen in the last minute judges jobs (workers > 0); nullopt when unknown.
  std::optional<bool> judge_online();
  const std::string& url() const { return http_.url(); }

 private:
  nlohmann::json expect(const HttpResponse& response, int ok_low = 200, int ok_high = 299);
  HttpClient http_;
};

}  // namespace cudojo::client
