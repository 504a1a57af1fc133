#include "check/datasets.h"

#include <cmath>

namespace cudojo {

std::optional<DataKind> parse_data_kind(std::string_view name) {
  if (name == "exact") return DataKind::kExact;
  if (name == "fractional") return DataKind::kFractional;
  if (name == "random_signed") return DataKind::kRandomSigned;
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
  }
  return "unknown";
}

std::uint64_t SplitMix64::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void fill_data(DataKind kind, std::span<float> out, std::uint64_t seed) {
  SplitMix64 random(seed);
  switch (kind) {
    case DataKind::kExact:
      for (std::size_t i = 0; i < out.size(); i += 32) {
        std::uint64_t bits = random.next();  // 2 bits per value, 32 values per draw
        for (std::size_t k = 0; k < 32 && i + k < out.size(); ++k) {
          out[i + k] = static_cast<float>((bits >> (2 * k)) & 3u);
        }
      }
      break;
    case DataKind::kFractional:
      for (std::size_t i = 0; i < out.size(); ++i) {
        out[i] = 1.0f + static_cast<float>(i % 1000) * 0.001f;
      }
      break;
    case DataKind::kRandomSigned:
      // Uniform in [-0.5, 1.5): both signs and cancellation, but a total near N/2, so the
      // tolerance (which grows with the sum of magnitudes) is a small fraction of the answer. Data
      // centred on zero sums to about sqrt(N), below its own tolerance: any answer would pass.
      for (auto& value : out) value = 2.0f * random.next_unit_float() - 0.5f;
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
