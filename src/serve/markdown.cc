#include "serve/markdown.h"

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

namespace cudojo {

std::string markdown_to_html(const std::string& markdown) {
  // GitHub's extensions: the lessons' tables, and strikethrough. Registered once per process.
  static std::once_flag registered;
  std::call_once(registered, [] { cmark_gfm_core_extensions_ensure_registered(); });
  std::unique_ptr<cmark_parser, decltype(&cmark_parser_free)> parser(cmark_parser_new(CMARK_OPT_DEFAULT),
                                                                     &cmark_parser_free);
  for (const char* name : {"table", "strikethrough"}) {
    if (cmark_syntax_extension* extension = cmark_find_syntax_extension(name)) {
      cmark_parser_attach_syntax_extension(parser.get(), extension);
    }
  }
  cmark_parser_feed(parser.get(), markdown.data(), markdown.size());
  std::unique_ptr<cmark_node, decltype(&cmark_node_free)> document(cmark_parser_finish(parser.get()),
                                                                   &cmark_node_free);
  if (!document) return {};
  // CMARK_OPT_DEFAULT leaves out CMARK_OPT_UNSAFE: raw HTML in a lesson is dropped, not passed on.
  std::unique_ptr<char, decltype(&std::free)> html(
      cmark_render_html(document.get(), CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser.get())),
      &std::free);
  return html ? std::string(html.get()) : std::string();
}

// --- Figures -------------------------------------------------------------------------------------

namespace {

using nlohmann::json;

// SM counts of the models a class is likely to judge on. Calibration files record the GPU's name
// but (before `sm_count` was added to them) not its SM count, which the fixed-grid stages'
// lessons need; a file's own "sm_count" wins.
std::optional<int> known_sm_count(const std::string& gpu) {
  static const std::pair<const char*, int> kModels[] = {{"H200", 132},      {"H100 80GB HBM3", 132},
                                                        {"H100 PCIe", 114}, {"A100", 108},
                                                        {"L40S", 142},      {"L4", 58},
                                                        {"A10G", 80},       {"T4", 40}};
  for (const auto& [model, sms] : kModels) {
    if (gpu.find(model) != std::string::npos) return sms;
  }
  return std::nullopt;
}

const json* find_key(const json* object, const char* key) {
  if (!object || !object->is_object()) return nullptr;
  const auto found = object->find(key);
  return found == object->end() || found->is_null() ? nullptr : &*found;
}

std::optional<double> number_at(const json* object, const char* key) {
  const json* value = find_key(object, key);
  return value && value->is_number() ? std::optional<double>(value->get<double>()) : std::nullopt;
}

// 16777216 -> "16,777,216".
std::string with_thousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(at, ",");
  return value < 0 ? "-" + digits : digits;
}

// Three significant digits, as the lessons quote times: 2.07, 0.0538, 0.234.
std::string milliseconds(double ms) { return fmt::format("{:.3g}", ms); }
std::string gigabytes_per_second(double gbps) {
  return gbps < 10 ? fmt::format("{:.1f}", gbps) : fmt::format("{:.0f}", gbps);
}

// One calibration file, read for one stage.
struct CalibrationView {
  const json* file = nullptr;
  const json* stage = nullptr;  // its figures for the stage, when measured at the stage's size
  const Stage* of = nullptr;

  std::optional<int> sm_count() const {
    if (auto sms = number_at(file, "sm_count")) return static_cast<int>(*sms);
    const json* gpu = find_key(file, "gpu");
    return gpu && gpu->is_string() ? known_sm_count(gpu->get<std::string>()) : std::nullopt;
  }
  std::optional<double> peak() const {
    auto peak = number_at(file, "peak_read_gbps");
    return peak && *peak > 0 ? peak : std::nullopt;
  }
  std::optional<double> reference_ms(const char* statistic) const {
    return number_at(find_key(stage, "reference_time_ms"), statistic);
  }
  std::optional<std::int64_t> n() const {
    auto n = number_at(stage, "n");
    return n ? std::optional<std::int64_t>(static_cast<std::int64_t>(*n)) : std::nullopt;
  }

