#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "common/environment.h"
#include "report/report.h"

namespace cudojo {

namespace {

struct Palette {
  bool on;
  std::string paint(std::string_view text, std::string_view code) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
  }
  std::string good(std::string_view t) const { return paint(t, "32"); }
  std::string bad(std::string_view t) const { return paint(t, "31"); }
  std::string warn(std::string_view t) const { return paint(t, "33"); }
  std::string dim(std::string_view t) const { return paint(t, "2"); }
  std::string bold(std::string_view t) const { return paint(t, "1"); }
};

std::string format_value(double value) {
  if (value == static_cast<double>(static_cast<long long>(value)) && std::abs(value) < 1e15) {
    return fmt::format("{}", static_cast<long long>(value));
  }
  return fmt::format("{:.9g}", value);
}

std::string verdict_banner(const Report& report, const Palette& p) {
  std::string name(to_string(report.verdict));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (report.verdict == Verdict::kAccepted) return p.bold(p.good(name));
  if (report.verdict == Verdict::kTooSlow) return p.bold(p.warn(name));
  return p.bold(p.bad(name));
}

}  // namespace

bool colour_wanted(int fd) {
  const char* no_colour = std::getenv(env::kNoColor);
  if (no_colour && *no_colour) return false;
  return isatty(fd) == 1;
}

