#include "compile/nvrtc_compiler.h"

#include <cxxabi.h>
#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "common/environment.h"
#include "common/parse_number.h"
#include "compile/include_policy.h"
#include "compile/utf8.h"

namespace cudojo {

namespace {

// At most this many diagnostics reach the report; the rest are counted in a last one.
constexpr std::size_t kMaxDiagnostics = 50;

// The file of NVRTC's built-in declarations (atomicAdd, __shfl_down_sync, ...), which it names
// "__nv_nvrtc_builtin_header.h" or not at all ("Note #3326-D: ...").
constexpr std::string_view kBuiltIn = "<built-in>";

int count_lines(std::string_view text) {
  if (text.empty()) return 0;
  int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  return text.back() == '\n' ? lines : lines + 1;
}

CompileResult refusal(std::string log, std::vector<Diagnostic> diagnostics) {
  CompileResult result;
  result.ok = false;
  result.log = std::move(log);
  result.diagnostics = std::move(diagnostics);
  return result;
}

Diagnostic make_diagnostic(std::string file, int line, std::string severity, std::string message) {
  Diagnostic diagnostic;
  diagnostic.file = std::move(file);
  diagnostic.line = line;
  diagnostic.severity = std::move(severity);
  diagnostic.message = std::move(message);
  return diagnostic;
}

std::string cap(std::string text, std::size_t limit) {
  if (text.size() <= limit) return text;
  text.resize(utf8_prefix(text, limit).size());
  text += "\n[log truncated]\n";
  return text;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return std::string(text.substr(first, last - first + 1));
}

// RAII owner of an nvrtcProgram.
class Program {
 public:
  Program(const std::string& source, const std::string& name, const CompileRequest& request) {
    std::vector<const char*> header_texts;
    std::vector<const char*> header_names;
    for (const auto& shim : shim_headers()) {
      header_texts.push_back(shim.content.data());
      header_names.push_back(shim.name.data());
    }
    if (!request.pre_include_name.empty()) {
      header_texts.push_back(request.pre_include_text.c_str());
      header_names.push_back(request.pre_include_name.c_str());
    }
    status_ =
        nvrtcCreateProgram(&program_, source.c_str(), name.c_str(), static_cast<int>(header_texts.size()),
                           header_texts.data(), header_names.data());
  }
  ~Program() {
    if (status_ == NVRTC_SUCCESS) nvrtcDestroyProgram(&program_);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  nvrtcResult status() const { return status_; }
  nvrtcProgram get() const { return program_; }

  std::string log() const {
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    nvrtcGetProgramLog(program_, log.data());
    log.resize(size - 1);
    return log;
  }

  std::string lowered_name(const std::string& expression) const {
    const char* lowered = nullptr;
    if (nvrtcGetLoweredName(program_, expression.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) return {};
    return lowered;
  }

 private:
  nvrtcProgram program_{};
  nvrtcResult status_;
};

// ---- Reading NVRTC's log ------------------------------------------------------------------------
//
// NVRTC (EDG) writes each diagnostic as a header line, then optional detail lines, then the source
// line and a caret under the column (both indented by two spaces, tabs kept, one caret column per
// byte), then for templates a "detected during:" list naming where each instantiation happened,
// innermost first ("instantiation of "..." at line 7 of mine.cu"). A note ("note #3196-D: to match
// this "{"") is a header line of its own that belongs to the diagnostic before it. A blank line
// ends a diagnostic. Lines of no diagnostic ("Remark: ...", "2 errors detected in ...", ptxas's
// messages) are kept apart.

// A header line starts in column 0; NVRTC indents every line it quotes from a source, so no text of
// the learner's can pass for one.
const std::regex& header_pattern() {
  static const std::regex pattern(
      R"(^(\S.*?)\((\d+)\): (catastrophic error|error|warning|remark|note)(?: #\d+(?:-D)?)?: (.*)$)");
  return pattern;
}

struct LogEntry {
  Diagnostic diagnostic;  // file as NVRTC names it
  std::string headline;   // the message as its first line says it, without the detail lines
  std::vector<std::string> lines;
  std::vector<std::pair<std::string, int>> instantiated_at;  // (file, line), innermost first
  int parent = -1;  // a note: the index of the diagnostic it belongs to
};

struct ParsedLog {
  std::vector<LogEntry> entries;
  std::vector<std::string> other_lines;
};

// Fills column and context from the source line and the caret line below it.
void read_caret(Diagnostic& diagnostic, std::string_view source_line, std::string_view caret_line) {
  const auto strip_indent = [](std::string_view line) {
    return line.starts_with("  ") ? line.substr(2) : line;
  };
  source_line = strip_indent(source_line);
  caret_line = strip_indent(caret_line);
  const std::size_t caret = caret_line.find('^');
  diagnostic.column = utf8_column(source_line, caret);
  diagnostic.context = fmt::format("{}\n{}", source_line, caret_line.substr(0, caret + 1));
}

ParsedLog parse_log(const std::string& log) {
  static const std::regex kAtEndOfSource(
      R"(^At end of source: (catastrophic error|error|warning|remark): (.*)$)");
  static const std::regex kBuiltInNote(R"(^Note #\d+(?:-D)?: (.*)$)");
  static const std::regex kCaret(R"(^\s*\^\s*$)");
  static const std::regex kInstantiatedAt(R"(\bat line (\d+)(?: of (.+))?$)");
  ParsedLog parsed;
  LogEntry* current = nullptr;
  int current_primary = -1;
  bool in_context = false;  // after the caret
  bool detected_during = false;
  std::vector<std::string> pending;  // indented lines not yet known to be detail or source
  const auto finish = [&] {
    if (current) {
      for (const auto& line : pending) current->diagnostic.message += "; " + trim(line);
    }
    pending.clear();
    current = nullptr;
    in_context = false;
    detected_during = false;
  };

  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::smatch match;
    const bool header = std::regex_match(line, match, header_pattern());
    const bool at_end = !header && std::regex_match(line, match, kAtEndOfSource);
    const bool built_in = !header && !at_end && std::regex_match(line, match, kBuiltInNote);
    if (header || at_end || built_in) {
      finish();
      LogEntry entry;
      if (header) {
        entry.diagnostic = make_diagnostic(match[1], saturating_int(match[2].str()), match[3], match[4]);
      } else if (at_end) {
        entry.diagnostic = make_diagnostic("", 0, match[1], match[2]);
      } else {
        entry.diagnostic = make_diagnostic(std::string(kBuiltIn), 0, "note", match[1]);
      }
      entry.headline = entry.diagnostic.message;
      entry.lines.push_back(line);
      if (entry.diagnostic.severity == "note" && current_primary >= 0) {
        entry.parent = current_primary;
      }
      parsed.entries.push_back(std::move(entry));
      if (parsed.entries.back().parent < 0) current_primary = static_cast<int>(parsed.entries.size()) - 1;
      current = &parsed.entries.back();
      continue;
    }
    if (!current || line.empty() || (line.front() != ' ' && line.front() != '\t')) {
      finish();
      if (!trim(line).empty()) parsed.other_lines.push_back(line);
      continue;
    }
    current->lines.push_back(line);
    if (!in_context && std::regex_match(line, kCaret) && !pending.empty()) {
      const std::string source_line = pending.back();
      pending.pop_back();
      for (const auto& detail : pending) current->diagnostic.message += "; " + trim(detail);
      pending.clear();
      read_caret(current->diagnostic, source_line, line);
      in_context = true;
      continue;
    }
    if (!in_context) {
      pending.push_back(line);
      continue;
    }
    // After the caret: the instantiation context, which belongs to the diagnostic, not its note.
    if (line.find("detected during") != std::string::npos) detected_during = true;
    std::smatch at;
    if (detected_during && std::regex_search(line, at, kInstantiatedAt)) {
      // "at line 511" without a file is in the file of the diagnostic itself.
      LogEntry& owner = current->parent >= 0 ? parsed.entries[current->parent] : *current;
      owner.instantiated_at.emplace_back(at[2].matched ? at[2].str() : owner.diagnostic.file,
                                         saturating_int(at[1].str()));
    }
  }
  finish();
  return parsed;
}

// ---- Learner-facing words ----------------------------------------------------------------------

// NVRTC's messages that name its options or its "JIT mode", in the terms of a GPU-only file.
std::string learner_message(std::string message) {
  struct Rewrite {
    std::string_view contains;
    std::string_view says;
  };
  static constexpr Rewrite kRewrites[] = {
      {"is considered a host variable",
       "a variable outside every function must be __device__, __constant__ or __shared__: this file is "
       "compiled for the GPU only, where host variables do not exist"},
      {"is considered a host function",
       "a function without __device__ or __global__ is a host function, and this file is compiled for "
       "the GPU only: mark helpers __device__ and the kernel __global__"},
      {"explicitly marked as a __host__ function is not allowed",
       "a __host__-only function cannot be compiled here: this file is compiled for the GPU only "
       "(make it __device__, or __host__ __device__)"},
  };
  for (const auto& rewrite : kRewrites) {
    if (message.find(rewrite.contains) != std::string::npos) return std::string(rewrite.says);
  }
  // Any other sentence that suggests a compiler option the learner cannot pass is dropped.
  for (std::string_view option : {"Consider using -", "-default-device", "-diag-suppress"}) {
    const std::size_t at = message.find(option);
    if (at == std::string::npos) continue;
    std::size_t sentence = message.rfind(". ", at);
    sentence = sentence == std::string::npos ? 0 : sentence + 1;
    if (sentence > 0) message.resize(sentence);
  }
  replace_all(message, " in JIT mode", "");
  return message;
}

// "void (*)(float *, float *, int)" -> "void(float*, float*, int)".
std::string function_type_text(std::string pointer_type) {
  replace_all(pointer_type, " (*)", "");
  replace_all(pointer_type, "(*)", "");
  replace_all(pointer_type, " *", "*");
  replace_all(pointer_type, " &", "&");
  return pointer_type;
}

// ---- The signature check ----------------------------------------------------------------------
//
// Appended after the learner's last line (so no learner line moves), in a namespace whose name the
// learner cannot know. Every identifier it uses is #undef'd first, so no macro of the learner's
// (static_assert, decltype, float, the kernel's name, ...) changes what it says; a static_assert
// failure cannot be silenced by #pragma nv_diag_suppress. `declared_as` is incomplete exactly when
// the types differ, so the error names the type the learner declared. `witness` proves the check
// was compiled at all (not swallowed by a comment, string or #if left open): its lowered name must
// exist after a successful compile. On top of that, the kernel's lowered name is compared with the
// Itanium mangling of the expected signature, which the compiler computes and no macro can reach.

struct SignatureCheck {
  std::string text;
  std::string space;  // the namespace
  std::string witness_expression;
};

std::string random_suffix() {
  std::random_device device;
  const std::uint64_t value = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  return fmt::format("{:016x}", value);
}

SignatureCheck signature_check(const CompileRequest& request) {
  SignatureCheck check;
  check.space = "cudojo_signature_check_" + random_suffix();
  check.witness_expression = "&" + check.space + "::witness";
  const std::string& kernel = request.kernel_name;
  const std::string& type = request.kernel_pointer_type;
  const std::string body = fmt::format(
      "namespace {0} {{\n"
      "template <class A, class B> struct same {{ static constexpr bool value = false; }};\n"
      "template <class A> struct same<A, A> {{ static constexpr bool value = true; }};\n"
      "template <class F, bool matches> struct declared_as {{}};\n"
      "template <class F> struct declared_as<F, false>;\n"
      "static_assert(sizeof(declared_as<decltype(&::{1}), same<decltype(&::{1}), {2}>::value>) > 0, "
      "\"kernel signature\");\n"
      "static_assert(same<decltype(&::{1}), {2}>::value, \"kernel signature\");\n"
      "__attribute__((device)) int witness = 0;\n"
      "}}\n",
      check.space, kernel, type);
  std::set<std::string> identifiers;
  static const std::regex kIdentifier(R"([A-Za-z_][A-Za-z0-9_]*)");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), kIdentifier); it != std::sregex_iterator();
       ++it) {
    identifiers.insert(it->str());
  }
  // A blank line first: a learner's last line ending in a backslash splices into it, not into ours.
  check.text = "\n";
  for (const auto& identifier : identifiers) check.text += "#undef " + identifier + "\n";
  check.text += body;
  return check;
}

