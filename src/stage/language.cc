#include "stage/language.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace cudojo {

namespace {
constexpr std::array kLanguages = {Language::kCuda, Language::kPython, Language::kRust};
}

std::span<const Language> all_languages() { return kLanguages; }

std::string_view to_string(Language language) {
  switch (language) {
    case Language::kCuda:
      return "cuda";
    case Language::kPython:
      return "python";
    case Language::kRust:
      return "rust";
  }
  return "cuda";
}

std::string_view display_name(Language language) {
  switch (language) {
    case Language::kCuda:
      return "CUDA C++";
    case Language::kPython:
      return "Python (Numba)";
    case Language::kRust:
      return "Rust (nvptx64)";
  }
  return "CUDA C++";
}

std::string_view source_extension(Language language) {
  switch (language) {
    case Language::kCuda:
      return ".cu";
    case Language::kPython:
      return ".py";
    case Language::kRust:
      return ".rs";
  }
  return ".cu";
}

std::string_view editor_mode(Language language) {
  switch (language) {
    case Language::kCuda:
      return "text/x-c++src";
    case Language::kPython:
      return "python";
    case Language::kRust:
      return "rust";
  }
  return "text/x-c++src";
}

std::optional<Language> parse_language(std::string_view word) {
  std::string lower(word);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "cuda" || lower == "cu" || lower == "c++" || lower == "cpp") return Language::kCuda;
  if (lower == "python" || lower == "py" || lower == "numba") return Language::kPython;
  if (lower == "rust" || lower == "rs") return Language::kRust;
  return std::nullopt;
}

std::optional<Language> language_from_path(const std::filesystem::path& path) {
  const std::string extension = path.extension().string();
  if (extension == ".cu" || extension == ".cuh") return Language::kCuda;
  if (extension == ".py") return Language::kPython;
  if (extension == ".rs") return Language::kRust;
  return std::nullopt;
}

std::string language_list() { return "cuda, python, rust"; }

}  // namespace cudojo
