// Every key a stage.toml or course.toml may hold, as data: its table, type, whether it is required,
// its default and its allowed values. The strict reader (stage_parse.cc) refuses anything not listed
// here, and docs/stages.md documents each entry (stage_parse_test.cc checks that none is missing).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

enum class ValueKind {
  kString,
  kInteger,
  kNumber,  // an integer or a floating-point number
  kBoolean,
  kIntegers,  // an array of integers
  kStrings,   // an array of strings
  kTable,
};

struct KeySpec {
  std::string_view table;  // "" for the top level, else the table's name ("tests")
  std::string_view name;
  ValueKind kind;
  bool required = false;
  std::string_view default_value;  // as docs/stages.md writes it; "" when there is none
  std::string_view allowed;        // the allowed values in words; "" when any of the kind
  // "tests.runs", or "tests" for a table, as messages and docs/stages.md name the key.
  std::string qualified() const;
};

std::span<const KeySpec> stage_file_keys();
std::span<const KeySpec> course_file_keys();

// The verdicts a stage may expect its starter to get (`[expect] starter`).
std::span<const std::string_view> expectable_verdicts();

// "a string", "an integer", "an array of strings"...
std::string_view kind_name(ValueKind kind);

// The candidate closest to a misspelt name (edit distance, a swap of two neighbours counting as
// one), when it is close enough to be what was meant; nullopt otherwise.
std::optional<std::string> closest_name(std::string_view typo, const std::vector<std::string>& candidates);

}  // namespace cudojo