// The Itanium ABI's name for `kernel` with the parameters of `pointer_type`
// ("void (*)(const float*, float*, int)" -> "_Z6reducePKfPfi"), or nothing when a parameter type
// is not one this knows (a typedef such as uint32_t mangles as what it names).
std::optional<std::string> expected_mangled_name(std::string_view kernel, std::string_view pointer_type) {
  static const std::regex kShape(R"(^\s*void\s*\(\s*\*\s*\)\s*\((.*)\)\s*$)");
  const std::string text(pointer_type);
  std::smatch match;
  if (!std::regex_match(text, match, kShape)) return std::nullopt;
  static const std::vector<std::pair<std::string, std::string>> kBuiltins = {
      {"void", "v"},           {"bool", "b"},
      {"char", "c"},           {"signed char", "a"},
      {"unsigned char", "h"},  {"short", "s"},
      {"unsigned short", "t"}, {"int", "i"},
      {"unsigned int", "j"},   {"unsigned", "j"},
      {"long", "l"},           {"unsigned long", "m"},
      {"long long", "x"},      {"unsigned long long", "y"},
      {"float", "f"},          {"double", "d"}};
  static const std::regex kClassName(
      R"(^(u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4]$|^__half2?$|^__nv_bfloat162?$)");

  std::vector<std::string> substitutions;  // full manglings of the candidates, in order
  const auto reference = [&](const std::string& full) -> std::optional<std::string> {
    const auto at = std::find(substitutions.begin(), substitutions.end(), full);
    if (at == substitutions.end()) return std::nullopt;
    const auto index = static_cast<std::size_t>(at - substitutions.begin());
    if (index == 0) return std::string("S_");
    std::string digits;
    for (std::size_t n = index - 1;; n /= 36) {
      digits.insert(digits.begin(), "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[n % 36]);
      if (n < 36) break;
    }
    return "S" + digits + "_";
  };
  // One component: emitted (with substitutions) and recorded by its full mangling.
  const auto component = [&](const std::string& prefix, const std::string& inner_emitted,
                             const std::string& inner_full) -> std::pair<std::string, std::string> {
    const std::string full = prefix + inner_full;
    if (auto seen = reference(full)) return {*seen, full};
    substitutions.push_back(full);
    return {prefix + inner_emitted, full};
  };

  std::string parameters;
  std::string list = match[1];
  if (trim(list).empty() || trim(list) == "void") {
    parameters = "v";
  } else {
    std::istringstream items(list);
    std::string item;
    while (std::getline(items, item, ',')) {
      // [const] base [const] { * [const] }
      std::string spaced;
      for (char c : item) {
        if (c == '*') {
          spaced += " * ";
        } else {
          spaced += c;
        }
      }
      std::istringstream words(spaced);
      std::vector<std::string> base;
      bool base_const = false;
      std::vector<bool> pointers;  // const-ness of each pointer level
      for (std::string word; words >> word;) {
        if (word == "*") {
          pointers.push_back(false);
        } else if (word == "const") {
          if (pointers.empty()) {
            base_const = true;
          } else {
            pointers.back() = true;
          }
        } else if (word == "__restrict__" || word == "volatile") {
          return std::nullopt;
        } else if (pointers.empty()) {
          base.push_back(word);
        } else {
          return std::nullopt;  // a parameter name after the type: not a bare type
        }
      }
      std::string base_name;
      for (const auto& word : base) base_name += (base_name.empty() ? "" : " ") + word;
      if (base_name == "unsigned long int") base_name = "unsigned long";
      if (base_name == "long int") base_name = "long";
      std::pair<std::string, std::string> type;  // (emitted, full)
      const auto builtin = std::find_if(kBuiltins.begin(), kBuiltins.end(),
                                        [&](const auto& entry) { return entry.first == base_name; });
      if (builtin != kBuiltins.end()) {
        type = {builtin->second, builtin->second};
      } else if (std::regex_match(base_name, kClassName)) {
        type = component("", fmt::format("{}{}", base_name.size(), base_name),
                         fmt::format("{}{}", base_name.size(), base_name));
      } else {
        return std::nullopt;
      }
      // const on the pointee is part of the type; const on the parameter itself is not.
      bool pending_const = base_const;
      for (bool pointer_const : pointers) {
        if (pending_const) type = component("K", type.first, type.second);
        type = component("P", type.first, type.second);
        pending_const = pointer_const;
      }
      parameters += type.first;
    }
  }
  return fmt::format("_Z{}{}{}", kernel.size(), kernel, parameters);
}

// "reduce(float const*, float*, int)" for a C++ symbol, or "" when it does not demangle.
std::string demangled(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text(abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status),
                                              std::free);
  return status == 0 && text ? std::string(text.get()) : std::string();
}

