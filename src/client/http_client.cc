#include "client/http_client.h"

#include <fmt/format.h>
#include <httplib.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace cudojo::client {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::optional<int> parse_port(std::string_view text) {
  int port = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), port);
  if (error != std::errc() || end != text.data() + text.size() || port < 1 || port > 65535)
    return std::nullopt;
  return port;
}

// NO_PROXY entries: "*", "host", ".domain" or "domain" (matching the domain and its subdomains),
// each optionally with ":port" (the port is ignored, as curl ignores it for domains).
bool no_proxy_matches(const std::string& list, const std::string& host) {
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string entry = list.substr(start, comma - start);
    start = comma + 1;
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    if (entry.empty()) continue;
    if (entry == "*") return true;
    if (const auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon)
      entry.resize(colon);
    entry = lower(entry);
    if (entry.front() == '.') entry.erase(0, 1);
    if (host == entry) return true;
    if (host.size() > entry.size() && host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
        host[host.size() - entry.size() - 1] == '.')
      return true;
  }
  return false;
}

}  // namespace

ParsedUrl parse_url(const std::string& url) {
  ParsedUrl parsed;
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos)
    throw ClientSetupError(
        fmt::format("'{}' is not a URL: give it as https://host or http://host:port", url));
  parsed.scheme = lower(url.substr(0, scheme_end));
  if (parsed.scheme != "http" && parsed.scheme != "https")
    throw ClientSetupError(fmt::format("'{}': only http:// and https:// URLs are served", url));
  std::string rest = url.substr(scheme_end + 3);
  if (rest.find_first_of("?#") != std::string::npos)
    throw ClientSetupError(
        fmt::format("'{}': give the server's address alone, with no ?query or #fragment", url));
  const auto slash = rest.find('/');
  if (slash != std::string::npos) {
    parsed.base_path = rest.substr(slash);
    rest.resize(slash);
    while (!parsed.base_path.empty() && parsed.base_path.back() == '/') parsed.base_path.pop_back();
  }
  if (rest.find('@') != std::string::npos)
    throw ClientSetupError(fmt::format("'{}': give the token with --token, not in the URL", url));
  std::string host = rest;
  std::optional<int> port;
  const auto colon = rest.rfind(':');
  const auto bracket = rest.rfind(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    host = rest.substr(0, colon);
    port = parse_port(std::string_view(rest).substr(colon + 1));
    if (!port) throw ClientSetupError(fmt::format("'{}': the port must be a number from 1 to 65535", url));
  }
  if (host.empty()) throw ClientSetupError(fmt::format("'{}' names no host", url));
  parsed.host = lower(host);
  parsed.port = port ? *port : (parsed.scheme == "https" ? 443 : 80);
  return parsed;
}

std::optional<ProxySetting> proxy_for(const ParsedUrl& url,
                                      const std::function<const char*(const char*)>& getenv) {
  const auto variable = [&](const char* upper_name, const char* lower_name) -> std::string {
    for (const char* name : {lower_name, upper_name}) {
      const char* value = getenv(name);
      if (value && *value) return value;
    }
    return "";
  };
  if (no_proxy_matches(variable("NO_PROXY", "no_proxy"), url.host)) return std::nullopt;
  std::string proxy =
      url.scheme == "https" ? variable("HTTPS_PROXY", "https_proxy") : variable("HTTP_PROXY", "http_proxy");
  if (proxy.empty()) proxy = variable("ALL_PROXY", "all_proxy");
  if (proxy.empty()) return std::nullopt;
  if (proxy.find("://") == std::string::npos) proxy = "http://" + proxy;
  ProxySetting setting;
  const auto scheme_end = proxy.find("://");
  std::string rest = proxy.substr(scheme_end + 3);
  if (const auto slash = rest.find('/'); slash != std::string::npos) rest.resize(slash);
  if (const auto at = rest.rfind('@'); at != std::string::npos) {
    const std::string credentials = rest.substr(0, at);
    rest.erase(0, at + 1);
    const auto colon = credentials.find(':');
    setting.user = credentials.substr(0, colon);
    if (colon != std::string::npos) setting.password = credentials.substr(colon + 1);
  }
  setting.host = rest;
  if (const auto colon = rest.rfind(':'); colon != std::string::npos) {
    const auto port = parse_port(std::string_view(rest).substr(colon + 1));
    if (!port) throw ClientSetupError(fmt::format("the proxy '{}' has no usable port", proxy));
    setting.host = rest.substr(0, colon);
    setting.port = *port;
  } else {
    setting.port = proxy.rfind("https://", 0) == 0 ? 443 : 1080;  // curl's defaults
  }
  return setting;
}

