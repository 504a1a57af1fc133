// What checking a submission produces: one TestResult per (size, data) case, and findings that say
// in the lesson's words why a result was wrong. Finding codes are a stable vocabulary
// (docs/verdicts.md); the messages are for people and never parsed.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

namespace finding_code {
inline constexpr std::string_view kLostUpdates = "lost_updates";
inline constexpr std::string_view kWrongValue = "wrong_value";
inline constexpr std::string_view kUninitializedShared = "uninitialized_shared";
inline constexpr std::string_view kOutOfBounds = "out_of_bounds";
inline constexpr std::string_view kPartialContract = "partial_contract";
inline constexpr std::string_view kInputModified = "input_modified";
inline constexpr std::string_view kNondeterministic = "nondeterministic";
inline constexpr std::string_view kImplausibleTime = "implausible_time";
inline constexpr std::string_view kStaleAnswer = "stale_answer";
inline constexpr std::string_view kConstantAnswer = "constant_answer";
inline constexpr std::string_view kImprecise = "imprecise";
inline constexpr std::string_view kOverflow = "overflow";
inline constexpr std::string_view kNanRule = "nan_rule";
inline constexpr std::string_view kSignedZero = "signed_zero";
}  // namespace finding_code

struct TestResult {
  std::string name;  // "exact n=257"
  std::int64_t n = 0;
  std::string data;  // "exact", "fractional", "random_signed", "count"
  double expected = 0;
  double got = 0;
  bool ok = false;
  std::string detail;  // e.g. "tolerance 9.8e-04, error 3.6e-05" or "bitwise"
};

struct Finding {
  std::string code;
  std::string message;
  std::optional<int> line;
};

// Collects findings, one per code: a second sighting of the same code adds its size to the first
// instead of repeating the sentence.
class FindingSet {
 public:
  // `line`: the learner's line the finding is about, when a static check knows it.
  void add(std::string_view code, std::string message, std::optional<std::int64_t> at_size = {},
           std::optional<int> line = {});
  bool has(std::string_view code) const;
  std::vector<Finding> finish() const;

 private:
  struct Entry {
    Finding finding;
    std::vector<std::int64_t> sizes;
  };
  std::vector<Entry> entries_;
};

// The one definition of "correct", used by the worker (whether to time) and the parent (the
// verdict): there were tests, every one passed, and nothing was found.
bool all_tests_passed(const std::vector<TestResult>& tests);
bool is_correct(const std::vector<TestResult>& tests, const std::vector<Finding>& findings);

void to_json(nlohmann::json& j, const TestResult& test);
void from_json(const nlohmann::json& j, TestResult& test);
void to_json(nlohmann::json& j, const Finding& finding);
void from_json(const nlohmann::json& j, Finding& finding);

}  // namespace cudojo
