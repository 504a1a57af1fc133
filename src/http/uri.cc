#include "http/uri.h"

namespace cudojo::http {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string decoded;
  decoded.reserve(text.size());
  for (std::size_t at = 0; at < text.size(); ++at) {
    char c = text[at];
    if (c == '%') {
      const int high = at + 1 < text.size() ? hex_value(text[at + 1]) : -1;
      const int low = at + 2 < text.size() ? hex_value(text[at + 2]) : -1;
      if (high < 0 || low < 0) return std::nullopt;
      c = static_cast<char>(high * 16 + low);
      at += 2;
    } else if (c == '+' && plus_is_space) {
      c = ' ';
    }
    if (c == '\0') return std::nullopt;
    decoded += c;
  }
  return decoded;
}

std::optional<Target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  Target parts;
  const std::size_t question = target.find('?');
  auto path = percent_decode(target.substr(0, question));
  if (!path) return std::nullopt;
  parts.path = std::move(*path);
  if (question == std::string_view::npos) return parts;
  parts.query = std::string(target.substr(question + 1));
  std::string_view rest = parts.query;
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    auto key = percent_decode(pair.substr(0, equals), true);
    auto value =
        percent_decode(equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1), true);
    if (!key || !value) return std::nullopt;
    parts.params.emplace_back(std::move(*key), std::move(*value));
  }
  return parts;
}

}  // namespace cudojo::http
