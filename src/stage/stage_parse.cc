// Reading stage folders and the course, strictly: every key of stage.toml and course.toml is known
// (stage_schema.h), so a misspelt key, a misspelt table or a wrong type is an error at its line,
// never a default silently used. One folder's problems are gathered together (a stage file with
// three slips says all three), and a broken stage is set aside with them while the rest loads.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>

#include "stage/contract_info.h"
#include "stage/kernel_scan.h"
#include "stage/stage.h"
#include "stage/stage_parse_internal.h"
#include "stage/stage_schema.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

int line_of(const toml::node& node) { return static_cast<int>(node.source().begin.line); }

// What a value is, for "must be an integer, not a string ("5")".
std::string describe_node(const toml::node& node) {
  std::ostringstream value;
  if (node.is_string()) return fmt::format("a string (\"{}\")", **node.as_string());
  if (node.is_integer()) return fmt::format("an integer ({})", **node.as_integer());
  if (node.is_floating_point())
    return fmt::format("a floating-point number ({:g})", **node.as_floating_point());
  if (node.is_boolean()) return fmt::format("a boolean ({})", **node.as_boolean());
  if (node.is_array()) return node.as_array()->is_array_of_tables() ? "an array of tables" : "an array";
  if (node.is_table()) return "a table";
  return "a date or time";
}

bool element_fits(const toml::node& node, ValueKind kind) {
  switch (kind) {
    case ValueKind::kString:
      return node.is_string();
    case ValueKind::kInteger:
      return node.is_integer();
    case ValueKind::kNumber:
      return node.is_integer() || node.is_floating_point();
    case ValueKind::kBoolean:
      return node.is_boolean();
    case ValueKind::kTable:
      return node.is_table();
    case ValueKind::kIntegers:
    case ValueKind::kStrings:
      return node.is_array();
  }
  return false;
}

}  // namespace

void FileReport::add(int line, std::string key, std::string message) {
  problems_.push_back({file_, line, std::move(key), std::move(message)});
}

void FileReport::add_at(const std::string& key, std::string message) {
  // A key already reported (a wrong type, a missing table) is not reported again for its value.
  for (const auto& problem : problems_) {
    if (problem.file == file_ && !problem.key.empty() &&
        (problem.key == key || key.starts_with(problem.key + "."))) {
      return;
    }
  }
  auto found = lines.find(key);
  if (found == lines.end()) found = lines.find(key.substr(0, key.find('.')));  // the table's line
  add(found == lines.end() ? 0 : found->second, key, std::move(message));
}

void check_table(const toml::table& table, std::string_view table_name, std::span<const KeySpec> schema,
                 FileReport& report) {
  std::vector<std::string> names;
  for (const auto& spec : schema) {
    if (spec.table == table_name) names.emplace_back(spec.name);
  }
  const std::string where =
      table_name.empty() ? "at the top of the file" : fmt::format("in [{}]", table_name);
  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const std::string qualified = table_name.empty() ? name : fmt::format("{}.{}", table_name, name);
    const int line = static_cast<int>(key.source().begin.line);
    const auto spec = std::find_if(schema.begin(), schema.end(),
                                   [&](const KeySpec& s) { return s.table == table_name && s.name == name; });
    if (spec == schema.end()) {
      const bool is_table = node.is_table() && table_name.empty();
      std::string message = is_table ? fmt::format("unknown table [{}]", name)
                                     : fmt::format("unknown key '{}' {}", name, where);
      if (auto hint = closest_name(name, names)) {
        message += is_table ? fmt::format("; did you mean [{}]?", *hint)
                            : fmt::format("; did you mean '{}'?", *hint);
      } else if (auto elsewhere = std::find_if(schema.begin(), schema.end(),
                                               [&](const KeySpec& s) { return s.name == name; });
                 elsewhere != schema.end()) {
        message += elsewhere->table.empty() ? "; it belongs at the top of the file, before any [table]"
                                            : fmt::format("; it belongs in [{}]", elsewhere->table);
      } else {
        message += fmt::format(" (the keys here: {}; docs/stages.md)", fmt::join(names, ", "));
      }
      report.add(line, qualified, message);
      continue;
    }
    report.lines[qualified] = line;
    if (!element_fits(node, spec->kind)) {
      report.add(line, qualified,
                 fmt::format("{} must be {}, not {}", qualified, kind_name(spec->kind), describe_node(node)));
      continue;
    }
    if (spec->kind == ValueKind::kTable) {
      check_table(*node.as_table(), name, schema, report);
    } else if (spec->kind == ValueKind::kIntegers || spec->kind == ValueKind::kStrings) {
      const ValueKind element = spec->kind == ValueKind::kIntegers ? ValueKind::kInteger : ValueKind::kString;
      for (const auto& item : *node.as_array()) {
        if (!element_fits(item, element)) {
          report.add(line_of(item), qualified,
                     fmt::format("{} must be {}; this element is {}", qualified, kind_name(spec->kind),
                                 describe_node(item)));
          break;
        }
      }
    }
  }
  for (const auto& spec : schema) {
    if (spec.table == table_name && spec.required && !table.contains(spec.name)) {
      report.add(table_name.empty() ? 0 : line_of(table), spec.qualified(),
                 spec.kind == ValueKind::kTable ? fmt::format("table [{}] is missing", spec.name)
                                                : fmt::format("key '{}' is missing {}", spec.name, where));
    }
  }
}

