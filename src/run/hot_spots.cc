#include "run/hot_spots.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "common/environment.h"
#include "common/json_text.h"
#include "compile/ptx_lines.h"
#include "run/tool_process.h"

namespace cudojo {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// One row of ncu's source page: every field is quoted, and a quote inside the learner's source
// is not escaped, so the row is cut at each `","` and a Source field holding that text is mended
// from the header's count.
std::vector<std::string> page_fields(std::string_view row, std::size_t expected) {
  if (row.size() < 2 || row.front() != '"') return {};
  std::string_view inner = row.substr(1, row.size() - (row.back() == '"' ? 2 : 1));
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t cut = inner.find("\",\"", start);
    fields.emplace_back(
        inner.substr(start, cut == std::string_view::npos ? std::string_view::npos : cut - start));
    if (cut == std::string_view::npos) break;
    start = cut + 3;
  }
  // A trailing `",` (ncu ends some rows with a comma) leaves an empty last field: drop it.
  if (!fields.empty() && fields.back().ends_with("\",")) fields.back().resize(fields.back().size() - 2);
  while (expected && fields.size() > expected) {  // the Source field (1) held `","`: join it back
    fields[1] += "\",\"" + fields[2];
    fields.erase(fields.begin() + 2);
  }
  return fields;
}

std::int64_t count_of(const std::string& text) {
  if (text.empty() || text == "-") return 0;
  return std::strtoll(text.c_str(), nullptr, 10);
}

// A SASS instruction that writes global memory (a store, a reduction or an atomic): the writes a
// draining warp waits for. Shared-memory (STS, ATOMS) and local (STL) writes are not.
bool writes_global_memory(std::string_view sass) {
  auto start = sass.find_first_not_of(' ');
  if (start == std::string_view::npos) return false;
  sass.remove_prefix(start);
  if (sass.starts_with("@")) {  // a predicate: "@!P0   STG..."
    const auto space = sass.find(' ');
    if (space == std::string_view::npos) return false;
    sass.remove_prefix(sass.find_first_not_of(' ', space));
  }
  for (std::string_view opcode : {"STG", "RED", "ATOMG", "ST.", "ATOM."})
    if (sass.starts_with(opcode)) return true;
  return false;
}

struct LineTally {
  std::int64_t samples = 0;
  std::int64_t instructions = 0;
  std::map<std::string, std::int64_t> stalls;
  std::int64_t global_writes = 0;  // warp-level global-memory writes executed on the line
  std::set<std::string> write_addresses;
};

std::string line_text(std::string_view source, unsigned wanted) {
  unsigned number = 1;
  std::size_t start = 0;
  while (start <= source.size() && number < wanted) {
    const std::size_t end = source.find('\n', start);
    if (end == std::string_view::npos) return {};
    start = end + 1;
    ++number;
  }
  if (start > source.size()) return {};
  std::string_view line = source.substr(start, source.find('\n', start) - start);
  const auto first = line.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
  return std::string(line.substr(0, 160));
}

}  // namespace