// The parameter list of a demangled function name: "(float const*, float*, int)".
std::string demangled_parameters(const std::string& name) {
  if (name.empty() || name.back() != ')') return {};
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return name.substr(i);
  }
  return {};
}

// What the appended check's diagnostics say about the learner's kernel.
struct SignatureFindings {
  bool any = false;
  bool missing = false;
  bool overloaded = false;
  bool mismatch = false;
  std::string declared_type{};  // "void (*)(float *, float *, int)", when the compiler named it
  bool other = false;           // anything else: the learner's file ends inside something
};

void read_signature_diagnostic(const std::string& message, const std::string& kernel,
                               SignatureFindings& findings) {
  findings.any = true;
  const std::string quoted = "\"" + kernel + "\"";
  if (const auto at = message.find("declared_as<"); at != std::string::npos) {
    const auto end = message.rfind(", false>");
    findings.mismatch = true;
    if (end != std::string::npos && end > at) {
      findings.declared_type = message.substr(at + 12, end - at - 12);
    }
  } else if (message.find("static assertion failed") != std::string::npos) {
    findings.mismatch = true;
  } else if (message.find("overloaded function") != std::string::npos) {
    findings.overloaded = true;
  } else if ((message.find("has no") != std::string::npos ||
              message.find("is undefined") != std::string::npos) &&
             message.find(quoted) != std::string::npos) {
    findings.missing = true;
  } else if (message.find("name expression") == std::string::npos) {
    findings.other = true;
  }
}

