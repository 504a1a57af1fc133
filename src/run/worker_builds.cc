#include "run/worker_builds.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <regex>

#include "check/barriers.h"
#include "check/datasets.h"
#include "check/warp_collectives.h"
#include "compile/check_build.h"
#include "compile/ptx_atomics.h"
#include "compile/ptx_lines.h"
#include "compile/ptx_warp_collectives.h"
#include "run/compile_child.h"
#include "stage/contract_info.h"

namespace cudojo {

namespace {

// Whether a kernel's PTX calls the device heap (malloc/free in device code): what it leaves behind
// there outlives the job, so a worker that ran it is not given another.
bool calls_device_heap(const std::string& ptx) {
  static const std::regex kHeapCall(R"(\.extern\s+\.func\s*(\([^)]*\))?\s*(malloc|free)\b)");
  return std::regex_search(ptx, kHeapCall);
}

// The PTX of the learner's kernels, as far as this worker has it (a cubin given by the parent has
// none: nullopt, "cannot tell").
std::optional<std::vector<std::string>> learner_ptx(const Builds& builds) {
  std::vector<std::string> texts;
  for (const CompileResult* built : {&builds.submission, &builds.second_submission}) {
    if (!built->ok) continue;
    if (!built->ptx.empty()) {
      texts.push_back(built->ptx);
    } else if (built->format == ImageFormat::kPtx) {
      texts.emplace_back(built->image.begin(), built->image.end());
    } else {
      return std::nullopt;
    }
  }
  return texts;
}

std::string collective_name(std::uint32_t kind) {
  switch (static_cast<WarpCollectiveKind>(kind)) {
    case WarpCollectiveKind::kShuffle:
      return "warp shuffle";
    case WarpCollectiveKind::kVote:
      return "warp vote (ballot, any or all)";
    case WarpCollectiveKind::kMatch:
      return "warp match";
    case WarpCollectiveKind::kReduce:
      return "warp reduce";
    case WarpCollectiveKind::kSyncwarp:
      return "__syncwarp";
    case WarpCollectiveKind::kElect:
      return "warp elect";
    case WarpCollectiveKind::kShuffleSource:
      return "warp shuffle";
  }
  return "warp collective";
}

// At or just below the tool size, chosen by the job's seed, and never a whole number of warps: a
// kernel cannot tell the check's launch by its N (the tests and sanitizers also run near 1000),
// and its last warp is partial, where lanes past N would leave early.
std::int64_t check_build_size(std::int64_t tool_size, std::uint64_t seed) {
  if (tool_size <= 64) return tool_size;
  SplitMix64 random(seed ^ 0x636865636b62756cull);  // "checkbul"
  for (;;) {
    const std::int64_t n = tool_size - static_cast<std::int64_t>(random.next() % 48);
    if (n % 32 != 0) return n;
  }
}

WarpMaskCounts read_warp_counts(const LoadedKernel& counted) {
  WarpMaskCounts counts;
  counts.sightings_per_line = counted.read_global(kWarpMaskLinesSymbol, kBarrierLineSlots);
  const auto records = counted.read_global(kWarpMaskRecordSymbol, 2 * kRecordFields);
  if (records.size() != 2 * kRecordFields) return counts;
  auto sighting = [&](std::size_t base) -> std::optional<WarpMaskSighting> {
    if (records[base + kRecordTaken] == 0) return std::nullopt;
    return WarpMaskSighting{records[base + kRecordLine], records[base + kRecordBlock],
                            records[base + kRecordWarp], records[base + kRecordGoneLanes],
                            collective_name(records[base + kRecordKind])};
  };
  counts.checked = records[kRecordChecked];
  counts.first = sighting(0);
  counts.first_gone_read = sighting(kRecordFields);
  return counts;
}

}  // namespace

// `second`: the compile of a two-kernel contract's second kernel (stage.second_kernel).
CompileRequest compile_request(const Job& job, const std::string& source, const std::string& file_name,
                               const std::string& arch, bool second) {
  const ContractInfo* contract = find_contract_info(job.stage.contract);
  const KernelSignature signature = second ? contract->second : contract->first();
  CompileRequest request;
  request.source = source;
  request.file_name = file_name;
  request.kernel_name = second ? job.stage.second_kernel : job.stage.kernel;
  request.kernel_parameters = std::string(signature.parameters);
  request.kernel_pointer_type = std::string(signature.pointer_type);
  request.arch = arch;
  request.cuda_include_dir = job.cuda_include_dir;
  request.max_log_bytes = job.max_log_bytes;
  return request;
}

namespace {

CompileResult reuse(const BuiltKernel& built) {
  CompileResult reused;
  reused.ok = true;
  reused.image = built.image;
  reused.lowered_name = built.lowered_name;
  reused.format = built.format;
  reused.abi = built.abi;
  if (built.format == ImageFormat::kPtx && !built.image.empty()) {
    reused.ptx.assign(built.image.data(), built.image.size() - 1);  // the image ends with a NUL
  }
  return reused;
}

}  // namespace

// A stage that wants the same bits on every run refuses float atomic adds in either kernel, found
// in the PTX: their order is the memory system's, so agreeing runs on an idle GPU prove nothing.
// (A CUDA build file carries only its cubin, so it is judged by its runs alone.)
void add_float_atomic_findings(const Job& job, const Builds& builds, FindingSet& findings) {
  const std::pair<const CompileResult*, const std::string*> kernels[] = {
      {&builds.submission, &job.stage.kernel}, {&builds.second_submission, &job.stage.second_kernel}};
  for (const auto& [build, kernel] : kernels) {
    if (!build->ok || build->ptx.empty() || kernel->empty()) continue;
    for (const auto& use :
         float_atomics_in_kernel(build->ptx, build->lowered_name, build->source_file_index)) {
      findings.add(
          finding_code::kNondeterministic,
          fmt::format("{} adds floats with an atomic ({}{}): float atomics land in whatever order the "
                      "threads reach memory, so the sum can change in its last bits from run to run, "
                      "even when runs on an idle GPU happen to agree. This stage wants a fixed order: "
                      "write each block's sum to its own slot, then fold the slots in an order the "
                      "code fixes",
                      *kernel, use.instruction, use.line ? fmt::format(" at line {}", use.line) : ""),
          std::nullopt, use.line ? std::optional<int>(use.line) : std::nullopt);
      return;
    }
  }
}

Builds compile_all(const Job& job, const std::string& arch) {
  auto build = [&](const std::optional<BuiltKernel>& built, const std::string& source,
                   const std::string& file_name) {
    if (!built) return compile_in_child(compile_request(job, source, file_name, arch));
    return reuse(*built);
  };
  std::future<CompileResult> reference;
  if (job.mode != WorkerMode::kSanitize) {
    reference = std::async(std::launch::async,
                           [&] { return build(job.reference_build, job.reference_source, "reference.cu"); });
  }
  // A CUDA source that prints is judged as its quiet build (printf compiled out) after its first
  // launch; the check build and the sanitizers then watch that same quiet build, so source that
  // tells the builds apart (`#ifdef printf`) gains nothing.
  const bool prints = job.mode == WorkerMode::kCheck && job.language == Language::kCuda &&
                      job.source.find("printf") != std::string::npos;
  const std::string quiet_define = "#define printf(...) (0)\n";
  std::future<CompileResult> quiet;
  if (prints) {
    quiet = std::async(std::launch::async, [&] {
      CompileRequest request = compile_request(job, job.source, job.file_name, arch);
      request.pre_include_name = "cudojo_quiet_printf.h";
      request.pre_include_text = quiet_define;
      return compile_in_child(request);
    });
  }
  std::future<CompileResult> second_submission, second_reference;
  if (!job.stage.second_kernel.empty()) {
    auto build_second = [&](const std::optional<BuiltKernel>& built, const std::string& source,
                            const std::string& file_name) {
      if (!built) return compile_in_child(compile_request(job, source, file_name, arch, true));
      return reuse(*built);
    };
    second_submission = std::async(std::launch::async, [&, build_second] {
      return build_second(job.second_submission_build, job.source, job.file_name);
    });
    if (job.mode != WorkerMode::kSanitize || job.second_reference_build) {
      second_reference = std::async(std::launch::async, [&, build_second] {
        return build_second(job.second_reference_build, job.reference_source, "reference.cu");
      });
    }
  }
  Builds builds;
  builds.submission = build(job.submission_build, job.source, job.file_name);
  if (second_submission.valid()) builds.second_submission = second_submission.get();
  if (second_reference.valid()) builds.second_reference = second_reference.get();
  if (quiet.valid()) builds.quiet = quiet.get();
  if (reference.valid()) builds.reference = reference.get();
  if (job.language == Language::kCuda && !job.submission_build) {
    refuse_judge_names(builds.submission, job.file_name);
    if (builds.quiet.ok) refuse_judge_names(builds.quiet, job.file_name);
  }
  if (job.counted_build) {
    builds.counted = reuse(*job.counted_build);
  } else if (job.mode == WorkerMode::kCheck && job.language == Language::kCuda && builds.submission.ok) {
    // The check build watches what is judged: the quiet build when there is one.
    const CompileResult& judged = builds.quiet.ok ? builds.quiet : builds.submission;
    std::string note;
    if (auto checked = check_build_of(judged, job.file_name, note)) builds.counted = reuse(*checked);
  }
  return builds;
}

std::optional<BuiltKernel> check_build_of(const CompileResult& compiled, std::string_view file_name,
                                          std::string& note) {
  if (compiled.ptx.empty()) {
    note = "the compiler gave no PTX to add the check build's counters to";
    return std::nullopt;
  }
  const int learner_file = compiled.format == ImageFormat::kPtx
                               ? compiled.source_file_index
                               : ptx_learner_file_index(compiled.ptx, file_name);
  auto checked = make_check_build(compiled.ptx, learner_file);
  if (!checked) {
    note = "the PTX was not a 64-bit module the check build's counters understand";
    return std::nullopt;
  }
  BuiltKernel built{compiled.lowered_name, {}, ImageFormat::kPtx, compiled.abi};
  built.image.assign(checked->ptx.begin(), checked->ptx.end());
  built.image.push_back('\0');
  return built;
}

void refuse_judge_names(CompileResult& compiled, const std::string& file_name) {
  if (!compiled.ok) return;
  const auto name = judge_name_in_module(compiled.ptx);
  if (!name) return;
  const std::string message = fmt::format(
      "`{}` is a name the judge's checks use; rename it (names beginning with `cudojo_` are the "
      "judge's)",
      *name);
  compiled.ok = false;
  compiled.log = fmt::format("{}: error: {}\n", file_name, message);
  compiled.diagnostics = {Diagnostic{file_name, 0, "error", message}};
}

// Runs only learner code that already ran in the tests; a fault here is still the learner's.
void check_counted_build(const Job& job, GpuSession& gpu, ContractDriver& driver,
                         const CompileResult& counted_build, const LoadedKernel* second,
                         PhaseAnnouncer& announce, Report& report) {
  BarrierCheckSummary& summary = report.barrier_check;
  if (!counted_build.ok) {
    summary.note =
        "the submission's PTX could not be given the check build's counters; barriers and warp "
        "collectives were not checked";
    return;
  }
  LoadedKernel counted(counted_build.image, counted_build.lowered_name, job.stage.launch.dynamic_shared_bytes,
                       counted_build.abi);
  // A two-kernel contract's second kernel runs uncounted beside the counted first.
  ContractContext context{job.stage, gpu, counted, counted, job.seed, announce, second, second};
  announce.phase("barrier check", 1);
  const std::int64_t n = check_build_size(job.tool_size, job.seed);
  driver.launch_once_for_tools(context, n, counted, {});
  BarrierCounts counts;
  const auto shape = counted.read_global(kBarrierShapeSymbol, 2);
  if (shape.size() == 2) {
    counts.threads_per_block = shape[0];
    counts.blocks = shape[1];
  }
  const std::uint64_t threads = static_cast<std::uint64_t>(counts.threads_per_block) * counts.blocks;
  counts.passes_per_thread =
      counted.read_global(kBarrierPassesSymbol, std::min<std::uint64_t>(threads, kBarrierThreadSlots));
  counts.arrivals_per_line = counted.read_global(kBarrierLinesSymbol, kBarrierLineSlots);
  summary.ran = true;
  summary.n = n;
  for (const auto arrivals : counts.arrivals_per_line) summary.arrivals += arrivals;
  if (auto finding = divergent_barrier_finding(counts)) report.findings.push_back(*finding);
  const WarpMaskCounts warp = read_warp_counts(counted);
  summary.collective_checks = warp.checked;
  // Values read from gone lanes were replaced by loud ones; whether the answer moved says whether
  // the kernel used them.
  const std::optional<bool> answer_right =
      warp.first_gone_read ? driver.tool_answer_right(context) : std::nullopt;
  if (auto finding = gone_lanes_finding(warp, answer_right)) report.findings.push_back(*finding);
}

bool uses_device_heap(const Builds& builds) {
  const auto texts = learner_ptx(builds);
  if (!texts) return false;  // a cubin from `cudojo build`: its own PTX was read when it was built
  return std::any_of(texts->begin(), texts->end(), calls_device_heap);
}

bool may_synchronize(const Builds& builds) {
  const auto texts = learner_ptx(builds);
  if (!texts) return true;
  return std::any_of(texts->begin(), texts->end(), [](const std::string& ptx) {
    return ptx.find("bar") != std::string::npos || ptx.find(".sync") != std::string::npos;
  });
}

bool may_use_shared_memory(const Builds& builds) {
  const auto texts = learner_ptx(builds);
  if (!texts) return true;
  return std::any_of(texts->begin(), texts->end(),
                     [](const std::string& ptx) { return ptx.find(".shared") != std::string::npos; });
}

}  // namespace cudojo
