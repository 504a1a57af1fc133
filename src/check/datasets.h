// The inputs a stage is judged on, and their double-precision reference sums.
//   exact          integers 0..3 drawn from a seed: every partial sum is an integer below 2^24 at
//                  the sizes we use, so any summation order gives the same float, bit for bit.
//   fractional     1 + (i mod 1000) / 1000: values float cannot hold exactly, a fixed pattern.
//   random_signed  uniform in [-0.5, 1.5) from a fresh seed per run: both signs and cancellation,
//                  with a total far enough from zero that the tolerance is a real test of it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

enum class DataKind { kExact, kFractional, kRandomSigned };

std::optional<DataKind> parse_data_kind(std::string_view name);
std::string_view to_string(DataKind kind);
inline bool is_exact(DataKind kind) { return kind == DataKind::kExact; }

void fill_data(DataKind kind, std::span<float> out, std::uint64_t seed);

struct ReferenceSum {
  double sum = 0;
  double sum_abs = 0;
  std::int64_t terms = 0;
};

// Compensated (Kahan) summation in double: the answer, not one of the answers a float order gives.
ReferenceSum reference_sum(std::span<const float> values);

// One ReferenceSum per block of block_size consecutive values (the last block may be short).
std::vector<ReferenceSum> block_reference_sums(std::span<const float> values, int block_size);

// A small, fast, seedable generator (splitmix64), so a run can be reproduced from its seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  // Uniform in [0, 1) with 24 random bits: exactly representable in float.
  float next_unit_float() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

 private:
  std::uint64_t state_;
};

}  // namespace cudojo
