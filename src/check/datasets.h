// The inputs a stage is judged on, and their double-precision reference sums.
//   exact          integers 0..3 drawn from a seed: every running total stays a whole number under
//                  2^24, so any summation order gives the same float, bit for bit (above about 8 million
//                  values most elements are 0, spread over the array, to keep the total below 2^24).
//   fractional     1 + (i mod 1000) / 1000: values float cannot hold exactly, a fixed pattern.
//   random_signed  uniform in [-0.5, 1.5) from a fresh seed per run: both signs and cancellation,
//                  with a total far enough from zero that the tolerance is a real test of it.
//   tenths         0.1f, but about one element in 1024 (placed from the seed) holds a whole number of
//                  tenths from 0.2 to 25.6: the float-sum precision trap (every add of 0.1f into a
//                  large total rounds the same way, so one add per element drifts), with a total
//                  that no sample of a few elements can predict to within the stage's bound.
//   all_negative   uniform in [-1000, -0.001): a max over them is negative (float_max).
//   signed_zeros   -0.0 and +0.0 mixed with negative values: +0.0 must win over -0.0 (float_max).
//   with_nan       random_signed values with about one NaN in 64 (float_max skips them).
// The unsigned contracts' data (u64_sum, histogram):
//   bytes          uniform in 0..255: small values whose total still passes 2^32 at large N.
//   full_range     uniform 32-bit values: two of them can already pass 2^32.
//   spread         uniform 32-bit values (their bins, v % 256, spread evenly).
//   one_bin        one value, drawn per run, repeated: every element lands in the same bin.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudojo {

// The data generators' version: raise it with any change to what fill_data or fill_unsigned_data
// write for a seed, since that can change a verdict. It is part of every stage's version
// (run/stage_version.h), so jobs judged before the change show as judged under an older version.
inline constexpr int kDataGeneratorVersion = 1;

enum class DataKind { kExact, kFractional, kRandomSigned, kTenths, kAllNegative, kSignedZeros, kWithNan };

std::optional<DataKind> parse_data_kind(std::string_view name);
std::string_view to_string(DataKind kind);
inline bool is_exact(DataKind kind) { return kind == DataKind::kExact; }

void fill_data(DataKind kind, std::span<float> out, std::uint64_t seed);

enum class UnsignedDataKind { kBytes, kFullRange, kSpread, kOneBin };
std::optional<UnsignedDataKind> parse_unsigned_data_kind(std::string_view name);
std::string_view to_string(UnsignedDataKind kind);
void fill_unsigned_data(UnsignedDataKind kind, std::span<std::uint32_t> out, std::uint64_t seed);

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
  static constexpr std::uint64_t kIncrement = 0x9E3779B97F4A7C15ull;
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  // The generator of `seed` after `draws` draws: its next() is the same value as the (draws+1)-th
  // of SplitMix64(seed), so a long array's chunks can be drawn apart and in parallel.
  static SplitMix64 after_draws(std::uint64_t seed, std::uint64_t draws) {
    return SplitMix64(seed + draws * kIncrement);
  }
  std::uint64_t next();
  // Uniform in [0, 1) with 24 random bits: exactly representable in float.
  float next_unit_float() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

 private:
  std::uint64_t state_;
};

// One fresh value of that kind, drawn as fill_unsigned_data draws them (for one_bin, any 32-bit value).
std::uint32_t next_unsigned_value(UnsignedDataKind kind, SplitMix64& random);
// One fresh float of that kind, drawn as fill_data draws them.
float next_float_value(DataKind kind, SplitMix64& random);

// The timed launches' changes. Before each of the submission's timed launches the driver changes
// one element of X (outside the timed region) and checks the result, so every change must move the
// right answer: a kernel that replays what it answered before is then wrong on every launch, not
// only when chance moves the answer. (The exact contracts' changes, with the answers they move, are
// in check/exact_checks.h.)
//
// Exact data (the float sums): another of the values 0..3, so every sum moves by 1, 2 or 3 and
// stays a whole number that float holds exactly.
float changed_exact_value(float before, SplitMix64& random);
// u64_sum and histogram: a fresh value of the kind whose bin (value % 256) is not before's, so the
// 64-bit sum moves and one count leaves its bin for another (on one_bin data, nearly always a count
// leaving the one bin).
std::uint32_t changed_unsigned_value(UnsignedDataKind kind, std::uint32_t before, SplitMix64& random);
// The counter's start: never zero (a kernel that writes the count would pass from zero), low enough
// for a million adds below INT_MAX, and never the previous launch's start, so a kernel that writes
// the value it ended at last time is wrong on every launch.
int next_counter_start(int previous, SplitMix64& random);

}  // namespace cudojo