// The one sentence about the kernel's signature, or "" when the findings say nothing useful.
std::string signature_message(const SignatureFindings& findings, const CompileRequest& request,
                              bool learner_errors) {
  const std::string expected =
      fmt::format("__global__ void {}({})", request.kernel_name, request.kernel_parameters);
  if (findings.overloaded) {
    return fmt::format(
        "there is more than one {0}: the stage's driver launches exactly one kernel, `{1}`; rename or "
        "remove the others",
        request.kernel_name, expected);
  }
  if (findings.mismatch && !findings.declared_type.empty() &&
      findings.declared_type.find("error") == std::string::npos) {
    return fmt::format(
        "{} is declared as {}; the stage launches `{}` (extern \"C\" is optional, the "
        "parameter types must be exactly these)",
        request.kernel_name, function_type_text(findings.declared_type), expected);
  }
  if (learner_errors) return {};  // the learner's own errors come first; the check's follow from them
  if (findings.missing) {
    return fmt::format(
        "no kernel named {} was found; the stage's driver launches `{}` (extern \"C\" is optional, the "
        "name and parameter types must match)",
        request.kernel_name, expected);
  }
  if (findings.mismatch) {
    return fmt::format(
        "no kernel matching `{}` was found; the stage's driver launches exactly that "
        "signature (extern \"C\" is optional, the name and parameter types must match)",
        expected);
  }
  if (findings.other) {
    return "the file ends inside an unfinished declaration (a missing '}', ')' or ';', or an open "
           "comment, string or #if), so the judge's check after your last line could not compile";
  }
  return {};
}

