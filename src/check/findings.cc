#include "check/findings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "check/tolerance.h"
#include "common/json_number.h"

namespace cudojo {

bool all_tests_passed(const std::vector<TestResult>& tests) {
  return !tests.empty() && std::all_of(tests.begin(), tests.end(), [](const TestResult& t) { return t.ok; });
}

bool is_correct(const std::vector<TestResult>& tests, const std::vector<Finding>& findings) {
  return all_tests_passed(tests) && findings.empty();
}

std::uint32_t float_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

void FindingSet::add(std::string_view code, std::string message, std::optional<std::int64_t> at_size,
                     std::optional<int> line) {
  for (auto& entry : entries_) {
    if (entry.finding.code == code) {
      if (at_size && std::find(entry.sizes.begin(), entry.sizes.end(), *at_size) == entry.sizes.end()) {
        entry.sizes.push_back(*at_size);
      }
      return;
    }
  }
  Entry entry{{std::string(code), std::move(message), line}, {}};
  if (at_size) entry.sizes.push_back(*at_size);
  entries_.push_back(std::move(entry));
}

bool FindingSet::has(std::string_view code) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& entry) { return entry.finding.code == code; });
}

std::vector<Finding> FindingSet::finish() const {
  std::vector<Finding> findings;
  for (const auto& entry : entries_) {
    Finding finding = entry.finding;
    if (entry.sizes.size() > 1) {
      finding.message += fmt::format(" (seen at n = {})", fmt::join(entry.sizes, ", "));
    } else if (entry.sizes.size() == 1) {
      finding.message += fmt::format(" (seen at n = {})", entry.sizes.front());
    }
    findings.push_back(std::move(finding));
  }
  return findings;
}

std::string describe_test(std::string_view data, std::int64_t n) { return fmt::format("{} n={}", data, n); }

TestResult judge_total(std::string_view data, std::int64_t n, bool exact, float got,
                       const ReferenceSum& ref) {
  TestResult test{describe_test(data, n), n, std::string(data), ref.sum, got, false, ""};
  if (exact) {
    test.ok = bitwise_equal(got, ref.sum);
    test.detail = "bitwise";
  } else {
    ToleranceCheck check = check_sum(got, ref.sum, ref.terms, ref.sum_abs);
    test.ok = check.ok;
    test.detail = fmt::format("|error| {:.3g} <= {:.3g}", check.error, check.bound);
  }
  return test;
}

TestResult judge_count(int run, std::int64_t expected, std::int64_t got) {
  return {fmt::format("count run {}", run), expected,        "count", static_cast<double>(expected),
          static_cast<double>(got),         got == expected, "exact"};
}

void add_count_findings(std::span<const std::int64_t> counts, std::int64_t expected, FindingSet& findings) {
  std::vector<std::int64_t> short_counts;
  for (auto count : counts) {
    if (count != expected) short_counts.push_back(count);
  }
  if (short_counts.empty()) return;
  const bool all_below =
      std::all_of(short_counts.begin(), short_counts.end(), [&](std::int64_t c) { return c < expected; });
  if (all_below) {
    findings.add(finding_code::kLostUpdates,
                 fmt::format("{} of {} runs lost increments (counts: {}; expected {}): a plain "
                             "read-add-write lets threads overwrite each other's update; make the "
                             "increment one indivisible atomic operation",
                             short_counts.size(), counts.size(), fmt::join(short_counts, ", "), expected));
  } else {
    findings.add(finding_code::kWrongValue,
                 fmt::format("the count should be exactly {} (one per thread) but runs gave {}", expected,
                             fmt::join(short_counts, ", ")));
  }
}

namespace {

// Index of the first element carrying a loud value, or -1. NaN (an unwritten slot) is not loud.
std::int64_t first_loud(const std::vector<float>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::fabs(static_cast<double>(values[i])) >= kLoudThreshold) return static_cast<std::int64_t>(i);
  }
  return -1;
}

std::string show_value(const std::vector<float>& values, std::int64_t at) {
  if (values.size() == 1) return fmt::format("{:.9g}", values[0]);
  return fmt::format("partial[{}] = {:.9g}", at, values[static_cast<std::size_t>(at)]);
}

}  // namespace

