// The parts of a request target: its path, percent-decoded, and its query's parameters. What a
// client sends here is hostile: a bad escape or a NUL byte is a refusal, never a guess.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudojo::http {

// %XX escapes decoded (and '+' as a space when `plus_is_space`, as in a query); nullopt for a
// malformed escape or a decoded NUL, which no path or parameter of cudojo's holds.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space = false);

struct Target {
  std::string path;   // decoded
  std::string query;  // as sent, after '?'
  std::vector<std::pair<std::string, std::string>> params;
};

// Splits and decodes an origin-form target ("/api/history?stage=reduction%2F3"); nullopt when it
// does not start with '/' or holds a malformed escape.
std::optional<Target> parse_target(std::string_view target);

}  // namespace cudojo::http
