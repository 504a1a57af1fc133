#include "compile/kernel_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>

#include "compile/toolkit_tool.h"

namespace cudojo {

std::vector<KernelResources> parse_ptxas_verbose(std::string_view log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(
      R"(([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads)");
  static const std::regex used(R"(Used ([0-9]+) registers)");
  static const std::regex barriers(R"(used ([0-9]+) barriers)");
  static const std::regex shared(R"(([0-9]+) bytes smem)");
  std::vector<KernelResources> kernels;
  std::size_t start = 0;
  while (start < log.size()) {
    const std::size_t end = std::min(log.find('\n', start), log.size());
    const std::string line(log.substr(start, end - start));
    start = end + 1;
    std::smatch match;
    if (std::regex_search(line, match, entry)) {
      kernels.push_back({match[1].str()});
      continue;
    }
    if (kernels.empty()) continue;  // the module's own lines (gmem) come first
    KernelResources& kernel = kernels.back();
    if (std::regex_search(line, match, frame)) {
      kernel.stack_frame_bytes = std::stoll(match[1].str());
      kernel.spill_store_bytes = std::stoll(match[2].str());
      kernel.spill_load_bytes = std::stoll(match[3].str());
    }
    if (std::regex_search(line, match, used)) {
      kernel.registers = std::stoi(match[1].str());
      if (std::regex_search(line, match, barriers)) kernel.barriers = std::stoi(match[1].str());
      if (std::regex_search(line, match, shared)) kernel.shared_bytes = std::stoll(match[1].str());
    }
  }
  return kernels;
}

namespace {

// An SM's limits, from NVIDIA's occupancy calculator and the CUDA C++ Programming Guide's table of
// compute capabilities.
struct SmLimits {
  std::string_view arch;
  int max_threads;
  int max_blocks;
  int registers;             // 32-bit registers per SM
  int register_unit;         // registers are given to a warp in multiples of this
  std::int64_t shared;       // shared memory per SM a kernel may use, bytes
  std::int64_t reserved;     // shared memory the system keeps per block, bytes
  std::int64_t shared_unit;  // shared memory is given in multiples of this
};

constexpr SmLimits kSmLimits[] = {
    {"sm_80", 2048, 32, 65536, 256, 167936, 1024, 128},
    {"sm_86", 1536, 16, 65536, 256, 102400, 1024, 128},
    {"sm_89", 1536, 24, 65536, 256, 102400, 1024, 128},
    {"sm_90", 2048, 32, 65536, 256, 233472, 1024, 128},
};

std::int64_t round_up(std::int64_t value, std::int64_t unit) { return (value + unit - 1) / unit * unit; }

}  // namespace

std::optional<Occupancy> theoretical_occupancy(std::string_view arch, int threads_per_block,
                                               const KernelResources& resources,
                                               std::int64_t dynamic_shared_bytes, std::string* why) {
  auto say = [&](std::string text) {
    if (why) *why = std::move(text);
    return std::nullopt;
  };
  const auto* limits = std::find_if(std::begin(kSmLimits), std::end(kSmLimits),
                                    [&](const SmLimits& sm) { return sm.arch == arch; });
  if (limits == std::end(kSmLimits)) return say(fmt::format("no occupancy table for {}", arch));
  if (threads_per_block <= 0 || threads_per_block > 1024)
    return say(fmt::format("{} threads per block cannot be launched", threads_per_block));
  const int warps_per_block = (threads_per_block + 31) / 32;
  const int max_warps = limits->max_threads / 32;
  struct Limit {
    int blocks;
    const char* name;
  };
  std::vector<Limit> candidates = {{max_warps / warps_per_block, "warps"}, {limits->max_blocks, "blocks"}};
  if (resources.registers > 0) {
    const int per_warp = static_cast<int>(round_up(resources.registers * 32, limits->register_unit));
    candidates.push_back({limits->registers / per_warp / warps_per_block, "registers"});
  }
  const std::int64_t shared = resources.shared_bytes + dynamic_shared_bytes;
  if (shared > 0) {
    const std::int64_t per_block = round_up(shared + limits->reserved, limits->shared_unit);
    candidates.push_back({static_cast<int>(limits->shared / per_block), "shared memory"});
  }
  const Limit tightest =
      *std::min_element(candidates.begin(), candidates.end(),
                        [](const Limit& a, const Limit& b) { return a.blocks < b.blocks; });
  if (tightest.blocks == 0)
    return say(fmt::format("one block needs more {} than an SM of {} has", tightest.name, arch));
  Occupancy occupancy;
  occupancy.blocks_per_sm = tightest.blocks;
  occupancy.active_warps = tightest.blocks * warps_per_block;
  occupancy.max_warps = max_warps;
  occupancy.fraction = static_cast<double>(occupancy.active_warps) / max_warps;
  occupancy.limited_by = tightest.name;
  return occupancy;
}

ResourceReport assemble_for_resources(std::string_view ptx, const std::string& arch, const std::string& ptxas,
                                      const JudgeLimits& limits) {
  ResourceReport report;
  if (ptxas.empty()) {
    report.error = "ptxas (the CUDA toolkit's assembler) was not found";
    return report;
  }
  ToolkitToolRun run;
  run.tool = ptxas;
  run.input = std::string(ptx);
  run.input_name = "kernel.ptx";
  // -lineinfo keeps the PTX's .loc lines in the cubin for the disassembler; it changes no code.
  run.arguments = {"-arch=" + arch, "-v", "-lineinfo", "/job/kernel.ptx", "-o", "/job/kernel.cubin"};
  run.output_name = "kernel.cubin";
  run.max_output_bytes = limits.max_compile_log_bytes;
  const ToolkitToolResult ran = run_toolkit_tool(run, limits);
  if (!ran.succeeded()) {
    report.error = ran.error("ptxas", "the module");
    return report;
  }
  report.cubin = ran.output;
  const SandboxResult& result = ran.ran;
  report.kernels = parse_ptxas_verbose(result.out + result.err);
  report.ok = !report.kernels.empty();
  if (!report.ok) report.error = "ptxas reported no kernel";
  return report;
}

void to_json(nlohmann::json& j, const KernelResources& resources) {
  j = {{"kernel", resources.kernel},
       {"registers", resources.registers},
       {"barriers", resources.barriers},
       {"shared_bytes", resources.shared_bytes},
       {"stack_frame_bytes", resources.stack_frame_bytes},
       {"spill_store_bytes", resources.spill_store_bytes},
       {"spill_load_bytes", resources.spill_load_bytes}};
}

void to_json(nlohmann::json& j, const Occupancy& occupancy) {
  j = {{"blocks_per_sm", occupancy.blocks_per_sm},
       {"active_warps", occupancy.active_warps},
       {"max_warps", occupancy.max_warps},
       {"fraction", occupancy.fraction},
       {"limited_by", occupancy.limited_by}};
}

}  // namespace cudojo