// ---- Where a diagnostic belongs ----------------------------------------------------------------

struct Places {
  std::string file_name;  // the learner's file as NVRTC names it
  int learner_lines = 0;
  std::string include_dir;  // absolute, no trailing '/'
  const CompileRequest* request = nullptr;
  std::vector<IncludeUse> includes;
};

// A header's name as a learner would #include it ("cub/block/block_reduce.cuh"), or "" when the
// file is not one of CUDA's headers, the shims or the judge's pre-included header.
std::string header_name(const std::string& file, const Places& places) {
  if (file == kBuiltIn || file == "__nv_nvrtc_builtin_header.h") return std::string(kBuiltIn);
  for (const std::string& prefix : {places.include_dir + "/cccl/", places.include_dir + "/"}) {
    if (file.starts_with(prefix)) return file.substr(prefix.size());
  }
  const auto& shims = shim_headers();
  if (std::any_of(shims.begin(), shims.end(), [&](const ShimHeader& shim) { return shim.name == file; })) {
    return file;
  }
  if (!places.request->pre_include_name.empty() && file == places.request->pre_include_name) return file;
  return {};
}

// The learner's #include line that most likely brought `header` in, or 0 when it cannot be told.
int include_line_for(const std::string& header, const Places& places) {
  std::vector<const IncludeUse*> candidates;
  for (const auto& use : places.includes) {
    if (use.name == header) return use.line;
    const auto& shims = shim_headers();
    const auto shim =
        std::find_if(shims.begin(), shims.end(), [&](const ShimHeader& s) { return s.name == use.name; });
    if (shim != shims.end() && shim->content.find("#include") == std::string_view::npos) continue;
    candidates.push_back(&use);
  }
  if (candidates.size() == 1) return candidates.front()->line;
  const auto top = [](std::string_view name) {
    name = name.substr(0, name.find('/'));
    return std::string(name.substr(0, name.find('.')));
  };
  const IncludeUse* same_folder = nullptr;
  for (const auto* use : candidates) {
    if (top(use->name) != top(header)) continue;
    if (same_folder) return 0;
    same_folder = use;
  }
  return same_folder ? same_folder->line : 0;
}

// The paths NVRTC prints, as a learner would #include them.
std::string shorten_paths(std::string text, const Places& places) {
  replace_all(text, places.include_dir + "/cccl/", "");
  replace_all(text, places.include_dir + "/", "");
  return text;
}

