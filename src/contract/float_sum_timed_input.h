// For contract/float_sum.cc only: the input of the float sums' timed launches, which changes
// before each of the submission's launches so that a kernel answering from an earlier launch is
// wrong, and the sums every result must equal.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "check/datasets.h"
#include "check/findings.h"
#include "contract/driver.h"

namespace cudojo::float_sum_internal {

// The timed launches' input: exact data (integers 0..3), of which one element, chosen at random,
// changes to another of those values before each of the submission's launches (changed_exact_value):
// the total, and the sum of the element's block, move by 1 to 3 every launch. The sums stay exact
// (below 2^24), so each result must equal, bit for bit, the sum of X as it then is.
class ChangingInput {
 public:
  // block_size 0: one total; else one sum per block of that many elements (partial_per_block).
  ChangingInput(ContractContext& context, std::vector<float>& host_x, std::int64_t n, int block_size)
      : host_x_(host_x), n_(n), block_size_(block_size), random_(case_seed(context.seed, "timing", n)) {
    const std::size_t sums = block_size ? static_cast<std::size_t>((n + block_size - 1) / block_size) : 1;
    sums_.assign(sums, 0.0);
    for (std::int64_t i = 0; i < n; ++i) sums_[slot(i)] += host_x_[static_cast<std::size_t>(i)];
  }

  void change_one(ContractContext& context, float* device_x) {
    const auto i = static_cast<std::int64_t>(random_.next() % static_cast<std::uint64_t>(n_));
    float& value = host_x_[static_cast<std::size_t>(i)];
    const float changed = changed_exact_value(value, random_);
    sums_[slot(i)] += changed - value;
    value = changed;
    context.gpu.upload(device_x + i, &value, sizeof(float));
  }

  void check(std::span<const float> got, TimedResults& results) const {
    bool ok = got.size() == sums_.size();
    std::size_t first_bad = 0;
    for (std::size_t k = 0; ok && k < got.size(); ++k) {
      if (got[k] != static_cast<float>(sums_[k])) {
        ok = false;
        first_bad = k;
      }
    }
    record_timed_result(results, sums_[first_bad], got.empty() ? 0.0 : got[first_bad], ok);
  }

 private:
  std::size_t slot(std::int64_t i) const {
    return block_size_ ? static_cast<std::size_t>(i / block_size_) : 0;
  }

  std::vector<float>& host_x_;
  std::int64_t n_;
  int block_size_;
  SplitMix64 random_;
  std::vector<double> sums_;
};

}  // namespace cudojo::float_sum_internal
