#include "run/stage_version.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "check/datasets.h"
#include "stage/language.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

// The first 8 bytes of SHA-256, as 16 hex digits: enough to tell versions of one stage apart.
std::string short_digest(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr) != 1 || length < 8) {
    throw std::runtime_error("SHA-256 failed while computing a stage version");
  }
  std::string hex;
  for (unsigned int i = 0; i < 8; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

// Each part is framed by its name and length, so moving bytes between two files changes the digest.
void add_part(std::string& into, std::string_view name, std::string_view content) {
  into += fmt::format("{}\n{}\n", name, content.size());
  into.append(content);
  into += "\n";
}

void add_file(std::string& into, const fs::path& file, std::string_view name) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    add_part(into, name, "(absent)");
    return;
  }
  std::ostringstream text;
  text << in.rdbuf();
  add_part(into, name, text.str());
}

// This stage's entry from every calibration file in the folder, by file name. Only the stage's own
// entry counts: recalibrating one stage leaves the others' versions alone.
std::string calibration_part(const std::string& stage_id, const fs::path& dir) {
  std::error_code error;
  if (dir.empty() || !fs::is_directory(dir, error)) return "none";
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::string joined;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    const nlohmann::json parsed = nlohmann::json::parse(in, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      add_part(joined, file.filename().string(), "(unreadable)");
      continue;
    }
    const auto stages = parsed.find("stages");
    if (stages == parsed.end() || !stages->is_object() || !stages->contains(stage_id)) continue;
    add_part(joined, file.filename().string(), stages->at(stage_id).dump());
  }
  return joined.empty() ? "none" : short_digest(joined);
}

}  // namespace

StageVersion compute_stage_version(const Stage& stage, const fs::path& calibration_dir) {
  StageVersion version;
  std::string files;
  add_part(files, "id", stage.id);
  add_file(files, stage.directory / "stage.toml", "stage.toml");
  for (const Language language : all_languages()) {
    const std::string name = "reference" + std::string(source_extension(language));
    add_file(files, stage.directory / name, name);
  }
  version.stage_files = short_digest(files);
  version.calibration = calibration_part(stage.id, calibration_dir);
  version.data_generator = kDataGeneratorVersion;
  version.judge_rules = kJudgeRulesVersion;
  version.digest = short_digest(fmt::format("{} {} {} {}", version.stage_files, version.calibration,
                                            version.data_generator, version.judge_rules));
  return version;
}

}  // namespace cudojo
