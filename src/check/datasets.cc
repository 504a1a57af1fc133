#include "check/datasets.h"

#include <algorithm>
#include <cmath>

#include "check/parallel_chunks.h"

namespace cudojo {

namespace {
// 2^24: every integer up to here is exact in float.
constexpr double kFloatIntegerLimit = 16777216.0;
}  // namespace

std::optional<DataKind> parse_data_kind(std::string_view name) {
  if (name == "exact") return DataKind::kExact;
  if (name == "fractional") return DataKind::kFractional;
  if (name == "random_signed") return DataKind::kRandomSigned;
  if (name == "tenths") return DataKind::kTenths;
  if (name == "all_negative") return DataKind::kAllNegative;
  if (name == "signed_zeros") return DataKind::kSignedZeros;
  if (name == "with_nan") return DataKind::kWithNan;
  return std::nullopt;
}

std::string_view to_string(DataKind kind) {
  switch (kind) {
    case DataKind::kExact:
      return "exact";
    case DataKind::kFractional:
      return "fractional";
    case DataKind::kRandomSigned:
      return "random_signed";
    case DataKind::kTenths:
      return "tenths";
    case DataKind::kAllNegative:
      return "all_negative";
    case DataKind::kSignedZeros:
      return "signed_zeros";
    case DataKind::kWithNan:
      return "with_nan";
  }
  return "unknown";
}

std::optional<UnsignedDataKind> parse_unsigned_data_kind(std::string_view name) {
  if (name == "bytes") return UnsignedDataKind::kBytes;
  if (name == "full_range") return UnsignedDataKind::kFullRange;
  if (name == "spread") return UnsignedDataKind::kSpread;
  if (name == "one_bin") return UnsignedDataKind::kOneBin;
  return std::nullopt;
}

std::string_view to_string(UnsignedDataKind kind) {
  switch (kind) {
    case UnsignedDataKind::kBytes:
      return "bytes";
    case UnsignedDataKind::kFullRange:
      return "full_range";
    case UnsignedDataKind::kSpread:
      return "spread";
    case UnsignedDataKind::kOneBin:
      return "one_bin";
  }
  return "unknown";
}

std::uint32_t next_unsigned_value(UnsignedDataKind kind, SplitMix64& random) {
  if (kind == UnsignedDataKind::kBytes) return static_cast<std::uint32_t>(random.next() & 0xFFu);
  return static_cast<std::uint32_t>(random.next() >> 32);
}

void fill_unsigned_data(UnsignedDataKind kind, std::span<std::uint32_t> out, std::uint64_t seed) {
  SplitMix64 random(seed);
  if (kind == UnsignedDataKind::kOneBin) {
    // Not bin 0: a kernel that guesses "everything lands in bin 0" must be wrong.
    std::uint32_t value = static_cast<std::uint32_t>(random.next() >> 32);
    if (value % 256 == 0) value += 1 + static_cast<std::uint32_t>(random.next() % 255);
    for (auto& v : out) v = value;
    return;
  }
  // Element i is draw i+1 of the seed's generator, however the array is split.
  for_each_chunk(out.size(), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
    SplitMix64 chunk_random = SplitMix64::after_draws(seed, begin);
    for (std::size_t i = begin; i < end; ++i) out[i] = next_unsigned_value(kind, chunk_random);
  });
}

float next_float_value(DataKind kind, SplitMix64& random) {
  switch (kind) {
    case DataKind::kExact:
      return static_cast<float>(random.next() & 3u);
    case DataKind::kFractional:
      return 1.0f + static_cast<float>(random.next() % 1000) * 0.001f;
    case DataKind::kTenths:
      // Rare (1 in 1024) and large (0.2 to 25.6) exceptions: rare enough that most warps still
      // add 32 copies of 0.1f, so one add per element or per warp still drifts past the precision
      // stage's bound (check/datasets_test.cc replays both in float32); large enough that the
      // total varies between seeds by about 40 times that bound (a relative 4.4e-3 at a million
      // elements), so a total guessed from a sample of a few elements fails it.
      if (random.next() % 1024 != 0) return 0.1f;
      return static_cast<float>(static_cast<double>(2 + random.next() % 255) / 10.0);
    case DataKind::kAllNegative:
      return -(0.001f + 1000.0f * random.next_unit_float());
    case DataKind::kSignedZeros: {
      const std::uint64_t pick = random.next() % 4;
      if (pick == 0) return -0.0f;
      if (pick == 1) return 0.0f;
      return -(1.0f + random.next_unit_float());
    }
    case DataKind::kWithNan:
      if (random.next() % 64 == 0) return std::nanf("");
      return 2.0f * random.next_unit_float() - 0.5f;
    case DataKind::kRandomSigned:
      break;
  }
  return 2.0f * random.next_unit_float() - 0.5f;
}

