#include "client/api_client.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <random>
#include <thread>

namespace cudojo::client {

namespace {

// Characters that may stand in a path segment or query value as they are.
std::string escape(const std::string& text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace

std::string new_idempotency_key() {
  std::random_device device;
  std::string key;
  for (int i = 0; i < 4; ++i) key += fmt::format("{:08x}", static_cast<std::uint32_t>(device()));
  return key;
}

nlohmann::json ApiClient::expect(const HttpResponse& response, int ok_low, int ok_high) {
  const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
  if (response.status >= ok_low && response.status <= ok_high) {
    if (body.is_discarded()) {
      ApiError error(response.status,
                     fmt::format("{} answered something that is not JSON; is it a cudojo server?", url()),
                     std::nullopt);
      error.not_cudojo = true;
      throw error;
    }
    return body;
  }
  if (body.is_object() && body.contains("error") && body["error"].is_string())
    throw ApiError(response.status, body["error"].get<std::string>(), response.retry_after);
  // 5xx and 429 without cudojo's JSON: a proxy's page for a server that is down or busy.
  if (response.status >= 500 || response.status == 429)
    throw ApiError(response.status, fmt::format("the server answered HTTP {}", response.status),
                   response.retry_after);
  // Another web server, or a path after the host: not cudojo's own answer.
  ApiError error(response.status,
                 fmt::format("{} answered HTTP {} without cudojo's JSON: is it a cudojo server, and the "
                             "page's address with no path after the host?",
                             url(), response.status),
                 response.retry_after);
  error.not_cudojo = true;
  throw error;
}

nlohmann::json ApiClient::me() { return expect(http_.get("/api/me")); }

nlohmann::json ApiClient::join(const std::string& invite, const std::string& name) {
  return expect(http_.post("/api/join", nlohmann::json{{"invite", invite}, {"name", name}}.dump()));
}

nlohmann::json ApiClient::submit(const std::string& stage, const std::string& source,
                                 const std::string& language, const std::string& key) {
  const std::string body =
      nlohmann::json{{"stage", stage}, {"source", source}, {"language", language}}.dump();
  for (int attempt = 1;; ++attempt) {
    try {
      return expect(http_.post("/api/jobs", body, {{"Idempotency-Key", key}}));
    } catch (const ConnectionError&) {
      if (attempt >= 3) throw;
      std::this_thread::sleep_for(std::chrono::seconds(attempt));
    }
  }
}

nlohmann::json ApiClient::job(std::int64_t id) { return expect(http_.get(fmt::format("/api/jobs/{}", id))); }

bool ApiClient::withdraw(std::int64_t id) {
  const HttpResponse response = http_.del(fmt::format("/api/jobs/{}", id));
  if (response.status == 409) return false;
  expect(response);
  return true;
}

nlohmann::json ApiClient::history(const std::string& stage, int limit, std::optional<std::int64_t> before) {
  std::string path = fmt::format("/api/history?limit={}", limit);
  if (!stage.empty()) path += "&stage=" + escape(stage);
  if (before) path += fmt::format("&before={}", *before);
  return expect(http_.get(path));
}

nlohmann::json ApiClient::drafts(const std::string& stage) {
  return expect(http_.get("/api/drafts" + (stage.empty() ? std::string() : "?stage=" + escape(stage))));
}

nlohmann::json ApiClient::nodes() { return expect(http_.get("/api/nodes")); }

std::optional<bool> ApiClient::judge_online() {
  try {
    const nlohmann::json list = nodes();
    if (!list.is_array()) return std::nullopt;
    for (const auto& node : list)
      if (node.is_object() && node.value("workers", 0) > 0) return true;
    return false;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace cudojo::client
