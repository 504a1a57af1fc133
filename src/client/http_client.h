// The terminal's HTTP client of a cudojo server (issue #27): one server's URL, an optional bearer
// token, TLS checked against the system's CA store (plus --cacert), and the proxy the environment
// names. cpp-httplib stays inside http_client.cc; callers see status, body and Retry-After.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cudojo::client {

// The server could not be reached (refused, unknown host, TLS refused, timed out, cut mid-answer).
// what() is "cannot reach URL: reason".
struct ConnectionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Something the user gave cannot be used (a malformed URL, an unreadable --cacert).
struct ClientSetupError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::optional<int> retry_after;  // seconds, when the server sent Retry-After
};

struct ProxySetting {
  std::string host;
  int port = 0;
  std::string user;
  std::string password;
};

// The pieces of an http:// or https:// URL; throws ClientSetupError for anything else.
struct ParsedUrl {
  std::string scheme;  // http or https
  std::string host;
  int port = 0;
  std::string base_path;  // "" or "/prefix" without a trailing slash
};
ParsedUrl parse_url(const std::string& url);

// The proxy for `url` from https_proxy / http_proxy (lower case first, then upper; all_proxy as a
// fallback) unless no_proxy (a comma list of hosts, .domains, domain suffixes or "*") names its
// host, as curl reads them: loopback is no exception (no_proxy=127.0.0.1,localhost exempts it).
// Unlike curl, HTTP_PROXY in upper case is read too. `getenv` is a parameter so tests need not
// change the process's environment.
std::optional<ProxySetting> proxy_for(const ParsedUrl& url,
                                      const std::function<const char*(const char*)>& getenv);

struct ClientSettings {
  std::string url;
  std::string token;   // sent as "Authorization: Bearer ..." when not empty; never printed
  std::string cacert;  // a PEM file trusted besides the system's CA store
  int timeout_s = 30;
};

class HttpClient {
 public:
  explicit HttpClient(const ClientSettings& settings);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  using Headers = std::vector<std::pair<std::string, std::string>>;
  HttpResponse get(const std::string& path);
  HttpResponse post(const std::string& path, const std::string& json_body, const Headers& headers = {});
  HttpResponse del(const std::string& path);
  const std::string& url() const { return settings_.url; }

 private:
  struct Impl;
  ClientSettings settings_;
  ParsedUrl parsed_;
  std::string via_proxy_;  // " through the proxy host:port" in errors, else ""
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudojo::client
