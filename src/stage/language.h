// The languages a learner may write a kernel in. CUDA C++ is compiled by NVRTC inside the worker;
// Python (Numba) and Rust (nvptx64) are compiled to PTX by a front end in a sandbox on the host
// (compile/frontend.h), and all three are then run by the same driver, checks and gate.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cudojo {

enum class Language { kCuda, kPython, kRust };

std::span<const Language> all_languages();
std::string_view to_string(Language language);         // "cuda", "python", "rust": the API's and CLI's word
std::string_view display_name(Language language);      // "CUDA C++", "Python (Numba)", "Rust (nvptx64)"
std::string_view source_extension(Language language);  // ".cu", ".py", ".rs"
// The mode name of the page's editor (CodeMirror): "text/x-c++src", "python", "rust".
std::string_view editor_mode(Language language);

// Accepts the API words and common aliases ("cu", "c++", "py", "numba", "rs"); nullopt otherwise.
std::optional<Language> parse_language(std::string_view word);
// From a file name's extension (.cu .cuh .py .rs); nullopt for anything else.
std::optional<Language> language_from_path(const std::filesystem::path& path);

// "cuda, python, rust", for help texts and error messages.
std::string language_list();

}  // namespace cudojo