void add_poison_findings(std::int64_t n, const PoisonRuns& runs, FindingSet& findings) {
  // Loud under the loud pattern and quiet under the quiet one: the answer changed with what shared
  // memory held. A mere difference is not enough, since a racing kernel differs between any two
  // launches (that is reported as nondeterministic instead).
  const std::int64_t at = first_loud(runs.shared_loud);
  if (at >= 0 && first_loud(runs.shared_quiet) < 0) {
    findings.add(finding_code::kUninitializedShared,
                 fmt::format("the result depends on what shared memory held before the launch ({} with "
                             "shared memory filled with 2^40, {} with it filled with -3): a shared slot "
                             "was read before anything wrote it. Typically lanes past N returned before "
                             "storing their slot, and the fold read whatever was there; store the "
                             "identity (0.0f) for those lanes and keep them in the loop",
                             show_value(runs.shared_loud, at), show_value(runs.shared_quiet, at)),
                 n);
  }
  if (const std::int64_t at = first_loud(runs.guard_loud); at >= 0) {
    findings.add(finding_code::kOutOfBounds,
                 fmt::format("the result took in memory after X[N-1] ({} when the judge put 2^41 "
                             "there): a thread loaded X[i] with i >= N; guard the load with i < N",
                             show_value(runs.guard_loud, at)),
                 n);
  }
}

void add_input_findings(std::int64_t n, std::int64_t first_changed_index, std::int64_t changed,
                        FindingSet& findings) {
  if (changed == 0) return;
  findings.add(finding_code::kInputModified,
               fmt::format("the kernel wrote to its input: {} element(s) of X differ after the launch, "
                           "first at index {}. X is read-only here; accumulate in registers or "
                           "shared memory instead",
                           changed, first_changed_index),
               n);
}

PartialAnalysis analyse_partials(std::span<const float> partial, std::span<const ReferenceSum> per_block,
                                 bool exact, const ReferenceSum& total) {
  PartialAnalysis analysis;
  analysis.blocks = static_cast<std::int64_t>(per_block.size());
  for (std::size_t b = 0; b < per_block.size(); ++b) {
    const float got = partial[b];
    if (float_bits(got) == kUnwrittenPartialBits) {
      ++analysis.unwritten;
    } else {
      analysis.host_total += got;
    }
    const bool ok = exact ? bitwise_equal(got, per_block[b].sum)
                          : check_sum(got, per_block[b].sum, per_block[b].terms, per_block[b].sum_abs).ok;
    if (!ok) {
      if (float_bits(got) != kUnwrittenPartialBits) ++analysis.wrong;
      if (analysis.first_bad_block < 0) {
        analysis.first_bad_block = static_cast<std::int64_t>(b);
        analysis.first_bad_expected = per_block[b].sum;
        analysis.first_bad_got = got;
      }
    }
  }
  // partial[0] "holds the total" only when it is wrong as block 0's sum and right as the total:
  // with signed data the total's tolerance is wide enough to include a right block-0 sum.
  if (analysis.blocks > 1 && !partial.empty() && analysis.first_bad_block == 0 &&
      float_bits(partial[0]) != kUnwrittenPartialBits) {
    analysis.slot0_holds_total = exact ? bitwise_equal(partial[0], total.sum)
                                       : check_sum(partial[0], total.sum, total.terms, total.sum_abs).ok;
  }
  return analysis;
}

TestResult judge_partials(std::string_view data, std::int64_t n, const PartialAnalysis& analysis,
                          const ReferenceSum& total) {
  TestResult test{describe_test(data, n), n, std::string(data), total.sum, analysis.host_total, false, ""};
  test.ok = analysis.unwritten == 0 && analysis.wrong == 0;
  if (test.ok) {
    test.detail = fmt::format("all {} partials right", analysis.blocks);
  } else {
    test.detail = fmt::format(
        "{} of {} partials wrong, {} unwritten; first bad: partial[{}] = {:.9g}, "
        "expected {:.9g}",
        analysis.wrong + analysis.unwritten, analysis.blocks, analysis.unwritten, analysis.first_bad_block,
        analysis.first_bad_got, analysis.first_bad_expected);
  }
  return test;
}

void add_partial_findings(std::int64_t n, const PartialAnalysis& analysis, FindingSet& findings) {
  if (analysis.slot0_holds_total) {
    findings.add(finding_code::kPartialContract,
                 "partial[0] holds the sum of the whole array: this stage wants one value per block, "
                 "partial[blockIdx.x] = that block's own sum, and the host adds them",
                 n);
  } else if (analysis.unwritten > 0) {
    findings.add(finding_code::kPartialContract,
                 fmt::format("{} of {} blocks never wrote partial[blockIdx.x] (first: block {}): every "
                             "block must store its own sum, even a block whose elements are all past N "
                             "or all zero",
                             analysis.unwritten, analysis.blocks, analysis.first_bad_block),
                 n);
  }
}