std::optional<toml::table> parse_toml(const fs::path& file, FileReport& report) {
  try {
    return toml::parse_file(file.string());
  } catch (const toml::parse_error& error) {
    report.add(static_cast<int>(error.source().begin.line), "", std::string(error.description()));
  }
  return std::nullopt;
}

namespace {

// course.toml: the tracks' order. Any problem here is the whole course's.
std::vector<std::string> read_course_file(const fs::path& course_root) {
  const fs::path file = course_root / "course.toml";
  if (!fs::exists(file)) return {};
  std::vector<StageProblem> problems;
  FileReport report(file, problems);
  std::vector<std::string> tracks;
  if (auto table = parse_toml(file, report)) {
    check_table(*table, "", course_file_keys(), report);
    if (const toml::array* listed = (*table)["tracks"].as_array()) {
      for (const auto& track : *listed) {
        const std::string name = track.value_or(std::string{});
        if (name.empty()) continue;  // the type was reported above
        std::error_code error;
        if (std::find(tracks.begin(), tracks.end(), name) != tracks.end()) {
          report.add(line_of(track), "tracks", fmt::format("tracks names '{}' twice", name));
        } else if (!fs::is_directory(course_root / name, error)) {
          report.add(
              line_of(track), "tracks",
              fmt::format("tracks names '{}', which is not a folder of {}", name, course_root.string()));
        }
        tracks.push_back(name);
      }
    }
  }
  if (!problems.empty()) throw StageError(std::move(problems));
  return tracks;
}

bool hidden(const fs::path& path) { return path.filename().string().starts_with("."); }

// "03-block-tree": a folder meant as a stage, whether or not its stage.toml is there.
bool numbered(const fs::path& path) {
  const std::string name = path.filename().string();
  std::size_t digits = 0;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  return digits > 0 && digits < name.size() && name[digits] == '-';
}

}  // namespace

Stage load_stage(const fs::path& directory) {
  StageLoad loaded = load_stage_folder(directory);
  if (!loaded.problems.empty()) throw StageError(std::move(loaded.problems));
  return std::move(*loaded.stage);
}

Course load_course_report(const fs::path& course_root) {
  if (!fs::is_directory(course_root)) {
    throw StageError(
        fmt::format("course folder {} does not exist (set --course or CUDOJO_COURSE)", course_root.string()));
  }
  // The tracks' order is the course's (course.toml `tracks`); tracks it does not name follow, by
  // name. Within a track, stages go by folder name (01-..., 02-...).
  const std::vector<std::string> track_order = read_course_file(course_root);
  auto track_rank = [&](const fs::path& stage_dir) {
    const std::string track = stage_dir.parent_path().filename().string();
    const auto found = std::find(track_order.begin(), track_order.end(), track);
    return std::make_pair(static_cast<std::size_t>(found - track_order.begin()), stage_dir);
  };
  std::vector<fs::path> stage_dirs;
  for (const auto& track : fs::directory_iterator(course_root)) {
    if (!track.is_directory() || hidden(track.path())) continue;
    for (const auto& entry : fs::directory_iterator(track.path())) {
      if (entry.is_directory() && !hidden(entry.path()) &&
          (fs::exists(entry.path() / "stage.toml") || numbered(entry.path()))) {
        stage_dirs.push_back(entry.path());
      }
    }
  }
  std::sort(stage_dirs.begin(), stage_dirs.end(),
            [&](const fs::path& a, const fs::path& b) { return track_rank(a) < track_rank(b); });
  Course course;
  for (const auto& dir : stage_dirs) {
    StageLoad loaded = load_stage_folder(dir);
    if (loaded.problems.empty()) {
      // The first folder keeps an id or slug; a later one that repeats it is the broken one (most
      // often a copied folder whose stage.toml was not edited yet).
      const Stage& stage = *loaded.stage;
      const auto earlier = std::find_if(course.stages.begin(), course.stages.end(), [&](const Stage& s) {
        return s.id == stage.id || s.slug_id() == stage.slug_id();
      });
      if (earlier == course.stages.end()) {
        course.stages.push_back(std::move(*loaded.stage));
        continue;
      }
      const bool same_id = earlier->id == stage.id;
      loaded.problems.push_back(
          {dir / "stage.toml", same_id ? loaded.id_line : loaded.slug_line, same_id ? "id" : "slug",
           fmt::format("{} '{}' is already {}'s ({}): give this stage its own", same_id ? "id" : "slug",
                       same_id ? stage.id : stage.slug, earlier->id, earlier->directory.string())});
    }
    course.broken.push_back({dir, loaded.id, loaded.slug, std::move(loaded.problems)});
  }
  return course;
}

std::vector<Stage> load_course(const fs::path& course_root) { return load_course_report(course_root).stages; }

}  // namespace cudojo
