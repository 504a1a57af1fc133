#include "report/report.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "common/json_number.h"

namespace cudojo {

namespace {

template <typename T>
nlohmann::json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Numbers go through number_json (common/json_number.h): JSON has no NaN or infinity.
nlohmann::json optional_json(const std::optional<double>& value) { return number_json(value); }

template <typename T>
std::optional<T> optional_from(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  if constexpr (std::is_same_v<T, double>) {
    return number_from_json(j.at(key));
  } else {
    return j.at(key).get<T>();
  }
}

nlohmann::json timings_json(const std::map<std::string, double>& timings) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [step, ms] : timings) j[step] = number_json(ms);
  return j;
}

}  // namespace

void to_json(nlohmann::json& j, const Diagnostic& diagnostic) {
  j = {{"file", diagnostic.file},         {"line", diagnostic.line},       {"column", diagnostic.column},
       {"severity", diagnostic.severity}, {"message", diagnostic.message}, {"context", diagnostic.context}};
}

void from_json(const nlohmann::json& j, Diagnostic& diagnostic) {
  j.at("file").get_to(diagnostic.file);
  j.at("line").get_to(diagnostic.line);
  j.at("severity").get_to(diagnostic.severity);
  j.at("message").get_to(diagnostic.message);
  diagnostic.column = j.value("column", 0);
  diagnostic.context = j.value("context", std::string());
}

void to_json(nlohmann::json& j, const Report& report) {
  j = nlohmann::json::object();
  j["verdict"] = to_string(report.verdict);
  j["stage"] = report.stage;
  j["file"] = report.file;
  j["message"] = report.message;
  j["error_name"] = optional_json(report.error_name);
  j["gpu"] = optional_json(report.gpu);
  j["language"] = report.language;
  j["compile"] = {{"ok", report.compile.ok},
                  {"arch", report.compile.arch},
                  {"nvrtc", report.compile.nvrtc},
                  {"log", report.compile.log},
                  {"diagnostics", report.compile.diagnostics},
                  {"compile_ms", number_json(report.compile.compile_ms)}};
  j["tests"] = report.tests;
  j["findings"] = report.findings;
  const Metrics& m = report.metrics;
  j["metrics"] = {
      {"n", m.n},
      {"time_ms", optional_json(m.time_ms)},
      {"reference_time_ms", optional_json(m.reference_time_ms)},
      {"time_ratio", optional_json(m.time_ratio)},
      {"baseline_name", m.baseline_name},
      {"baseline_time_ms", optional_json(m.baseline_time_ms)},
      {"baseline_ratio", optional_json(m.baseline_ratio)},
      {"bandwidth_gbps", optional_json(m.bandwidth_gbps)},
      {"pct_of_peak", optional_json(m.pct_of_peak)},
      {"note", m.note},
      {"sm_throughput_pct", m.kernel ? number_json(m.kernel->sm_throughput_pct) : nlohmann::json(nullptr)},
      {"dram_throughput_pct",
       m.kernel ? number_json(m.kernel->dram_throughput_pct) : nlohmann::json(nullptr)},
      {"global_atomics", m.kernel ? number_json(m.kernel->global_atomics) : nlohmann::json(nullptr)},
      {"kernel_duration_ms", m.kernel ? number_json(m.kernel->duration_ms) : nlohmann::json(nullptr)},
      {"reference_sm_throughput_pct",
       m.reference_kernel ? number_json(m.reference_kernel->sm_throughput_pct) : nlohmann::json(nullptr)},
      {"reference_dram_throughput_pct",
       m.reference_kernel ? number_json(m.reference_kernel->dram_throughput_pct) : nlohmann::json(nullptr)},
      {"reference_global_atomics",
       m.reference_kernel ? number_json(m.reference_kernel->global_atomics) : nlohmann::json(nullptr)},
      {"reference_kernel_duration_ms",
       m.reference_kernel ? number_json(m.reference_kernel->duration_ms) : nlohmann::json(nullptr)},
      {"metrics_source", m.metrics_source},
      {"metrics_note", m.metrics_note},
      {"metrics_passes", m.metrics_passes}};
  j["gate"] = optional_json(report.gate);
  if (report.hot_spots) j["hot_spots"] = *report.hot_spots;
  j["determinism"] = nlohmann::json::array();
  for (const auto& d : report.determinism) {
    j["determinism"].push_back({{"data", d.data},
                                {"n", d.n},
                                {"runs", d.runs},
                                {"distinct", d.distinct},
                                {"min", number_json(d.min)},
                                {"max", number_json(d.max)}});
  }
  j["sanitizer"] = {{"requested", report.sanitizer.requested},
                    {"ran", report.sanitizer.ran},
                    {"note", report.sanitizer.note},
                    {"tools", nlohmann::json::array()},
                    {"skipped", report.sanitizer.skipped}};
  for (const auto& tool : report.sanitizer.tools) {
    j["sanitizer"]["tools"].push_back(
        {{"tool", tool.tool}, {"errors", tool.errors}, {"seconds", number_json(tool.seconds)}});
  }
  j["barrier_check"] = {{"ran", report.barrier_check.ran},
                        {"n", report.barrier_check.n},
                        {"arrivals", report.barrier_check.arrivals},
                        {"collective_checks", report.barrier_check.collective_checks},
                        {"note", report.barrier_check.note}};
  const CalibrationUse& c = report.calibration;
  j["calibration"] = {{"file", c.file},
                      {"measured_at", c.measured_at},
                      {"note", c.note},
                      {"previous_stage", c.previous_stage},
                      {"previous_reference_time_ms", optional_json(c.previous_reference_time_ms)},
                      {"previous_bandwidth_gbps", optional_json(c.previous_bandwidth_gbps)},
                      {"previous_sm_throughput_pct", optional_json(c.previous_sm_throughput_pct)}};
  j["output"] = {{"captured", report.output.text},
                 {"truncated", report.output.truncated},
                 {"bytes", report.output.bytes},
                 {"note", report.output.note}};
  j["seed"] = report.seed;
  j["wall_ms"] = number_json(report.wall_ms);
  j["timings_ms"] = timings_json(report.timings_ms);
  if (report.judged_by) {
    j["judged_by"] = {
        {"node", report.judged_by->node}, {"host", report.judged_by->host}, {"gpu", report.judged_by->gpu}};
  }
  if (report.stage_version) {
    const StageVersion& v = *report.stage_version;
    j["stage_version"] = {{"digest", v.digest},
                          {"stage_files", v.stage_files},
                          {"calibration", v.calibration},
                          {"data_generator", v.data_generator},
                          {"judge_rules", v.judge_rules}};
  }
}