std::uint64_t fingerprint(std::span<const float> values) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the bit patterns
  for (float value : values) {
    std::uint32_t bits = float_bits(value);
    for (int byte = 0; byte < 4; ++byte) {
      hash ^= (bits >> (8 * byte)) & 0xFFu;
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

int count_distinct(std::span<const std::uint64_t> fingerprints) {
  return static_cast<int>(std::set<std::uint64_t>(fingerprints.begin(), fingerprints.end()).size());
}

void add_determinism_findings(std::int64_t n, std::span<const std::uint64_t> fingerprints,
                              FindingSet& findings) {
  const int distinct = count_distinct(fingerprints);
  if (distinct <= 1) return;
  findings.add(
      finding_code::kNondeterministic,
      fmt::format("{} identical launches on exact input gave {} different answers; on small integers "
                  "every order of additions gives the same float, so the kernel reads something "
                  "that changes between launches: a race (a plain += on a shared total loses "
                  "updates; a read without a barrier sees a slot before it is written) or "
                  "memory that nothing wrote",
                  fingerprints.size(), distinct),
      n);
}

std::optional<Finding> speed_of_light_finding(double bytes, double median_ms, double peak_gbps) {
  if (bytes <= 0 || peak_gbps <= 0 || median_ms <= 0) return std::nullopt;
  const double floor_ms = bytes / (peak_gbps * 1e9) * 1e3;
  if (median_ms * kSpeedOfLightMargin >= floor_ms) return std::nullopt;
  return Finding{
      std::string(finding_code::kImplausibleTime),
      fmt::format("the median time, {:.4f} ms, is shorter than reading the input once at this GPU's "
                  "measured peak takes ({:.0f} bytes at {:.0f} GB/s: {:.4f} ms). No kernel that reads "
                  "its input can be that fast; the kernel skipped work the timing run needed",
                  median_ms, bytes, peak_gbps, floor_ms),
      std::nullopt};
}

void record_timed_result(TimedResults& results, double expected, double got, bool ok) {
  if (!ok) {
    if (results.wrong == 0) {
      results.first_wrong = results.launches;
      results.first_expected = expected;
      results.first_got = got;
    }
    ++results.wrong;
  }
  ++results.launches;
}

void add_stale_answer_findings(std::int64_t n, const TimedResults& results, FindingSet& findings) {
  if (results.wrong == 0) return;
  findings.add(
      finding_code::kStaleAnswer,
      fmt::format("{} of the {} timed launches answered wrong (the first, launch {}: expected {}, got "
                  "{}). Before each timed launch the input changed in a way the right answer follows, and "
                  "the tests had passed: the "
                  "kernel answered from an earlier launch (a total kept in device memory, or another "
                  "shortcut keyed on what it saw before) instead of reading its input. Every launch "
                  "must compute from X as it is",
                  results.wrong, results.launches, results.first_wrong + 1, results.first_expected,
                  results.first_got),
      n);
}

void add_constant_count_findings(std::int64_t start, std::int64_t threads, std::int64_t ended_at,
                                 std::int64_t other_grid_threads, std::int64_t other_grid_increase,
                                 FindingSet& findings) {
  if (start != 0 && ended_at == threads) {
    findings.add(finding_code::kConstantAnswer,
                 fmt::format("the counter started at {} and ended at exactly {}, the number of threads: the "
                             "kernel wrote the count instead of adding one per thread",
                             start, threads));
  } else if (other_grid_increase != other_grid_threads && other_grid_increase == threads) {
    findings.add(
        finding_code::kConstantAnswer,
        fmt::format("on a grid of {} threads the counter grew by {}, the stage grid's count: the kernel "
                    "adds a number it knows instead of one per thread",
                    other_grid_threads, other_grid_increase));
  }
}

void to_json(nlohmann::json& j, const TestResult& test) {
  j = {{"name", test.name},
       {"n", test.n},
       {"data", test.data},
       {"expected", number_json(test.expected)},
       {"got", number_json(test.got)},
       {"ok", test.ok},
       {"detail", test.detail}};
}

void from_json(const nlohmann::json& j, TestResult& test) {
  j.at("name").get_to(test.name);
  j.at("n").get_to(test.n);
  j.at("data").get_to(test.data);
  test.expected = number_from_json(j.at("expected"));
  test.got = number_from_json(j.at("got"));
  j.at("ok").get_to(test.ok);
  test.detail = j.value("detail", "");
}

void to_json(nlohmann::json& j, const Finding& finding) {
  j = {{"code", finding.code}, {"message", finding.message}};
  if (finding.line) j["line"] = *finding.line;
}

void from_json(const nlohmann::json& j, Finding& finding) {
  j.at("code").get_to(finding.code);
  j.at("message").get_to(finding.message);
  if (j.contains("line")) finding.line = j.at("line").get<int>();
}

}  // namespace cudojo