float changed_exact_value(float before, SplitMix64& random) {
  return static_cast<float>((static_cast<int>(before) + 1 + random.next() % 3) % 4);
}

std::uint32_t changed_unsigned_value(UnsignedDataKind kind, std::uint32_t before, SplitMix64& random) {
  std::uint32_t after = next_unsigned_value(kind, random);
  // Flipping some of the low byte's bits moves the value to another bin and keeps a byte a byte.
  if (after % 256 == before % 256) after ^= 1 + static_cast<std::uint32_t>(random.next() % 255);
  return after;
}

int next_counter_start(int previous, SplitMix64& random) {
  constexpr std::uint64_t kStarts = 1u << 28;
  int start = 1 + static_cast<int>(random.next() % kStarts);
  if (start == previous) start = start % static_cast<int>(kStarts) + 1;
  return start;
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += kIncrement);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fill_data(DataKind kind, std::span<float> out, std::uint64_t seed) {
  SplitMix64 random(seed);
  switch (kind) {
    case DataKind::kExact: {
      // 2 bits per value, 32 values per draw: values 32j..32j+31 come from draw j+1.
      const std::size_t words = (out.size() + 31) / 32;
      for_each_chunk(out.size(), 32, [&](std::size_t, std::size_t begin, std::size_t end) {
        SplitMix64 chunk_random = SplitMix64::after_draws(seed, begin / 32);
        for (std::size_t i = begin; i < end; i += 32) {
          const std::uint64_t bits = chunk_random.next();
          for (std::size_t k = 0; k < 32 && i + k < end; ++k)
            out[i + k] = static_cast<float>((bits >> (2 * k)) & 3u);
        }
      });
      // Above about 8 million values the total of 0..3 would pass 2^24, where float stops holding
      // every integer and the order of additions starts to matter. There, only a fraction of the
      // elements (spread over the whole array) keep their value, so the total stays near 3/4 of 2^24,
      // and a hard stop keeps it below: every partial sum is then exact in any order. Element i is
      // kept by draw words+i+1; the hard stop needs the running total, so it is one pass after.
      const double kept = std::min(1.0, 0.75 * kFloatIntegerLimit / (1.5 * static_cast<double>(out.size())));
      if (kept < 1.0) {
        for_each_chunk(out.size(), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
          SplitMix64 chunk_random = SplitMix64::after_draws(seed, words + begin);
          for (std::size_t i = begin; i < end; ++i) {
            if (chunk_random.next_unit_float() >= kept) out[i] = 0.0f;
          }
        });
        double total = 0;
        for (auto& value : out) {
          if (total + value >= kFloatIntegerLimit) value = 0.0f;
          total += value;
        }
      }
      break;
    }
    case DataKind::kFractional:
      for_each_chunk(out.size(), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) out[i] = 1.0f + static_cast<float>(i % 1000) * 0.001f;
      });
      break;
    case DataKind::kRandomSigned:
    case DataKind::kAllNegative:
      // One draw per value. Random signed: uniform in [-0.5, 1.5), both signs and cancellation,
      // but a total near N/2, so the tolerance (which grows with the sum of magnitudes) is a small
      // fraction of the answer. Data centred on zero sums to about sqrt(N), below its own
      // tolerance: any answer would pass.
      for_each_chunk(out.size(), 1, [&](std::size_t, std::size_t begin, std::size_t end) {
        SplitMix64 chunk_random = SplitMix64::after_draws(seed, begin);
        for (std::size_t i = begin; i < end; ++i) out[i] = next_float_value(kind, chunk_random);
      });
      break;
    case DataKind::kTenths:
    case DataKind::kSignedZeros:
    case DataKind::kWithNan:
      for (auto& value : out) value = next_float_value(kind, random);
      break;
  }
}

ReferenceSum reference_sum(std::span<const float> values) {
  ReferenceSum result;
  double compensation = 0;
  for (float value : values) {
    const double y = static_cast<double>(value) - compensation;
    const double t = result.sum + y;
    compensation = (t - result.sum) - y;
    result.sum = t;
    result.sum_abs += std::fabs(static_cast<double>(value));
  }
  result.terms = static_cast<std::int64_t>(values.size());
  return result;
}

std::vector<ReferenceSum> block_reference_sums(std::span<const float> values, int block_size) {
  std::vector<ReferenceSum> blocks;
  for (std::size_t start = 0; start < values.size(); start += block_size) {
    std::size_t count = std::min<std::size_t>(block_size, values.size() - start);
    blocks.push_back(reference_sum(values.subspan(start, count)));
  }
  return blocks;
}

}  // namespace cudojo