  // The placeholder's text, or nullopt when this file cannot give it.
  std::optional<std::string> figure(const std::string& name) const {
    if (name == "gpu") {
      const json* gpu = find_key(file, "gpu");
      return gpu && gpu->is_string() ? std::optional<std::string>(gpu->get<std::string>()) : std::nullopt;
    }
    if (name == "gpu.calibrated_on") {
      const json* at = find_key(file, "measured_at");
      return at && at->is_string() ? std::optional<std::string>(at->get<std::string>().substr(0, 10))
                                   : std::nullopt;
    }
    if (name == "gpu.peak_read_gbps") {
      auto peak = this->peak();
      return peak ? std::optional<std::string>(gigabytes_per_second(*peak)) : std::nullopt;
    }
    if (name == "gpu.sm_count") {
      auto sms = sm_count();
      return sms ? std::optional<std::string>(std::to_string(*sms)) : std::nullopt;
    }
    if (name == "grid.blocks" || name == "grid.threads") {
      auto sms = sm_count();
      if (!sms || !of->launch.blocks_per_sm) return std::nullopt;
      std::int64_t blocks = std::int64_t{*sms} * *of->launch.blocks_per_sm;
      return with_thousands(name == "grid.blocks" ? blocks : blocks * of->launch.threads_per_block);
    }
    if (!stage) return std::nullopt;
    if (name == "ref.n") {
      auto n = this->n();
      return n ? std::optional<std::string>(with_thousands(*n)) : std::nullopt;
    }
    if (name == "ref.bytes") {  // what the reference reads: n elements of 4 bytes
      auto n = this->n();
      return n ? std::optional<std::string>(with_thousands(*n * 4)) : std::nullopt;
    }
    if (name == "ref.floor_ms") {  // the napkin floor: those bytes at the peak read bandwidth
      auto n = this->n();
      auto peak = this->peak();
      return n && peak ? std::optional<std::string>(milliseconds(*n * 4.0 / (*peak * 1e6))) : std::nullopt;
    }
    for (const auto& [key, statistic] : {std::pair{"ref.median_ms", "median"}, std::pair{"ref.min_ms", "min"},
                                         std::pair{"ref.max_ms", "max"}}) {
      if (name == key) {
        auto ms = reference_ms(statistic);
        return ms ? std::optional<std::string>(milliseconds(*ms)) : std::nullopt;
      }
    }
    if (name == "ref.samples") {
      auto samples = reference_ms("samples");
      return samples ? std::optional<std::string>(std::to_string(static_cast<int>(*samples))) : std::nullopt;
    }
    if (name == "ref.gbps" || name == "ref.pct_of_peak") {
      auto gbps = number_at(stage, "bandwidth_gbps");
      if (!gbps) return std::nullopt;
      if (name == "ref.gbps") return gigabytes_per_second(*gbps);
      auto peak = this->peak();
      return peak ? std::optional<std::string>(fmt::format("{:.1f}", 100 * *gbps / *peak)) : std::nullopt;
    }
    if (name == "baseline.median_ms") {
      auto ms = number_at(find_key(stage, "baseline_time_ms"), "median");
      return ms ? std::optional<std::string>(milliseconds(*ms)) : std::nullopt;
    }
    return std::nullopt;
  }
};

CalibrationView view_of(const json* file, const Stage& stage) {
  CalibrationView view{file, nullptr, &stage};
  if (const json* stages = find_key(file, "stages")) {
    const json* figures = find_key(stages, stage.id.c_str());
    // Figures measured at another size are not this stage's any more (as the gate reads them).
    if (figures && number_at(figures, "n") == static_cast<double>(stage.performance_size))
      view.stage = figures;
  }
  return view;
}