std::string render_text(const Report& report, bool colour) {
  const Palette p{colour};
  std::ostringstream out;
  out << p.bold(fmt::format("cudojo check {}", report.stage)) << "  " << report.file << "\n";
  if (report.gpu) {
    out << fmt::format("  gpu      {} ({}, {} SMs, driver CUDA {}), measured peak read {:.0f} GB/s\n",
                       report.gpu->name, report.gpu->arch, report.gpu->sm_count, report.gpu->driver,
                       report.gpu->peak_read_gbps);
  }
  if (report.language == "python" || report.language == "rust") {
    // The front end's compile to PTX; the driver compiles the PTX for the GPU when it loads it.
    out << fmt::format("  compile  {} ({} to PTX for {}, {:.0f} ms)\n",
                       report.compile.ok ? p.good("ok") : p.bad("failed"),
                       report.language == "python" ? "Python via Numba" : "Rust via rustc",
                       report.compile.arch, report.compile.compile_ms);
  } else if (!report.compile.nvrtc.empty()) {
    out << fmt::format("  compile  {} ({}, NVRTC {}, {:.0f} ms)\n",
                       report.compile.ok ? p.good("ok") : p.bad("failed"), report.compile.arch,
                       report.compile.nvrtc, report.compile.compile_ms);
  } else if (!report.compile.ok) {
    out << "  compile  " << p.bad("failed") << "\n";
  }
  // Every diagnostic, also of a compile that passed (its warnings): severity, file:line:column,
  // the message, and under it the compiler's excerpt (the source line and a caret).
  for (const auto& d : report.compile.diagnostics) {
    const std::string where = d.line <= 0    ? d.file
                              : d.column > 0 ? fmt::format("{}:{}:{}", d.file, d.line, d.column)
                                             : fmt::format("{}:{}", d.file, d.line);
    const std::string severity = d.severity.find("error") != std::string::npos ? p.bad(d.severity)
                                 : d.severity == "warning"                     ? p.warn(d.severity)
                                                                               : p.dim(d.severity);
    out << fmt::format("    {} {}: {}\n", severity, where, d.message);
    std::istringstream context(d.context);
    for (std::string line; std::getline(context, line);) out << "        " << p.dim("| ") << line << "\n";
  }
  if (!report.compile.ok && report.compile.diagnostics.empty()) out << report.compile.log << "\n";

  if (!report.tests.empty()) {
    int passed = 0;
    for (const auto& t : report.tests) passed += t.ok ? 1 : 0;
    out << "\n" << p.bold(fmt::format("Tests  {} of {} passed", passed, report.tests.size())) << "\n";
    out << p.dim(fmt::format("    {:<26} {:>18} {:>18}  {}\n", "case", "expected", "got", "rule"));
    for (const auto& t : report.tests) {
      out << fmt::format("  {} {:<26} {:>18} {:>18}  {}\n", t.ok ? p.good("✓") : p.bad("✗"), t.name,
                         format_value(t.expected), format_value(t.got), p.dim(t.detail));
    }
  }

  if (!report.findings.empty()) {
    out << "\n" << p.bold("Findings") << "\n";
    for (const auto& f : report.findings) {
      const std::string line = f.line ? fmt::format(" (line {})", *f.line) : "";
      out << fmt::format("  {}{}: {}\n", p.bad(f.code), line, f.message);
    }
  }

  if (report.sanitizer.requested) {
    out << "\n" << p.bold("Sanitizers") << "  ";
    if (!report.sanitizer.ran) {
      out << p.warn("did not run") << ": " << report.sanitizer.note << "\n";
    } else {
      for (const auto& tool : report.sanitizer.tools) {
        out << fmt::format(
            "{} {} ({:.1f} s)   ", tool.tool,
            tool.errors == 0 ? p.good("clean") : p.bad(fmt::format("{} error(s)", tool.errors)),
            tool.seconds);
      }
      for (const auto& tool : report.sanitizer.skipped) {
        out << fmt::format(
            "{} {}   ", tool,
            p.dim(tool == "synccheck" ? "not needed (no barrier or warp-synchronous instruction)"
                                      : "not needed (no shared memory)"));
      }
      out << "\n";
    }
  }

  if (report.barrier_check.ran || !report.barrier_check.note.empty()) {
    out << "\n" << p.bold("Barriers") << "    ";
    if (!report.barrier_check.ran) {
      out << p.warn("not checked") << ": " << report.barrier_check.note << "\n";
    } else if (report.barrier_check.arrivals == 0) {
      out << "no __syncthreads() ran\n";
    } else {
      const bool divergent = std::any_of(report.findings.begin(), report.findings.end(),
                                         [](const Finding& f) { return f.code == "divergent_barrier"; });
      out << (divergent ? p.bad("reached by part of a block") : p.good("every thread reached every barrier"))
          << p.dim(fmt::format("  ({} arrivals counted at n={})", report.barrier_check.arrivals,
                               report.barrier_check.n))
          << "\n";
    }
    if (report.barrier_check.ran && report.barrier_check.collective_checks > 0) {
      const bool gone = std::any_of(report.findings.begin(), report.findings.end(),
                                    [](const Finding& f) { return f.code == "mask_names_gone_lanes"; });
      out << p.bold("Warp masks") << "  "
          << (gone ? p.bad("a mask named lanes that had left") : p.good("every lane a mask named was there"))
          << p.dim(fmt::format("  ({} lane checks at n={})", report.barrier_check.collective_checks,
                               report.barrier_check.n))
          << "\n";
    }
  }

  if (!report.determinism.empty()) {
    out << "\n" << p.bold("Determinism") << p.dim("  (informational on inexact data)") << "\n";
    for (const auto& d : report.determinism) {
      out << fmt::format("  {:<14} n={:<9} {} runs, {} distinct answer(s), min {:.9g}, max {:.9g}\n", d.data,
                         d.n, d.runs, d.distinct, d.min, d.max);
    }
  }

  const Metrics& m = report.metrics;
  if (!m.time_ms && !m.note.empty()) {
    out << "\n" << p.bold("Timing") << "  " << p.dim(m.note) << "\n";
  } else if (m.time_ms) {
    out << "\n" << p.bold(fmt::format("Timing  n = {}", m.n)) << "\n";
    if (m.time_ms) {
      out << fmt::format("  submission  median {:9.4f} ms  (min {:.4f}, max {:.4f}, {} samples)",
                         m.time_ms->median_ms, m.time_ms->min_ms, m.time_ms->max_ms, m.time_ms->samples);
      if (m.bandwidth_gbps) out << fmt::format("  {:7.1f} GB/s", *m.bandwidth_gbps);
      if (m.pct_of_peak) out << fmt::format("  {:5.1f}% of peak", *m.pct_of_peak);
      out << "\n";
    }
    if (m.reference_time_ms) {
      out << fmt::format("  reference   median {:9.4f} ms  (min {:.4f}, max {:.4f}, {} samples)\n",
                         m.reference_time_ms->median_ms, m.reference_time_ms->min_ms,
                         m.reference_time_ms->max_ms, m.reference_time_ms->samples);
    }
    if (m.time_ratio) out << fmt::format("  ratio       {:.2f} x the reference\n", *m.time_ratio);
    if (m.baseline_time_ms) {
      out << fmt::format("  baseline    median {:9.4f} ms  (min {:.4f}, max {:.4f}, {} samples)  {}\n",
                         m.baseline_time_ms->median_ms, m.baseline_time_ms->min_ms,
                         m.baseline_time_ms->max_ms, m.baseline_time_ms->samples, m.baseline_name);
    }
    if (m.baseline_ratio)
      out << fmt::format("  ratio       {:.2f} x {}\n", *m.baseline_ratio, m.baseline_name);
    if (m.kernel) {
      auto shown = [](double value, const char* format) {
        return std::isnan(value) ? std::string("n/a") : fmt::format(fmt::runtime(format), value);
      };
      out << fmt::format("  profiler ({})  SM throughput {}  DRAM {}  global atomics {}", m.metrics_source,
                         shown(m.kernel->sm_throughput_pct, "{:.1f}%"),
                         shown(m.kernel->dram_throughput_pct, "{:.1f}%"),
                         shown(m.kernel->global_atomics, "{:.0f}"));
      if (m.reference_kernel) {
        out << fmt::format("   reference: {}  {}  {}",
                           shown(m.reference_kernel->sm_throughput_pct, "{:.1f}%"),
                           shown(m.reference_kernel->dram_throughput_pct, "{:.1f}%"),
                           shown(m.reference_kernel->global_atomics, "{:.0f}"));
      }
      out << "\n";
      if (!m.metrics_note.empty()) out << "  " << p.dim(m.metrics_note) << "\n";
    } else if (!m.metrics_note.empty()) {
      out << "  " << p.dim(m.metrics_note) << "\n";
    }
    if (!m.note.empty()) out << "  " << p.dim(m.note) << "\n";
  }
  const CalibrationUse& c = report.calibration;
  if (!c.previous_stage.empty() && c.previous_reference_time_ms) {
    out << fmt::format("  previous stage {} on this GPU: reference {:.4f} ms", c.previous_stage,
                       c.previous_reference_time_ms->median_ms);
    if (c.previous_bandwidth_gbps) out << fmt::format(", {:.0f} GB/s", *c.previous_bandwidth_gbps);
    if (c.previous_sm_throughput_pct)
      out << fmt::format(", SM throughput {:.1f}%", *c.previous_sm_throughput_pct);
    out << "\n";
  }
  if (!c.file.empty())
    out << "  " << p.dim(fmt::format("gate reference: calibrated {} ({})", c.file, c.measured_at)) << "\n";
  if (!c.note.empty()) out << "  " << p.dim(c.note) << "\n";
  if (report.gate) {
    out << fmt::format("\n{}  {}  {}\n", p.bold("Gate"), report.gate->rule,
                       report.gate->passed ? p.good("passed") : p.warn("not passed"));
  }
  if (report.hot_spots) {
    const HotSpots& hot = *report.hot_spots;
    out << "\n"
        << p.bold("Hot spots") << "  where the timed launch's warps were found, line by line (ncu samples)\n";
    const std::size_t shown = std::min<std::size_t>(5, hot.lines.size());
    for (std::size_t i = 0; i < shown; ++i) {
      const HotLine& line = hot.lines[i];
      if (line.share < 0.001) break;  // hottest first: the rest are noise
      out << fmt::format("  {:>5.1f}%  line {:<4} {}\n", 100 * line.share, line.line, line.text);
      if (!line.stall.empty())
        out << "         "
            << p.dim(fmt::format("{:.0f}% {}", 100 * line.stall_share, describe_stall(line.stall))) << "\n";
    }
    if (hot.drain_samples > 0)
      out << "  "
          << p.dim(
                 "samples of warps that had finished and waited for their writes are counted on the lines "
                 "that write")
          << "\n";
    if (!hot.note.empty()) out << "  " << p.dim(hot.note) << "\n";
  }
  if (!report.output.text.empty()) {
    out << "\n"
        << p.bold(fmt::format("Output  (device printf, {} bytes{})", report.output.bytes,
                              report.output.truncated ? ", truncated" : ""))
        << "\n";
    std::istringstream lines(report.output.text);
    std::string line;
    int shown = 0;
    while (std::getline(lines, line) && shown < 20) {
      out << "  | " << line << "\n";
      ++shown;
    }
    if (shown == 20) out << p.dim("  | ... (more in --json)") << "\n";
    if (!report.output.note.empty()) out << "  " << p.dim(report.output.note) << "\n";
  }
  out << "\n" << p.bold("Verdict") << "  " << verdict_banner(report, p);
  if (!report.message.empty()) out << "  " << report.message;
  out << "\n";
  if (report.stage_version) {
    out << p.dim(fmt::format("judged under {} version {} (seed {})", report.stage,
                             report.stage_version->digest, report.seed))
        << "\n";
  }
  return out.str();
}

}  // namespace cudojo