// A diagnostic to show when the compile failed but nothing in the log named a line: the log itself
// (a ptxas error from inline asm is the usual case).
Diagnostic log_diagnostic(const std::vector<std::string>& lines, const Places& places,
                          std::string_view source) {
  std::string said;
  for (const auto& line : lines) said += (said.empty() ? "" : "\n") + line;
  Diagnostic diagnostic = make_diagnostic(places.file_name, 0, "error", "");
  if (said.find("ptxas") != std::string::npos) {
    // The message names the first complaint; the whole of what ptxas said goes under it.
    std::string first;
    for (const auto& line : lines) {
      if (const auto at = line.find("error   : "); at != std::string::npos) {
        first = line.substr(at + 10);
        break;
      }
    }
    diagnostic.message =
        "the PTX assembler (ptxas) rejected the compiled code; inline asm is the usual cause";
    if (!first.empty()) diagnostic.message += ": " + first;
    diagnostic.context = std::string(utf8_prefix(said, 2000));
    // With one line of inline asm in the file, that is where to look.
    std::istringstream in{std::string(source)};
    std::string line;
    int number = 0, asm_line = 0, asm_lines = 0;
    static const std::regex kAsm(R"((^|[^A-Za-z0-9_])(asm|__asm__)([^A-Za-z0-9_]|$))");
    while (std::getline(in, line)) {
      ++number;
      if (std::regex_search(line, kAsm)) {
        ++asm_lines;
        asm_line = number;
      }
    }
    if (asm_lines == 1) diagnostic.line = asm_line;
  } else {
    diagnostic.message = "the compiler failed without naming a line. It said: " +
                         std::string(utf8_prefix(said.empty() ? "nothing" : said, 1500));
  }
  diagnostic.message = valid_utf8(diagnostic.message);
  diagnostic.context = valid_utf8(diagnostic.context);
  return diagnostic;
}

// Adds a note unless the same one is there: a macro that breaks a header breaks dozens of its lines,
// and each would point at the same #include.
void add_once(std::vector<Diagnostic>& diagnostics, Diagnostic note) {
  const bool seen = std::any_of(diagnostics.begin(), diagnostics.end(), [&](const Diagnostic& d) {
    return d.severity == note.severity && d.line == note.line && d.message == note.message;
  });
  if (!seen) diagnostics.push_back(std::move(note));
}

}  // namespace

std::vector<Diagnostic> parse_nvrtc_log(const std::string& log) {
  std::vector<Diagnostic> diagnostics;
  for (auto& entry : parse_log(valid_utf8(log)).entries) diagnostics.push_back(std::move(entry.diagnostic));
  return diagnostics;
}

