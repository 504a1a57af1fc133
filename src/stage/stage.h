// A stage is data: a folder under course/<track>/ holding stage.toml, lesson.md, starter.cu and
// reference.cu. The stage file names a contract (code, written once) and the sizes, data and gate
// that contract is driven with. Adding a stage on an existing contract needs no C++ change.
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

// A stage file that cannot be used; the message names the file and the field.
class StageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LaunchShape {
  int threads_per_block = 256;
  int dynamic_shared_bytes = 0;
  // Set for contracts with a fixed grid (the counter); unset means ceil(N / threads_per_block).
  std::optional<int> fixed_blocks;
};

enum class GateRule { kCorrectness, kTimeRatio };

struct GateSpec {
  GateRule rule = GateRule::kCorrectness;
  // With kTimeRatio: the submission's median time may be at most this many times the reference's.
  double max_time_ratio = 2.0;
  // When profiler metrics exist: SM throughput must be at least this fraction of the reference's
  // on the same GPU (the course's 50% gate against its 91% reference: 50/91).
  std::optional<double> min_sm_throughput_ratio;
};

struct Stage {
  std::string id;    // "reduction/3"
  std::string slug;  // "block-tree"; "reduction/block-tree" is an alias of the id
  std::string title;
  std::string summary;
  std::string contract;
  std::string kernel;
  LaunchShape launch;
  std::vector<std::int64_t> test_sizes;
  std::vector<std::string> data_sets;
  std::int64_t performance_size = 0;
  // How many times the determinism and race checks repeat a launch.
  int runs = 5;
  GateSpec gate;

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

// Loads one stage folder; throws StageError with the file and field on any problem.
Stage load_stage(const std::filesystem::path& directory);

// Every stage under course_root/<track>/<NN-name>/, ordered by folder name.
std::vector<Stage> load_course(const std::filesystem::path& course_root);

// Finds by id ("reduction/3") or slug alias ("reduction/block-tree"); nullptr when neither matches.
const Stage* find_stage(const std::vector<Stage>& course, const std::string& id_or_alias);

// One-line descriptions shared by the CLI and the server ("ceil(N / 256) blocks x 256 threads, ...").
std::string describe_signature(const Stage& stage, Language language = Language::kCuda);
std::string describe_launch(const Stage& stage);
std::string describe_gate(const Stage& stage);

// The course folder: --course if given, else $CUDOJO_COURSE, else the one shipped with the build.
std::filesystem::path default_course_root();

// Stages travel to the worker as JSON; the sources stay behind except where the job needs them.
void to_json(nlohmann::json& j, const Stage& stage);
void from_json(const nlohmann::json& j, Stage& stage);

}  // namespace cudojo