void from_json(const nlohmann::json& j, Report& report) {
  report.verdict = parse_verdict(j.at("verdict").get<std::string>()).value_or(Verdict::kInternalError);
  j.at("stage").get_to(report.stage);
  report.file = j.value("file", "");
  report.message = j.value("message", "");
  report.error_name = optional_from<std::string>(j, "error_name");
  report.gpu = optional_from<GpuInfo>(j, "gpu");
  if (j.contains("judged_by") && j.at("judged_by").is_object()) {
    const auto& judged_by = j.at("judged_by");
    report.judged_by =
        JudgedBy{judged_by.value("node", ""), judged_by.value("host", ""), judged_by.value("gpu", "")};
  }
  if (j.contains("stage_version") && j.at("stage_version").is_object()) {
    const auto& v = j.at("stage_version");
    report.stage_version =
        StageVersion{v.value("digest", ""), v.value("stage_files", ""), v.value("calibration", ""),
                     v.value("data_generator", 0), v.value("judge_rules", 0)};
  }
  report.language = j.value("language", std::string("cuda"));
  const auto& compile = j.at("compile");
  compile.at("ok").get_to(report.compile.ok);
  report.compile.arch = compile.value("arch", "");
  report.compile.nvrtc = compile.value("nvrtc", "");
  compile.at("log").get_to(report.compile.log);
  compile.at("diagnostics").get_to(report.compile.diagnostics);
  report.compile.compile_ms =
      compile.contains("compile_ms") ? number_from_json(compile.at("compile_ms")) : 0.0;
  j.at("tests").get_to(report.tests);
  j.at("findings").get_to(report.findings);
  const auto& m = j.at("metrics");
  report.metrics.n = m.value("n", std::int64_t{0});
  report.metrics.time_ms = optional_from<TimeStats>(m, "time_ms");
  report.metrics.reference_time_ms = optional_from<TimeStats>(m, "reference_time_ms");
  report.metrics.time_ratio = optional_from<double>(m, "time_ratio");
  report.metrics.baseline_name = m.value("baseline_name", std::string{});
  report.metrics.baseline_time_ms = optional_from<TimeStats>(m, "baseline_time_ms");
  report.metrics.baseline_ratio = optional_from<double>(m, "baseline_ratio");
  report.metrics.bandwidth_gbps = optional_from<double>(m, "bandwidth_gbps");
  report.metrics.pct_of_peak = optional_from<double>(m, "pct_of_peak");
  report.metrics.note = m.value("note", "");
  auto number = [&](const char* key) {
    return m.contains(key) ? number_from_json(m.at(key)) : std::numeric_limits<double>::quiet_NaN();
  };
  if (m.contains("sm_throughput_pct") && !m.at("sm_throughput_pct").is_null()) {
    report.metrics.kernel = KernelMetrics{number("sm_throughput_pct"), number("dram_throughput_pct"),
                                          number("kernel_duration_ms"), number("global_atomics")};
  }
  if (m.contains("reference_sm_throughput_pct") && !m.at("reference_sm_throughput_pct").is_null()) {
    report.metrics.reference_kernel =
        KernelMetrics{number("reference_sm_throughput_pct"), number("reference_dram_throughput_pct"),
                      number("reference_kernel_duration_ms"), number("reference_global_atomics")};
  }
  report.metrics.metrics_source = m.value("metrics_source", "");
  report.metrics.metrics_note = m.value("metrics_note", "");
  report.metrics.metrics_passes = m.value("metrics_passes", 0);
  report.gate = optional_from<GateResult>(j, "gate");
  for (const auto& d : j.value("determinism", nlohmann::json::array())) {
    report.determinism.push_back({d.at("data"), d.at("n"), d.at("runs"), d.at("distinct"),
                                  number_from_json(d.at("min")), number_from_json(d.at("max"))});
  }
  if (j.contains("barrier_check")) {
    const auto& barriers = j.at("barrier_check");
    report.barrier_check.ran = barriers.value("ran", false);
    report.barrier_check.n = barriers.value("n", std::int64_t{0});
    report.barrier_check.arrivals = barriers.value("arrivals", std::uint64_t{0});
    report.barrier_check.collective_checks = barriers.value("collective_checks", std::uint64_t{0});
    report.barrier_check.note = barriers.value("note", "");
  }
  if (j.contains("sanitizer")) {
    const auto& sanitizer = j.at("sanitizer");
    report.sanitizer.requested = sanitizer.value("requested", false);
    report.sanitizer.ran = sanitizer.value("ran", false);
    report.sanitizer.note = sanitizer.value("note", "");
    for (const auto& tool : sanitizer.value("tools", nlohmann::json::array())) {
      report.sanitizer.tools.push_back(
          {tool.at("tool"), tool.at("errors"), number_from_json(tool.at("seconds"))});
    }
    for (const auto& name : sanitizer.value("skipped", nlohmann::json::array())) {
      if (name.is_string()) report.sanitizer.skipped.push_back(name.get<std::string>());
    }
  }
  if (j.contains("calibration")) {
    const auto& c = j.at("calibration");
    report.calibration.file = c.value("file", "");
    report.calibration.measured_at = c.value("measured_at", "");
    report.calibration.note = c.value("note", "");
    report.calibration.previous_stage = c.value("previous_stage", "");
    report.calibration.previous_reference_time_ms = optional_from<TimeStats>(c, "previous_reference_time_ms");
    report.calibration.previous_bandwidth_gbps = optional_from<double>(c, "previous_bandwidth_gbps");
    report.calibration.previous_sm_throughput_pct = optional_from<double>(c, "previous_sm_throughput_pct");
  }
  if (j.contains("output")) {
    report.output.text = j.at("output").value("captured", "");
    report.output.truncated = j.at("output").value("truncated", false);
    report.output.bytes = j.at("output").value("bytes", std::uint64_t{0});
    report.output.note = j.at("output").value("note", "");
  }
  if (j.contains("hot_spots") && j.at("hot_spots").is_object())
    report.hot_spots = j.at("hot_spots").get<HotSpots>();
  report.seed = j.value("seed", std::uint64_t{0});
  report.wall_ms = j.contains("wall_ms") ? number_from_json(j.at("wall_ms")) : 0.0;
  if (j.contains("timings_ms") && j.at("timings_ms").is_object()) {
    for (const auto& [step, ms] : j.at("timings_ms").items()) {
      report.timings_ms[step] = number_from_json(ms);
    }
  }
}

}  // namespace cudojo