std::optional<std::string> itanium_kernel_name(std::string_view kernel, std::string_view pointer_type) {
  return expected_mangled_name(kernel, pointer_type);
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::string default_cuda_include_dir() {
  if (const char* env = std::getenv(env::kCudaInclude); env && *env) return env;
  if (std::filesystem::exists(std::filesystem::path(CUDOJO_CUDA_INCLUDE_DEFAULT) / "cuda_runtime.h")) {
    return CUDOJO_CUDA_INCLUDE_DEFAULT;
  }
  return "/usr/local/cuda/include";
}

std::string sanitize_file_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (char& c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  if (name.empty() || name.front() == '.') name = "submission.cu";
  if (name.size() > 64) name = name.substr(0, 64);
  return name;
}

CompileResult compile_kernel(const CompileRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  const std::string file_name = valid_utf8(request.file_name);
  if (request.source.find('\0') != std::string::npos) {
    return refusal(fmt::format("{}: the source contains a NUL byte; submit a text file", file_name),
                   {make_diagnostic(file_name, 0, "error", "source contains a NUL byte")});
  }
  if (!std::regex_match(request.arch, std::regex(R"(sm_\d{2,3}a?)"))) {
    return refusal(fmt::format("unknown GPU architecture '{}'", valid_utf8(utf8_prefix(request.arch, 40))),
                   {});
  }
  // A byte-order mark is skipped, not compiled; it sits on line 1, so no line number moves.
  const std::string_view source = without_byte_order_mark(request.source);

  IncludeScan scan = scan_includes(source);
  if (!scan.ok()) {
    std::string log;
    std::vector<Diagnostic> diagnostics;
    for (const auto& refused : scan.refused) {
      log +=
          fmt::format("{}({}): error: {}\n  {}\n\n", file_name, refused.line, refused.reason, refused.text);
      Diagnostic diagnostic = make_diagnostic(file_name, refused.line, "error", refused.reason);
      diagnostic.context = refused.text;
      diagnostics.push_back(std::move(diagnostic));
    }
    log += "The source was refused before compiling; nothing was read from the host.\n";
    return refusal(cap(std::move(log), request.max_log_bytes), std::move(diagnostics));
  }

  Places places;
  places.file_name = file_name;
  places.learner_lines = count_lines(source);
  places.request = &request;
  places.includes = scan.includes;
  places.include_dir =
      std::filesystem::absolute(std::filesystem::path(request.cuda_include_dir)).lexically_normal().string();
  while (places.include_dir.size() > 1 && places.include_dir.back() == '/') places.include_dir.pop_back();

  // The signature check sits after the learner's last line, so every learner line keeps its number.
  const SignatureCheck check = signature_check(request);
  std::string program_text = angled_includes(source, scan);
  if (!program_text.empty() && program_text.back() != '\n') program_text += '\n';
  program_text += check.text;

  Program program(program_text, file_name, request);
  if (program.status() != NVRTC_SUCCESS) {
    throw std::runtime_error(fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(program.status())));
  }
  nvrtcAddNameExpression(program.get(), request.kernel_name.c_str());
  nvrtcAddNameExpression(program.get(), check.witness_expression.c_str());

  // Trigraphs are off in C++17; the warning that says so (1406) is noise.
  const std::string arch_option = "-arch=" + request.arch;
  const std::string include_option = "-I" + places.include_dir;
  const std::string cccl_option = "-I" + places.include_dir + "/cccl";
  std::vector<const char*> options = {arch_option.c_str(),    "-lineinfo",         "-std=c++17",
                                      include_option.c_str(), cccl_option.c_str(), "-DCUDOJO=1",
                                      "--diag-suppress=1406"};
  const std::string pre_include_option = "--pre-include=" + request.pre_include_name;
  if (!request.pre_include_name.empty()) options.push_back(pre_include_option.c_str());
  const nvrtcResult compiled =
      nvrtcCompileProgram(program.get(), static_cast<int>(options.size()), options.data());

  CompileResult result;
  const ParsedLog parsed = parse_log(valid_utf8(program.log()));

  // Keep the learner's own diagnostics and those inside CUDA's headers (named as the learner would
  // #include them, with a note at the learner's line they come from); turn those from the judge's
  // appended lines or NVRTC's name map into one sentence about the expected kernel. Anything naming
  // another file would mean a host file was read: drop the log entirely.
  SignatureFindings signature;
  bool foreign_file = false;
  bool learner_errors = false;
  std::string kept_log;
  std::vector<bool> kept(parsed.entries.size(), false);
  for (std::size_t index = 0; index < parsed.entries.size(); ++index) {
    const LogEntry& entry = parsed.entries[index];
    Diagnostic diagnostic = entry.diagnostic;
    const bool is_note = entry.parent >= 0;
    if (is_note && !kept[entry.parent]) continue;
    const bool is_error = diagnostic.severity.find("error") != std::string::npos;
    if (diagnostic.file.empty()) {  // "At end of source": the learner's file ends inside something
      diagnostic.file = file_name;
      diagnostic.line = places.learner_lines;
      diagnostic.message += " at the end of the file";
    }
    const bool in_learner_file = diagnostic.file == file_name;
    if ((in_learner_file && diagnostic.line > places.learner_lines) || diagnostic.file == "__nv_name_map") {
      if (is_error) read_signature_diagnostic(diagnostic.message, request.kernel_name, signature);
      continue;
    }
    bool listed = true;  // one of the result's diagnostics, or only in the log
    std::optional<Diagnostic> reached_from;
    if (!in_learner_file) {
      const std::string header = header_name(diagnostic.file, places);
      if (header.empty()) {
        foreign_file = true;
        continue;
      }
      diagnostic.file = header;
      if (header == kBuiltIn) {
        diagnostic.line = 0;
        diagnostic.column = 0;
      }
      if (is_note) {
        // "candidate ... does not match", a dozen per overloaded call: the log keeps them.
        listed = false;
      } else {
        // Where the learner's code reaches this header: the outermost instantiation in the
        // learner's file, else the #include that brought it in.
        int line = 0;
        bool instantiated = false;
        for (const auto& [file, at] : entry.instantiated_at) {
          if (file == file_name && at <= places.learner_lines) {
            line = at;
            instantiated = true;
          }
        }
        if (!instantiated) line = include_line_for(header, places);
        // A warning inside CUDA's headers that no line of the learner's leads to is not theirs.
        if (!is_error && !instantiated) continue;
        reached_from = make_diagnostic(file_name, line, "note", "");
        reached_from->message =
            instantiated ? fmt::format(
                               "the {} in <{}> comes from this line, where a CUDA template is used with the "
                               "types named there",
                               diagnostic.severity, header)
            : line > 0 ? fmt::format(
                             "the {} in <{}> comes from this #include: a macro defined before it, or "
                             "a name of yours that the header also uses, can break CUDA's headers",
                             diagnostic.severity, header)
                       : fmt::format("the {} in <{}> comes from one of your #include lines",
                                     diagnostic.severity, header);
      }
    } else if (is_error && !is_note) {
      learner_errors = true;
    }
    diagnostic.message = shorten_paths(learner_message(diagnostic.message), places);
    // The log keeps NVRTC's layout (the detail lines follow the headline), in the same words.
    std::string headline = shorten_paths(learner_message(entry.headline), places);
    if (diagnostic.file == file_name && entry.diagnostic.file.empty()) headline += " at the end of the file";
    kept_log += diagnostic.file == kBuiltIn ? fmt::format("{}: {}\n", diagnostic.severity, headline)
                                            : fmt::format("{}({}): {}: {}\n", diagnostic.file,
                                                          diagnostic.line, diagnostic.severity, headline);
    for (std::size_t i = 1; i < entry.lines.size(); ++i) {
      kept_log += shorten_paths(entry.lines[i], places) + "\n";
    }
    if (index + 1 == parsed.entries.size() || parsed.entries[index + 1].parent < 0) kept_log += "\n";
    kept[index] = true;
    if (listed) result.diagnostics.push_back(std::move(diagnostic));
    if (reached_from) add_once(result.diagnostics, std::move(*reached_from));
  }

  std::vector<std::string> other_lines;
  for (const auto& line : parsed.other_lines) {
    if (line.starts_with("Remark: The warnings can be suppressed") ||
        line.find(" detected in the compilation of ") != std::string::npos ||
        line == "Compilation terminated.") {
      continue;
    }
    other_lines.push_back(shorten_paths(line, places));
  }
  for (const auto& line : other_lines) kept_log += line + "\n";

  const std::string message = signature_message(signature, request, learner_errors);
  if (!message.empty()) {
    result.diagnostics.push_back(make_diagnostic(
        file_name, signature.overloaded || signature.missing || signature.mismatch ? 0 : places.learner_lines,
        "error", message));
    kept_log += fmt::format("{}: error: {}\n", file_name, message);
  }
  if (foreign_file) {
    result.diagnostics.clear();
    kept_log =
        "the compiler reported a diagnostic from a file outside the allowed headers; the log "
        "was withheld\n";
    result.diagnostics.push_back(make_diagnostic(file_name, 0, "error", kept_log));
  }

  if (compiled == NVRTC_SUCCESS && !signature.any && !foreign_file) {
    result.lowered_name = program.lowered_name(request.kernel_name);
    const std::string witness = program.lowered_name(check.witness_expression);
    std::size_t cubin_size = 0;
    if (nvrtcGetCUBINSize(program.get(), &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
      result.image.resize(cubin_size);
      nvrtcGetCUBIN(program.get(), result.image.data());
    }
    std::size_t ptx_size = 0;
    if (nvrtcGetPTXSize(program.get(), &ptx_size) == NVRTC_SUCCESS && ptx_size > 1) {
      result.ptx.resize(ptx_size);
      nvrtcGetPTX(program.get(), result.ptx.data());
      result.ptx.resize(ptx_size - 1);  // without the NUL
    }
    std::string problem;
    if (witness.empty()) {
      problem = signature_message({.any = true, .other = true}, request, false);
    } else if (result.lowered_name.empty() || result.image.empty()) {
      problem =
          fmt::format("the compiled code has no kernel named {}; is it declared __global__ and defined here?",
                      request.kernel_name);
    } else if (result.lowered_name != request.kernel_name) {
      // A C++ kernel's lowered name spells its parameter types; they must be the contract's.
      const auto expected = expected_mangled_name(request.kernel_name, request.kernel_pointer_type);
      if (expected && result.lowered_name != *expected) {
        const std::string found = demangled(result.lowered_name);
        const std::string wanted = demangled(*expected);
        if (found.empty() || demangled_parameters(found) != demangled_parameters(wanted)) {
          problem = fmt::format("{} is compiled as {}; the stage launches `__global__ void {}({})`",
                                request.kernel_name, found.empty() ? result.lowered_name : found,
                                request.kernel_name, request.kernel_parameters);
        }
      }
    }
    if (problem.empty()) {
      result.ok = true;
    } else {
      result.image.clear();
      result.lowered_name.clear();
      result.diagnostics.push_back(make_diagnostic(file_name, 0, "error", problem));
      kept_log += fmt::format("{}: error: {}\n", file_name, problem);
    }
  }
  if (!result.ok) {
    const bool named_an_error =
        std::any_of(result.diagnostics.begin(), result.diagnostics.end(),
                    [](const Diagnostic& d) { return d.severity.find("error") != std::string::npos; });
    if (!named_an_error) {
      std::vector<std::string> said = other_lines;
      if (said.empty() && compiled != NVRTC_SUCCESS) said.push_back(nvrtcGetErrorString(compiled));
      result.diagnostics.push_back(log_diagnostic(said, places, source));
    }
  }
  if (result.diagnostics.size() > kMaxDiagnostics) {
    const std::size_t more = result.diagnostics.size() - (kMaxDiagnostics - 1);
    result.diagnostics.resize(kMaxDiagnostics - 1);
    result.diagnostics.push_back(make_diagnostic(
        file_name, 0, "note", fmt::format("{} more diagnostics are in the compiler's log", more)));
  }
  result.log = cap(std::move(kept_log), request.max_log_bytes);
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace cudojo