struct HttpClient::Impl {
  std::unique_ptr<httplib::Client> client;
};

HttpClient::HttpClient(const ClientSettings& settings)
    : settings_(settings), parsed_(parse_url(settings.url)), impl_(std::make_unique<Impl>()) {
  impl_->client = std::make_unique<httplib::Client>(
      fmt::format("{}://{}:{}", parsed_.scheme, parsed_.host, parsed_.port));
  httplib::Client& client = *impl_->client;
  client.set_connection_timeout(10, 0);
  client.set_read_timeout(settings.timeout_s, 0);
  client.set_write_timeout(settings.timeout_s, 0);
  client.set_follow_location(false);
  if (parsed_.scheme == "https") {
    client.enable_server_certificate_verification(true);
    if (!settings.cacert.empty()) {
      // The system's CA store and the given file together; the client's SSL context owns the store.
      X509_STORE* store = X509_STORE_new();
      if (!store || X509_STORE_set_default_paths(store) != 1 ||
          X509_STORE_load_locations(store, settings.cacert.c_str(), nullptr) != 1) {
        if (store) X509_STORE_free(store);
        throw ClientSetupError(
            fmt::format("--cacert {}: not a readable PEM file of certificates", settings.cacert));
      }
      client.set_ca_cert_store(store);
    }
  }
  if (const auto proxy = proxy_for(parsed_, [](const char* name) { return std::getenv(name); })) {
    client.set_proxy(proxy->host, proxy->port);
    if (!proxy->user.empty()) client.set_proxy_basic_auth(proxy->user, proxy->password);
    via_proxy_ = fmt::format(" through the proxy {}:{}", proxy->host, proxy->port);
  }
}

HttpClient::~HttpClient() = default;

namespace {

// What went wrong, in words a learner can act on.
std::string reason(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "connection refused or no route to it (is the URL right, and the server running?)";
    case httplib::Error::ConnectionTimeout:
      return "no answer to the connection within 10 s (a firewall, or a proxy needed: HTTPS_PROXY)";
    case httplib::Error::Read:
      return "the connection closed before the answer (the server stopped, or a proxy cut it)";
    case httplib::Error::Write:
      return "the connection closed while sending";
    case httplib::Error::SSLConnection:
      return "the TLS handshake failed (is it https:// on an http:// server?)";
    case httplib::Error::SSLLoadingCerts:
      return "cannot load the CA certificates (the system store, or --cacert)";
    case httplib::Error::SSLServerVerification:
      return "its certificate is not trusted or does not name this host (a school's own authority: login "
             "--cacert FILE)";
    default:
      return httplib::to_string(error);
  }
}

HttpResponse convert(const httplib::Result& result, const std::string& url, const std::string& via) {
  if (!result) throw ConnectionError(fmt::format("cannot reach {}{}: {}", url, via, reason(result.error())));
  HttpResponse response;
  response.status = result->status;
  response.body = result->body;
  if (result->has_header("Retry-After")) {
    const std::string value = result->get_header_value("Retry-After");
    int seconds = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (error == std::errc() && end == value.data() + value.size()) response.retry_after = seconds;
  }
  return response;
}

httplib::Headers with_token(const std::string& token, const HttpClient::Headers& extra = {}) {
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  for (const auto& [name, value] : extra) headers.emplace(name, value);
  headers.emplace("User-Agent", "cudojo-cli");
  return headers;
}

}  // namespace

HttpResponse HttpClient::get(const std::string& path) {
  return convert(impl_->client->Get(parsed_.base_path + path, with_token(settings_.token)), settings_.url,
                 via_proxy_);
}

HttpResponse HttpClient::post(const std::string& path, const std::string& json_body, const Headers& headers) {
  return convert(impl_->client->Post(parsed_.base_path + path, with_token(settings_.token, headers),
                                     json_body, "application/json"),
                 settings_.url, via_proxy_);
}

HttpResponse HttpClient::del(const std::string& path) {
  return convert(impl_->client->Delete(parsed_.base_path + path, with_token(settings_.token)), settings_.url,
                 via_proxy_);
}

}  // namespace cudojo::client
