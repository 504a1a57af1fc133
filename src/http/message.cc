#include "http/message.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/json_text.h"

namespace cudojo::http {

namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

std::optional<std::string_view> Request::header(std::string_view name) const {
  for (const Header& field : headers) {
    if (same_name(field.name, name)) return std::string_view(field.value);
  }
  return std::nullopt;
}

std::string Request::header_value(std::string_view name) const {
  const auto value = header(name);
  return value ? std::string(*value) : std::string();
}

std::optional<std::string> Request::param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::string Request::match(std::size_t index) const { return index < matches.size() ? matches[index] : ""; }

void Response::set_header(std::string name, std::string value) {
  std::erase_if(headers, [&](const Header& field) { return same_name(field.name, name); });
  headers.push_back({std::move(name), std::move(value)});
}

std::optional<std::string_view> Response::header(std::string_view name) const {
  for (const Header& field : headers) {
    if (same_name(field.name, name)) return std::string_view(field.value);
  }
  return std::nullopt;
}

void Response::set_content(std::string content, std::string_view type) {
  body = std::move(content);
  shared_body.reset();
  set_header("Content-Type", std::string(type));
}

void Response::set_error(int error_status, std::string_view message) {
  status = error_status;
  set_content(json_text(nlohmann::json{{"error", message}}), "application/json");
}

void Response::set_redirect(std::string location, int redirect_status) {
  status = redirect_status;
  set_header("Location", std::move(location));
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 416:
      return "Range Not Satisfiable";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Unknown";
  }
}

std::string error_sentence(int status) {
  switch (status) {
    case 400:
      return "the request could not be read";
    case 404:
      return "no such route";
    case 405:
      return "this path does not answer that method";
    case 411:
      return "send the body with a Content-Length; chunked bodies are not accepted";
    case 413:
      return "the request is larger than the server accepts";
    case 414:
      return "the request's path and query are longer than the server accepts";
    case 431:
      return "the request's header is larger, or has more fields, than the server accepts";
    case 500:
      return "the server failed on this request; it has been logged";
    case 503:
      return "the server is busy; try again shortly";
    default:
      return "HTTP error " + std::to_string(status);
  }
}

}  // namespace cudojo::http