HotSpots hot_spots_from_source_page(std::string_view csv, std::string_view file_name,
                                    std::string_view source) {
  HotSpots hot_spots;
  std::map<unsigned, LineTally> tallies;
  std::vector<std::string> header;
  bool in_learner_file = false;
  unsigned current_line = 0;
  std::istringstream in{std::string(csv)};
  std::string row;
  auto column = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    return -1;
  };
  int samples_at = -1, instructions_at = -1, address_at = 2, sass_at = 3;
  std::vector<std::pair<int, std::string>> stall_columns;
  while (std::getline(in, row)) {
    if (!row.empty() && row.back() == '\r') row.pop_back();
    if (row.starts_with("\"File Path\"") || row.starts_with("\"File Name\"")) {
      const auto fields = page_fields(row, 0);
      in_learner_file = fields.size() >= 2 && is_learner_path(fields[1], file_name);
      current_line = 0;
      continue;
    }
    if (row.starts_with("\"Line No\"")) {
      header = page_fields(row, 0);
      samples_at = column("Warp Stall Sampling (All Samples)");
      instructions_at = column("Instructions Executed");
      stall_columns.clear();
      for (std::size_t i = 0; i < header.size(); ++i)
        // "stall_long_sb"; the same reasons counted over not-issued samples alone say "(Not Issued)".
        if (header[i].starts_with("stall_") && header[i].find("Not Issued") == std::string::npos &&
            !header[i].ends_with("_not_issued"))
          stall_columns.emplace_back(static_cast<int>(i), header[i].substr(6));
      continue;
    }
    if (!in_learner_file || header.empty() || samples_at < 0) continue;
    const auto fields = page_fields(row, header.size());
    if (fields.size() != header.size()) continue;
    if (!fields[0].empty()) {  // a line's own row: the sums of its instructions
      const long number = std::strtol(fields[0].c_str(), nullptr, 10);
      current_line = number > 0 && number < 10'000'000 ? static_cast<unsigned>(number) : 0;
      if (!current_line) continue;
      LineTally& tally = tallies[current_line];
      tally.samples += count_of(fields[samples_at]);
      if (instructions_at >= 0) tally.instructions += count_of(fields[instructions_at]);
      for (const auto& [at, name] : stall_columns) tally.stalls[name] += count_of(fields[at]);
    } else if (current_line && fields[address_at].starts_with("0x") &&
               writes_global_memory(fields[sass_at])) {
      // An instruction of the line (listed once or twice): each address counts once.
      LineTally& tally = tallies[current_line];
      if (tally.write_addresses.insert(fields[address_at]).second && instructions_at >= 0)
        tally.global_writes += std::max<std::int64_t>(1, count_of(fields[instructions_at]));
    }
  }
  // Warps that have exited wait for their writes to land; ncu puts those samples on the code after
  // the exit (the closing brace). They are the writes' cost: share them out by writes executed.
  std::int64_t drain = 0, writes = 0;
  for (auto& [line, tally] : tallies) {
    drain += tally.stalls["drain"];
    writes += tally.global_writes;
  }
  if (drain > 0 && writes > 0) {
    std::int64_t moved = 0;
    for (auto& [line, tally] : tallies) {
      tally.samples -= tally.stalls["drain"];
      tally.stalls["drain"] = 0;
    }
    for (auto& [line, tally] : tallies) {
      if (!tally.global_writes) continue;
      const std::int64_t share = drain * tally.global_writes / writes;
      tally.samples += share;
      tally.stalls["drain"] += share;
      moved += share;
    }
    hot_spots.drain_samples = moved;
  }
  for (const auto& [line, tally] : tallies) hot_spots.samples += tally.samples;
  for (const auto& [line, tally] : tallies) {
    if (tally.samples <= 0) continue;
    HotLine hot;
    hot.line = line;
    hot.text = line_text(source, line);
    hot.samples = tally.samples;
    hot.share =
        hot_spots.samples ? static_cast<double>(tally.samples) / static_cast<double>(hot_spots.samples) : 0;
    hot.instructions = tally.instructions;
    const auto main = std::max_element(tally.stalls.begin(), tally.stalls.end(),
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    if (main != tally.stalls.end() && main->second > 0) {
      hot.stall = main->first;
      hot.stall_share = static_cast<double>(main->second) / static_cast<double>(tally.samples);
    }
    hot_spots.lines.push_back(std::move(hot));
  }
  std::stable_sort(hot_spots.lines.begin(), hot_spots.lines.end(),
                   [](const HotLine& a, const HotLine& b) { return a.samples > b.samples; });
  if (hot_spots.lines.empty())
    hot_spots.note = header.empty() ? "Nsight Compute's source page had no line rows"
                                    : "no samples fell on a line of " + std::string(file_name);
  return hot_spots;
}

namespace {

// The learner's file name as a plain name in `folder` (no folders of its own, no dot files).
std::string plain_file_name(const std::string& file_name) {
  std::string name = fs::path(file_name).filename().string();
  if (name.empty() || name.front() == '.') name = "kernel" + name;
  return name;
}

}  // namespace

