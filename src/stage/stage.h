// A stage is data: a folder under course/<track>/ holding stage.toml, lesson.md, starter.cu and
// reference.cu (and starter.py/reference.py, starter.rs/reference.rs in pairs). The stage file names a
// contract (code, written once) and the sizes, data and gate that contract is driven with. Adding a
// stage on an existing contract needs no C++ change. docs/stages.md documents every key and file.
// Reading is strict (stage_parse.cc): an unknown key or a wrong type is an error at its line, and a
// broken stage is set aside with its reasons (load_course_report) instead of stopping the others.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "stage/language.h"

namespace cudojo {

// One thing wrong in a course's files, where its author fixes it.
struct StageProblem {
  std::filesystem::path file;
  int line = 0;          // 1-based; 0 when it concerns the whole file (a missing one, a missing key)
  std::string key;       // the key it concerns ("tests.runs"), when one
  std::string message;   // what is wrong and what to write instead
  bool warning = false;  // `course check` reports it without failing (a TODO(author) marker)

  // "file:line: message", or "file: message" without a line.
  std::string text() const;
};

// A stage or course file that cannot be used. what() names the file, the line and the key; a
// stage's error carries every problem found in its folder, not only the first.
class StageError : public std::runtime_error {
 public:
  explicit StageError(const std::string& message);
  explicit StageError(std::vector<StageProblem> problems);
  const std::vector<StageProblem>& problems() const { return problems_; }

 private:
  std::vector<StageProblem> problems_;
};

struct LaunchShape {
  int threads_per_block = 256;
  int dynamic_shared_bytes = 0;
  // Set for contracts with a fixed grid (the counter); unset means ceil(N / threads_per_block).
  std::optional<int> fixed_blocks;
  // A grid sized to the GPU: this many blocks per SM, whatever N is (kernels loop over the data
  // with a grid stride). Decided on the GPU that runs the check.
  std::optional<int> blocks_per_sm;
};

// kBaselineRatio: the submission's median time against a library baseline timed in the same run
// (CUB's DeviceReduce::Sum), not against the stage's reference.
enum class GateRule { kCorrectness, kTimeRatio, kBaselineRatio };

struct GateSpec {
  GateRule rule = GateRule::kCorrectness;
  // With kTimeRatio: the submission's median time may be at most this many times the reference's;
  // with kBaselineRatio, this many times the baseline's.
  double max_time_ratio = 2.0;
  // When profiler metrics exist: SM throughput must be at least this fraction of the reference's
  // on the same GPU (the course's 50% gate against its 91% reference: 50/91).
  std::optional<double> min_sm_throughput_ratio;
  // With kBaselineRatio: which baseline ("cub_reduce").
  std::string baseline;
};

struct Stage {
  std::string id;    // "reduction/3"
  std::string slug;  // "block-tree"; "reduction/block-tree" is an alias of the id
  std::string title;
  std::string summary;
  std::string contract;
  std::string kernel;
  // The second kernel of a two-kernel contract (launched after `kernel`, on one block); else empty.
  std::string second_kernel;
  LaunchShape launch;
  std::vector<std::int64_t> test_sizes;
  std::vector<std::string> data_sets;
  std::int64_t performance_size = 0;
  // How many times the determinism and race checks repeat a launch.
  int runs = 5;
  // Inexact data must then also give the same bits on every run (a deterministic sum).
  bool deterministic = false;
  // A bound on |error| / |sum| tighter than the course's tolerance rule (the precision stage).
  std::optional<double> max_relative_error;
  // The data set the timed launches use; empty: the contract's exact data (or its first data set).
  std::string timing_data;
  GateSpec gate;
  // The verdict the starter must get in every language (`[expect] starter`, checked by
  // `cudojo course check --gpu`); empty: any verdict but accepted.
  std::string expected_starter_verdict;

  std::string lesson_markdown;
  std::string starter_source;    // CUDA C++ (starter.cu)
  std::string reference_source;  // CUDA C++ (reference.cu): the kernel every language is timed against
  // The other languages' starters and references (starter.py, reference.rs, ...), when present.
  std::map<Language, std::string> other_starters;
  std::map<Language, std::string> other_references;
  std::filesystem::path directory;

  // nullptr when the stage has no starter (or reference) in that language.
  const std::string* starter(Language language) const;
  const std::string* reference(Language language) const;

  std::string track() const { return id.substr(0, id.find('/')); }
  std::string slug_id() const { return track() + "/" + slug; }
};

std::string to_string(GateRule rule);
std::optional<GateRule> parse_gate_rule(std::string_view word);

// The data set the timed launches use (tests.timing_data, else the contract's exact data set).
std::string timing_data_set(const Stage& stage);

// Loads one stage folder; throws StageError listing every problem (file, line, key) it finds.
Stage load_stage(const std::filesystem::path& directory);

// A stage folder that could not be loaded, and why.
struct BrokenStage {
  std::filesystem::path directory;
  std::string id;                      // from its stage.toml when that could be read; else empty
  std::string slug;                    // likewise
  std::vector<StageProblem> problems;  // at least one

  // "reduction/3", or the folder's track and number ("reduction/03-x" -> "reduction/3") without an id.
  std::string label() const;
  // Every problem, one "file:line: message" a line.
  std::string reason() const;
};

struct Course {
  std::vector<Stage> stages;        // the good ones, in course order
  std::vector<BrokenStage> broken;  // in folder order

  // The broken stage an id, slug alias or folder ("reduction/03-block-tree") names; nullptr if none.
  const BrokenStage* find_broken(const std::string& id_or_alias) const;
};

// Every stage under course_root/<track>/<NN-name>/: tracks in the order course_root/course.toml
// lists them (`tracks = [...]`; others after, by name), stages by folder name. A stage folder that
// fails to load (or repeats an earlier stage's id or slug) goes to `broken` with its problems and
// the others load. Throws StageError only for the course itself: no such folder, or a course.toml
// that cannot be read (with no order there is no course).
Course load_course_report(const std::filesystem::path& course_root);

// The good stages of load_course_report (for the server and the CLI).
std::vector<Stage> load_course(const std::filesystem::path& course_root);

// Finds by id ("reduction/3") or slug alias ("reduction/block-tree"); nullptr when neither matches.
const Stage* find_stage(const std::vector<Stage>& course, const std::string& id_or_alias);

// One-line descriptions shared by the CLI and the server ("ceil(N / 256) blocks x 256 threads, ...").
std::string describe_signature(const Stage& stage, Language language = Language::kCuda);
std::string describe_launch(const Stage& stage);
std::string describe_gate(const Stage& stage);
// A ratio as the README and the lessons write it: at most two decimals, no trailing zeros, an x
// after it: 0.5495 -> "0.55x", 2.0 -> "2x", 1.25 -> "1.25x", 0.004 -> "0.004x".
std::string format_ratio(double ratio);
// Sizes, data sets, the timed size and data, repeats, and any determinism or precision demand.
std::string describe_tests(const Stage& stage);

// The course folder: --course if given, else $CUDOJO_COURSE, else the one shipped with the build.
std::filesystem::path default_course_root();

// Stages travel to the worker as JSON; the sources stay behind except where the job needs them.
void to_json(nlohmann::json& j, const Stage& stage);
void from_json(const nlohmann::json& j, Stage& stage);

}  // namespace cudojo