bool fills_all(const CalibrationView& view, const std::set<std::string>& names) {
  if (!view.file) return false;
  for (const std::string& name : names) {
    if (!view.figure(name)) return false;
  }
  return true;
}

// Where the note says the figures are from, in the reader's terms.
std::string figures_note(const LessonFigures& figures, const LessonFigureSources& sources) {
  if (figures.gpu.empty()) {
    return "*No GPU's figures could be filled in for this lesson: there is no calibration for it on this "
           "server (`cudojo calibrate` makes one).*";
  }
  const std::string when = figures.calibrated_on.empty() ? "" : ", calibrated on " + figures.calibrated_on;
  if (!figures.example)
    return fmt::format("*Figures in this lesson are from this server's {}{}.*", figures.gpu, when);
  std::string why;
  if (!sources.judging_gpu) {
    why = ".";
  } else if (sources.judging_gpu->empty()) {
    why = ": no GPU judges on this server yet.";
  } else if (sources.judging_calibration) {
    why = fmt::format(": this server judges on the {}, whose calibration does not cover this stage.",
                      *sources.judging_gpu);
  } else {
    why = fmt::format(": this server judges on the {}, which has not been calibrated yet.",
                      *sources.judging_gpu);
  }
  return fmt::format("*Figures in this lesson are from the {}{}, as an example{}*", figures.gpu, when, why);
}

// The note goes under the lesson's title (its first line, when that is a heading).
std::string with_note(const std::string& markdown, const std::string& note) {
  const std::string paragraph = "> " + note + "\n\n";
  if (markdown.rfind("# ", 0) == 0) {
    const std::size_t end = markdown.find('\n');
    if (end == std::string::npos) return markdown + "\n\n" + paragraph;
    const std::size_t rest = markdown.find_first_not_of('\n', end);
    return markdown.substr(0, end + 1) + "\n" + paragraph +
           (rest == std::string::npos ? "" : markdown.substr(rest));
  }
  return paragraph + markdown;
}

}  // namespace

LessonFigures fill_lesson_figures(const Stage& stage, const LessonFigureSources& sources) {
  LessonFigures figures;
  const std::string& markdown = stage.lesson_markdown;
  std::set<std::string> names;
  for (auto it = std::sregex_iterator(markdown.begin(), markdown.end(), lesson_figure_pattern());
       it != std::sregex_iterator(); ++it) {
    if (is_lesson_figure_name((*it)[1].str())) names.insert((*it)[1].str());
  }
  if (names.empty()) {
    figures.markdown = markdown;
    return figures;
  }
  // One GPU's figures for the whole lesson: the judging GPU's when its file gives every one.
  const CalibrationView judging = view_of(sources.judging_calibration, stage);
  const CalibrationView example = view_of(sources.example_calibration, stage);
  const CalibrationView* chosen = fills_all(judging, names)   ? &judging
                                  : fills_all(example, names) ? &example
                                                              : nullptr;
  if (chosen) {
    figures.gpu = chosen->figure("gpu").value_or("");
    figures.calibrated_on = chosen->figure("gpu.calibrated_on").value_or("");
    figures.example = chosen == &example;
  }
  std::string filled;
  auto last = markdown.cbegin();
  for (auto it = std::sregex_iterator(markdown.begin(), markdown.end(), lesson_figure_pattern());
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1].str();
    filled.append(last, (*it)[0].first);
    if (!is_lesson_figure_name(name)) {
      filled += (*it)[0].str();  // left as written: `cudojo course check` reports it
    } else {
      filled += chosen ? chosen->figure(name).value_or("?") : "(not calibrated)";
    }
    last = (*it)[0].second;
  }
  filled.append(last, markdown.cend());
  figures.note = figures_note(figures, sources);
  figures.markdown = with_note(filled, figures.note);
  return figures;
}

}  // namespace cudojo
