// The experiments: host-side setup, checks and timing around the kernels in kernels.cu.
// Every experiment checks its answers first; a wrong answer is a failure with the reason, and the
// row it belongs to is not timed.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "check/datasets.h"
#include "check/tolerance.h"
#include "gpu/gpu.h"
#include "lab/kernels.h"
#include "lab/lab.h"
#include "measure/timing.h"

namespace cudojo::lab {

namespace {

using nlohmann::json;

std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

template <typename T>
T read_back(const DeviceBuffer<T>& buffer, cudaStream_t stream) {
  T value{};
  CUDOJO_CUDA(cudaMemcpyAsync(&value, buffer.get(), sizeof(T), cudaMemcpyDeviceToHost, stream));
  CUDOJO_CUDA(cudaStreamSynchronize(stream));
  return value;
}

template <typename T>
void upload(DeviceBuffer<T>& buffer, const std::vector<T>& host) {
  CUDOJO_CUDA(cudaMemcpy(buffer.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// ================================ race ================================

Result run_race(Context& context) {
  constexpr int kBlocks = 4096, kThreads = 256, kRuns = 5;
  constexpr int kExpected = kBlocks * kThreads;
  Result result{"race", "", {}, {}, {}};
  GpuSession& gpu = context.gpu;
  DeviceBuffer<int> counter(1);
  Table table{fmt::format("{} threads each add 1 to one int, {} runs", kExpected, kRuns),
              {"run", "*c += 1", "atomicAdd", "expected", "plain kept %"},
              {},
              {}};
  int plain_min = kExpected, plain_max = 0;
  for (int run = 1; run <= kRuns; ++run) {
    CUDOJO_CUDA(cudaMemsetAsync(counter.get(), 0, sizeof(int), gpu.stream()));
    launch_increment_plain(counter.get(), kBlocks, kThreads, gpu.stream());
    const int plain = read_back(counter, gpu.stream());
    CUDOJO_CUDA(cudaMemsetAsync(counter.get(), 0, sizeof(int), gpu.stream()));
    launch_increment_atomic(counter.get(), kBlocks, kThreads, gpu.stream());
    const int atomic = read_back(counter, gpu.stream());
    if (atomic != kExpected) {
      result.failures.push_back(
          fmt::format("run {}: atomicAdd counted {}, expected {}", run, atomic, kExpected));
    }
    plain_min = std::min(plain_min, plain);
    plain_max = std::max(plain_max, plain);
    table.rows.push_back({run, plain, atomic, kExpected, 100.0 * plain / kExpected});
  }
  table.notes.push_back(
      "a plain += loses updates silently and by a different amount each run; the atomic never does");
  result.summary = fmt::format("the plain increment kept {} to {} of {} updates; atomicAdd kept all of them",
                               plain_min, plain_max, kExpected);
  result.tables.push_back(std::move(table));
  return result;
}

// ============================= contention =============================

Result run_contention(Context& context) {
  constexpr int kN = 1 << 24;
  Result result{"contention", "", {}, {}, {}};
  GpuSession& gpu = context.gpu;
  const int sms = gpu.info().sm_count;

  std::vector<unsigned> spread(kN), one_bin(kN, 0u);
  for (int i = 0; i < kN; ++i) spread[i] = (static_cast<unsigned>(i) * 2654435761u) >> 8;
  auto host_histogram = [](const std::vector<unsigned>& values) {
    std::vector<unsigned> bins(256, 0);
    for (unsigned v : values) ++bins[v % 256];
    return bins;
  };
  DeviceBuffer<unsigned> values(kN), bins(256);
  Table table{fmt::format("256-bin histogram of {} values", kN),
              {"kernel", "data", "median ms", "min ms", "max ms", "check"},
              {},
              {}};
  const std::pair<HistogramKind, const char*> kinds[] = {
      {HistogramKind::kGlobalAtomics, "global atomics"},
      {HistogramKind::kSharedPrivatized, "shared privatized"},
      {HistogramKind::kWarpAggregated, "warp aggregated"}};
  std::map<std::string, double> median;
  for (const auto& [data_name, data] :
       {std::pair<const char*, const std::vector<unsigned>*>{"spread", &spread},
        std::pair<const char*, const std::vector<unsigned>*>{"one bin", &one_bin}}) {
    upload(values, *data);
    const auto expected = host_histogram(*data);
    for (const auto& [kind, kind_name] : kinds) {
      context.progress(fmt::format("contention: {} on {} data", kind_name, data_name));
      CUDOJO_CUDA(cudaMemsetAsync(bins.get(), 0, 256 * sizeof(unsigned), gpu.stream()));
      launch_histogram(kind, values.get(), bins.get(), kN, sms, gpu.stream());
      std::vector<unsigned> got(256);
      CUDOJO_CUDA(cudaMemcpyAsync(got.data(), bins.get(), 256 * sizeof(unsigned), cudaMemcpyDeviceToHost,
                                  gpu.stream()));
      CUDOJO_CUDA(cudaStreamSynchronize(gpu.stream()));
      if (got != expected) {
        const auto at = std::mismatch(got.begin(), got.end(), expected.begin()).first - got.begin();
        result.failures.push_back(fmt::format("{} on {} data: bin {} = {}, expected {}", kind_name, data_name,
                                              at, got[at], expected[at]));
        table.rows.push_back({kind_name, data_name, nullptr, nullptr, nullptr, "WRONG"});
        continue;
      }
      const TimeStats stats = time_until_stable(
          gpu,
          TimedKernel{
              [&] { CUDOJO_CUDA(cudaMemsetAsync(bins.get(), 0, 256 * sizeof(unsigned), gpu.stream())); },
              [&, kind = kind] { launch_histogram(kind, values.get(), bins.get(), kN, sms, gpu.stream()); },
              false,
              {}});
      median[fmt::format("{}/{}", kind_name, data_name)] = stats.median_ms;
      table.rows.push_back({kind_name, data_name, stats.median_ms, stats.min_ms, stats.max_ms, "ok"});
    }
  }
  Table ratios{"Cost of putting every value in one bin", {"kernel", "one bin / spread"}, {}, {}};
  for (const auto& [kind, kind_name] : kinds) {
    const auto spread_ms = median.find(fmt::format("{}/spread", kind_name));
    const auto one_ms = median.find(fmt::format("{}/one bin", kind_name));
    if (spread_ms != median.end() && one_ms != median.end()) {
      ratios.rows.push_back({kind_name, one_ms->second / spread_ms->second});
    }
  }
  result.summary = "same work, same answer; only how many atomics hit one address changes";
  result.tables.push_back(std::move(table));
  result.tables.push_back(std::move(ratios));
  return result;
}

// ============================ sum strategies ============================

constexpr SumStrategy kAllStrategies[] = {SumStrategy::kGlobalAtomic, SumStrategy::kSharedAtomic,
                                          SumStrategy::kTreeAtomic,   SumStrategy::kWarpAtomic,
                                          SumStrategy::kTwoPass,      SumStrategy::kVectorizedSinglePass,
                                          SumStrategy::kCub};

// Everything a sum strategy needs on the device, sized once for the largest n.
struct SumBench {
  GpuSession& gpu;
  DeviceBuffer<float> x;
  DeviceBuffer<float> out{1};
  DeviceBuffer<unsigned char> scratch;
  SumBench(GpuSession& session, std::size_t max_n)
      : gpu(session), x(max_n), scratch(sum_scratch_bytes(max_n)) {}

  void launch(SumStrategy strategy, std::size_t n) {
    launch_sum(strategy, x.get(), out.get(), n, scratch.get(), scratch.bytes(), gpu.info().sm_count,
               gpu.stream());
  }
  void reset(SumStrategy strategy) {
    if (accumulates(strategy)) CUDOJO_CUDA(cudaMemsetAsync(out.get(), 0, sizeof(float), gpu.stream()));
  }
  float run_once(SumStrategy strategy, std::size_t n) {
    reset(strategy);
    launch(strategy, n);
    return read_back(out, gpu.stream());
  }
  TimeStats time(SumStrategy strategy, std::size_t n) {
    return time_until_stable(
        gpu, TimedKernel{[=, this] { reset(strategy); }, [=, this] { launch(strategy, n); }, false, {}});
  }
};

// One atomic per element makes the largest sizes take seconds per launch; the seed's sweep stops
// at 2^22 for the same reason.
bool per_element_atomics(SumStrategy strategy) {
  return strategy == SumStrategy::kGlobalAtomic || strategy == SumStrategy::kSharedAtomic;
}
constexpr std::size_t kPerElementAtomicLimit = std::size_t{1} << 24;

Result run_sum_strategies(Context& context) {
  Result result{"sum-strategies", "", {}, {}, {}};
  GpuSession& gpu = context.gpu;
  const double peak =
      gpu.info().peak_read_gbps > 0 ? gpu.info().peak_read_gbps : gpu.measure_peak_read_gbps();
  constexpr int kMinLog = 12, kMaxLog = 28;
  const std::size_t max_n = std::size_t{1} << kMaxLog;
  SumBench bench(gpu, max_n);

  // Exact data at every size: one element in 64 is 1, the rest 0, so every partial sum is an
  // integer far below 2^24 and every strategy must return the same float, bit for bit.
  context.progress("sum-strategies: filling 2^28 floats");
  std::vector<float> host(max_n);
  for (std::size_t i = 0; i < max_n; ++i)
    host[i] = ((static_cast<std::uint32_t>(i) * 2654435761u) >> 26) == 0 ? 1.0f : 0.0f;
  upload(bench.x, host);
  std::vector<double> prefix_at;  // expected sum at each size
  {
    double sum = 0;
    std::size_t next = std::size_t{1} << kMinLog;
    for (std::size_t i = 0; i < max_n; ++i) {
      sum += host[i];
      if (i + 1 == next) {
        prefix_at.push_back(sum);
        next <<= 2;
      }
    }
  }
  host.clear();
  host.shrink_to_fit();

  Table rows{"One sum, many ways (exact data, checked bitwise before timing)",
             {"n", "strategy", "median ms", "min ms", "max ms", "GB/s", "% of peak"},
             {},
             {}};
  Table fastest{"Fastest per size, and the vectorized single pass against CUB",
                {"n", "fastest", "GB/s", "vectorized ms", "cub ms", "cub / vectorized"},
                {},
                {}};
  Plot plot{
      "Sum of n floats on " + gpu.info().name, "n (floats)", "GB/s (n x 4 bytes / median time)", true, {}};
  std::map<SumStrategy, PlotSeries> series;
  std::map<int, double> speedup_at;

  int size_index = 0;
  for (int log_n = kMinLog; log_n <= kMaxLog; log_n += 2, ++size_index) {
    const std::size_t n = std::size_t{1} << log_n;
    const float expected = static_cast<float>(prefix_at[size_index]);
    std::string best;
    double best_ms = 1e300, vectorized_ms = 0, cub_ms = 0;
    for (SumStrategy strategy : kAllStrategies) {
      const std::string name(to_string(strategy));
      if (per_element_atomics(strategy) && n > kPerElementAtomicLimit) {
        rows.rows.push_back({json(n), name, nullptr, nullptr, nullptr, nullptr,
                             "skipped: one atomic per element above 2^24"});
        continue;
      }
      context.progress(fmt::format("sum-strategies: n = 2^{} {}", log_n, name));
      const float got = bench.run_once(strategy, n);
      if (bits_of(got) != bits_of(expected)) {
        result.failures.push_back(
            fmt::format("{} at n = 2^{}: got {:.9g}, expected {:.9g}", name, log_n, got, expected));
        rows.rows.push_back({json(n), name, nullptr, nullptr, nullptr, nullptr, "WRONG: not timed"});
        continue;
      }
      const TimeStats stats = bench.time(strategy, n);
      const double rate = gbps(static_cast<double>(n) * sizeof(float), stats.median_ms);
      rows.rows.push_back(
          {json(n), name, stats.median_ms, stats.min_ms, stats.max_ms, rate, 100.0 * rate / peak});
      series[strategy].name = name;
      series[strategy].points.emplace_back(static_cast<double>(n), rate);
      if (stats.median_ms < best_ms) best_ms = stats.median_ms, best = name;
      if (strategy == SumStrategy::kVectorizedSinglePass) vectorized_ms = stats.median_ms;
      if (strategy == SumStrategy::kCub) cub_ms = stats.median_ms;
    }
    const double speedup = vectorized_ms > 0 && cub_ms > 0 ? cub_ms / vectorized_ms : 0;
    speedup_at[log_n] = speedup;
    fastest.rows.push_back({json(n), best, gbps(static_cast<double>(n) * sizeof(float), best_ms),
                            vectorized_ms, cub_ms, speedup});
  }
  for (SumStrategy strategy : kAllStrategies) {
    if (series.count(strategy)) plot.series.push_back(series[strategy]);
  }
  rows.notes.push_back(
      fmt::format("peak read bandwidth measured by the judge on this GPU: {:.0f} GB/s", peak));
  auto goal = [&](int log_n, double target) {
    const double got = speedup_at.count(log_n) ? speedup_at[log_n] : 0;
    return fmt::format("goal at 2^{}: vectorized single pass >= {:.2f}x CUB: {:.2f}x, {}", log_n, target, got,
                       got >= target ? "met" : "NOT met");
  };
  fastest.notes.push_back(goal(28, 1.00));
  fastest.notes.push_back(goal(20, 1.50));
  result.summary = fmt::format(
      "7 strategies over 2^{} to 2^{} floats; vectorized vs CUB: {:.2f}x at 2^20, {:.2f}x at 2^28", kMinLog,
      kMaxLog, speedup_at[20], speedup_at[28]);
  result.tables.push_back(std::move(rows));
  result.tables.push_back(std::move(fastest));
  result.plot = std::move(plot);
  return result;
}

// ============================= determinism =============================

Result run_determinism(Context& context) {
  constexpr std::size_t kN = std::size_t{1} << 22;
  constexpr int kRuns = 20;
  Result result{"determinism", "", {}, {}, {}};
  GpuSession& gpu = context.gpu;
  SumBench bench(gpu, kN);
  std::vector<float> host(kN);
  fill_data(DataKind::kFractional, host, 0);
  upload(bench.x, host);
  const ReferenceSum reference = reference_sum(host);
  const double tolerance = sum_tolerance(reference.terms, reference.sum_abs);

  Table table{
      fmt::format("{} runs per strategy on {} values 1 + (i mod 1000)/1000; Kahan double reference {:.9g}",
                  kRuns, kN, reference.sum),
      {"strategy", "distinct", "min", "max", "max - min", "worst |error|", "deterministic"},
      {},
      {}};
  for (SumStrategy strategy : kAllStrategies) {
    const std::string name(to_string(strategy));
    context.progress(fmt::format("determinism: {}", name));
    std::set<std::uint32_t> distinct;
    double low = 1e300, high = -1e300, worst = 0;
    for (int run = 0; run < kRuns; ++run) {
      const float got = bench.run_once(strategy, kN);
      distinct.insert(bits_of(got));
      low = std::min(low, static_cast<double>(got));
      high = std::max(high, static_cast<double>(got));
      worst = std::max(worst, std::fabs(got - reference.sum));
    }
    if (worst > tolerance) {
      result.failures.push_back(fmt::format(
          "{}: an answer is {:.3g} from the reference, beyond the rule's {:.3g}", name, worst, tolerance));
    }
    const bool fixed_order = !accumulates(strategy);
    if (fixed_order && distinct.size() != 1) {
      result.failures.push_back(
          fmt::format("{} adds in a fixed order yet gave {} answers", name, distinct.size()));
    }
    table.rows.push_back({name, static_cast<int>(distinct.size()), low, high, high - low, worst,
                          fixed_order ? "by construction" : "no"});
  }
  table.notes.push_back(
      fmt::format("every answer is within the course's rule (|error| <= {:.3g} here); a spread is "
                  "not a bug, but only the fixed-order strategies repeat bit for bit",
                  tolerance));
  result.summary =
      "float atomics land in a different order each run; a fixed-order reduction repeats exactly";
  result.tables.push_back(std::move(table));
  return result;
}

// ============================== precision ==============================

Result run_precision(Context& context) {
  constexpr std::size_t kN = std::size_t{1} << 20;
  Result result{"precision", "", {}, {}, {}};
  GpuSession& gpu = context.gpu;
  SumBench bench(gpu, kN);
  std::vector<float> host(kN, 0.1f);
  upload(bench.x, host);
  const double reference = static_cast<double>(0.1f) * static_cast<double>(kN);  // exact in double
  const float as_float = static_cast<float>(reference);
  const double ulp = std::nextafter(as_float, std::numeric_limits<float>::infinity()) - as_float;
  Table table{
      fmt::format("{} copies of 0.1f; double sum {:.4f}; one float ulp there is {:g}", kN, reference, ulp),
      {"method", "result", "error", "error in ulps"},
      {},
      {}};
  auto row = [&](const std::string& name, float got) {
    const double error = static_cast<double>(got) - reference;
    table.rows.push_back({name, static_cast<double>(got), error, std::fabs(error) / ulp});
    return std::fabs(error) / ulp;
  };
  for (SumStrategy strategy : {SumStrategy::kGlobalAtomic, SumStrategy::kTreeAtomic,
                               SumStrategy::kVectorizedSinglePass, SumStrategy::kCub}) {
    row(std::string(to_string(strategy)), bench.run_once(strategy, kN));
  }
  DeviceBuffer<float> kahan_scratch(2 * 65536);
  launch_kahan_sum(bench.x.get(), bench.out.get(), kN, kahan_scratch.get(), gpu.stream());
  const double kahan_ulps = row("kahan (device)", read_back(bench.out, gpu.stream()));
  if (kahan_ulps > 1.0) {
    result.failures.push_back(
        fmt::format("the compensated sum is {:.2f} ulps off; it should be within 1", kahan_ulps));
  }
  table.notes.push_back(
      "adding a small value to a large running total rounds it away a little each time; "
      "folding in a tree keeps both sides of each addition similar in size");
  result.summary = "per-element float atomics drift; trees and compensation stay close to the double sum";
  result.tables.push_back(std::move(table));
  return result;
}

// ============================== float max ==============================

// The documented semantics: the maximum of the non-NaN inputs (-infinity when there are none),
// with +0.0 above -0.0 for the integer-ordering version; the CAS version may return either zero.
float host_max(const std::vector<float>& values) {
  float best = -std::numeric_limits<float>::infinity();
  for (float v : values) {
    if (std::isnan(v)) continue;
    if (v > best || (v == 0 && best == 0 && !std::signbit(v))) best = v;
  }
  return best;
}

Result run_float_max(Context& context) {
  Result result{"float-max", "", {}, {}, {}};
  GpuSession& gpu = context.gpu;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float minus_infinity = -std::numeric_limits<float>::infinity();
  constexpr int kN = 1 << 20;
  DeviceBuffer<float> x(kN), best(1);

  auto run = [&](FloatMaxKind kind, int n) {
    CUDOJO_CUDA(
        cudaMemcpyAsync(best.get(), &minus_infinity, sizeof(float), cudaMemcpyHostToDevice, gpu.stream()));
    launch_float_max(kind, x.get(), best.get(), n, gpu.stream());
    return read_back(best, gpu.stream());
  };
  const std::pair<FloatMaxKind, const char*> kinds[] = {{FloatMaxKind::kCompareAndSwap, "atomicCAS loop"},
                                                        {FloatMaxKind::kIntegerOrdering, "integer ordering"}};

  Table cases{"Correctness on the awkward inputs (NaN ignored, result starts at -inf)",
              {"inputs", "expected", "atomicCAS loop", "integer ordering"},
              {},
              {}};
  SplitMix64 random(7);
  std::vector<float> big(kN);
  for (auto& v : big) v = 2000.0f * random.next_unit_float() - 1000.0f;
  for (int k = 0; k < kN; k += 4099) big[k] = nan;
  big[12345] = -0.0f;
  big[54321] = 0.0f;
  const std::vector<std::pair<std::string, std::vector<float>>> inputs = {
      {"-3, -5, -1.5", {-3.0f, -5.0f, -1.5f}},
      {"-0.0 alone", {-0.0f}},
      {"-0.0, +0.0", {-0.0f, 0.0f}},
      {"NaN, 1, -2", {nan, 1.0f, -2.0f}},
      {"NaN alone", {nan}},
      {"2^20 random in [-1000, 1000) with NaNs and zeros", big},
  };
  for (const auto& [label, values] : inputs) {
    upload(x, values);
    const float want = host_max(values);
    std::vector<json> row = {label, fmt::format("{:g}", want)};
    for (const auto& [kind, kind_name] : kinds) {
      const float got = run(kind, static_cast<int>(values.size()));
      const bool zero_either = kind == FloatMaxKind::kCompareAndSwap && want == 0 && got == 0;
      const bool ok = bits_of(got) == bits_of(want) || zero_either;
      if (!ok)
        result.failures.push_back(
            fmt::format("{} on {}: got {:g}, expected {:g}", kind_name, label, got, want));
      row.push_back(fmt::format("{:g}{}", got, ok ? "" : " WRONG"));
    }
    cases.rows.push_back(std::move(row));
  }
  cases.notes.push_back(
      "the atomicCAS loop treats -0.0 and +0.0 as equal, so with both present either may remain");

  Table timing{fmt::format("Time for {} inputs into one address", kN),
               {"method", "order", "median ms", "min ms", "max ms"},
               {},
               {}};
  std::vector<float> ascending(kN);
  for (int i = 0; i < kN; ++i) ascending[i] = static_cast<float>(i);
  for (const auto& [order, values] :
       {std::pair<const char*, const std::vector<float>*>{"random", &big},
        std::pair<const char*, const std::vector<float>*>{"ascending", &ascending}}) {
    upload(x, *values);
    for (const auto& [kind, kind_name] : kinds) {
      context.progress(fmt::format("float-max: {} on {} input", kind_name, order));
      const float want = host_max(*values);
      const float got = run(kind, kN);
      if (bits_of(got) != bits_of(want) && !(got == 0 && want == 0)) {
        result.failures.push_back(
            fmt::format("{} on {} input: got {:g}, expected {:g}", kind_name, order, got, want));
        continue;
      }
      const TimeStats stats = time_until_stable(
          gpu,
          TimedKernel{[&] {
                        CUDOJO_CUDA(cudaMemcpyAsync(best.get(), &minus_infinity, sizeof(float),
                                                    cudaMemcpyHostToDevice, gpu.stream()));
                      },
                      [&, kind = kind] { launch_float_max(kind, x.get(), best.get(), kN, gpu.stream()); },
                      false,
                      {}});
      timing.rows.push_back({kind_name, order, stats.median_ms, stats.min_ms, stats.max_ms});
    }
  }
  timing.notes.push_back(
      "ascending input raises the maximum again and again, so CAS retries pile up; the integer "
      "version is one hardware atomic per element whatever the order");
  result.summary = "a float max from atomicCAS, and from integer atomics on the float's bit pattern";
  result.tables.push_back(std::move(cases));
  result.tables.push_back(std::move(timing));
  return result;
}

constexpr Experiment kExperiments[] = {
    {"race", "plain increment vs atomicAdd on one counter, several runs: how many updates survive", run_race},
    {"contention", "256-bin histogram, spread vs one bin: global atomics, shared-privatized, warp-aggregated",
     run_contention},
    {"sum-strategies", "one sum seven ways (with CUB) from 2^12 to 2^28 floats: ms, GB/s, % of peak, fastest",
     run_sum_strategies},
    {"determinism",
     "20 runs per strategy on inexact data: distinct answers and spread against a Kahan reference",
     run_determinism},
    {"precision", "a million 0.1f by atomics, trees, CUB and Kahan: error in ulps against double",
     run_precision},
    {"float-max", "atomicMax for floats from atomicCAS vs the integer-ordering trick: -0.0, NaN, contention",
     run_float_max},
};

}  // namespace

std::span<const Experiment> experiments() { return kExperiments; }

const Experiment* find_experiment(std::string_view name) {
  for (const auto& experiment : kExperiments) {
    if (experiment.name == name) return &experiment;
  }
  return nullptr;
}

}  // namespace cudojo::lab