HotSpotsResult collect_hot_spots(const ToolSettings& settings, const HotSpotsRequest& request) {
  const auto started = Clock::now();
  HotSpotsResult result;
  auto finish = [&](std::string note) {
    if (!note.empty()) result.hot_spots.note = std::move(note);
    result.hot_spots.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    return result;
  };
  const std::string ncu = find_cuda_tool("ncu", env::kNcu);
  if (ncu.empty()) return finish("no hot spots: ncu (Nsight Compute) was not found; CUDOJO_NCU names it");
  std::string pattern = (fs::temp_directory_path() / "cudojo-hot-spots-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    return finish("no hot spots: no scratch folder: " + std::string(std::strerror(errno)));
  const fs::path folder = pattern;
  struct Remove {
    fs::path path;
    ~Remove() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove{folder};
  const std::string file_name = plain_file_name(request.launch_job.file_name);
  {
    // Imported into the report, so Nsight Compute shows the learner's source beside its SASS.
    std::ofstream out(folder / file_name, std::ios::binary);
    out << request.launch_job.source;
  }
  Job job = request.launch_job;
  job.mode = WorkerMode::kLaunchForNcu;
  job.launch_submission_only = true;
  job.gpu_turns = false;  // the GPU is held alone for the whole profile, below
  job.keep_alive = false;
  const auto deadline =
      started + std::chrono::microseconds(static_cast<long long>(settings.limits.hot_spots_budget_ms * 1000));
  std::vector<std::string> prefix = {ncu,
                                     "--clock-control",
                                     "none",
                                     "--import-source",
                                     "yes",
                                     "--source-folders",
                                     folder.string(),
                                     "-f",
                                     "-o",
                                     (folder / "profile").string()};
  if (request.report_path.empty()) {
    for (const char* section : {"SourceCounters", "WarpStateStats"}) {
      prefix.push_back("--section");
      prefix.push_back(section);
    }
  } else {
    prefix.insert(prefix.end(), {"--set", "full"});
  }
  {
    GpuLease::Hold alone;
    if (request.lease) alone = request.lease->alone();
    if (request.free_counters) request.free_counters();
    WorkerProcess worker(worker_command(settings, prefix, WorkerMode::kLaunchForNcu),
                         settings.limits.max_output_bytes, tool_environment(settings));
    ToolFollow follow;
    follow.budget_ms = settings.limits.hot_spots_budget_ms;
    if (follow_tool_worker(worker, json_text(nlohmann::json(job)), follow).timed_out)
      return finish("no hot spots: Nsight Compute was stopped after its budget");
  }
  const fs::path report = folder / "profile.ncu-rep";
  std::error_code error;
  if (!fs::exists(report, error)) return finish("no hot spots: Nsight Compute wrote no report");

  ToolLog page("cudojo-ncu-source");
  std::string reader_output;
  {
    WorkerProcess reader({ncu, "-i", report.string(), "--page", "source", "--csv", "--print-source",
                          "cuda,sass", "--log-file", page.path()},
                         settings.limits.max_output_bytes);
    reader.close_input();
    if (!reader.wait_until(deadline))
      return finish("no hot spots: reading Nsight Compute's report ran out of time");
    reader_output = reader.output();
  }
  std::string csv = page.read();
  if (csv.empty()) csv = reader_output;  // an ncu that wrote the page to its output instead
  result.hot_spots = hot_spots_from_source_page(csv, file_name, request.launch_job.source);

  if (!request.report_path.empty()) {
    const auto bytes = fs::file_size(report, error);
    if (error) {
      result.report_note = "the report could not be read: " + error.message();
    } else if (bytes > settings.limits.max_ncu_report_bytes) {
      result.report_note = fmt::format("the report ({} bytes) is over the {} bytes kept", bytes,
                                       settings.limits.max_ncu_report_bytes);
    } else {
      fs::copy_file(report, request.report_path, fs::copy_options::overwrite_existing, error);
      if (error) {
        result.report_note =
            "the report could not be written to " + request.report_path + ": " + error.message();
      } else {
        result.report_kept = true;
        result.report_bytes = bytes;
      }
    }
  }
  return finish("");
}

}  // namespace cudojo
