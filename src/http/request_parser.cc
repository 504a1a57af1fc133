// The request parser of http/server_state.h: Beast's HTTP/1.1 parser filling a Request, with the
// limits that Beast does not count itself (the target's length, the number of fields).
#include <boost/beast/http/error.hpp>

#include "http/server_state.h"

namespace cudojo::http {

namespace bhttp = beast::http;

RequestParser::RequestParser(Request& request, const ServeLimits& limits)
    : request_(request), limits_(limits) {
  header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  body_limit(limits.max_request_bytes);
}

void RequestParser::on_request_impl(bhttp::verb, beast::string_view method, beast::string_view target,
                                    int version, beast::error_code& ec) {
  if (target.size() > limits_.max_target_bytes) {
    target_too_long_ = true;
    ec = bhttp::error::header_limit;
    return;
  }
  request_.method.assign(method.data(), method.size());
  request_.target.assign(target.data(), target.size());
  request_.version = version;
}

void RequestParser::on_field_impl(bhttp::field, beast::string_view name, beast::string_view value,
                                  beast::error_code& ec) {
  if (request_.headers.size() >= static_cast<std::size_t>(limits_.max_header_fields)) {
    ec = bhttp::error::header_limit;
    return;
  }
  request_.headers.push_back(
      {std::string(name.data(), name.size()), std::string(value.data(), value.size())});
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code&) {
  // Beast has already compared the length with body_limit, so this reserve is bounded.
  if (length) request_.body.reserve(static_cast<std::size_t>(*length));
}

std::size_t RequestParser::on_body_impl(beast::string_view body, beast::error_code&) {
  request_.body.append(body.data(), body.size());
  return body.size();
}

// Chunked bodies are refused when the head arrives (411), before any of this could run.
void RequestParser::on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code& ec) {
  ec = bhttp::error::bad_transfer_encoding;
}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t, beast::string_view, beast::error_code& ec) {
  ec = bhttp::error::bad_transfer_encoding;
  return 0;
}

}  // namespace cudojo::http
