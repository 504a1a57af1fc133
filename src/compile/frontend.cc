#include "compile/frontend.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_text.h"
#include "compile/frontend_scripts.h"
#include "compile/sandbox.h"

namespace cudojo {

namespace fs = std::filesystem;

namespace {

// A folder of its own for one compile, removed when the compile is done.
class ScratchFolder {
 public:
  explicit ScratchFolder(const fs::path& parent) {
    fs::create_directories(parent);
    std::string pattern = (parent / "cudojo-compile-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot make a folder under " + parent.string());
    path_ = pattern;
    fs::permissions(path_, fs::perms::owner_all);  // nobody else may swap the front end or its request
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

fs::path cache_root() {
  if (const char* configured = std::getenv("CUDOJO_CACHE_DIR"); configured && *configured) return configured;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "cudojo";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "cudojo";
  return fs::temp_directory_path() / "cudojo-cache";
}

constexpr const char* kRustc = "/usr/bin/rustc";
constexpr const char* kPython = "/usr/bin/python3";

// The compiler's identity, cheaply: a new rustc package (another size or time) needs a new sysroot.
std::string rustc_identity() {
  struct stat info {};
  if (stat(kRustc, &info) != 0) return "";
  return fmt::format("{:x}-{:x}", static_cast<unsigned long long>(info.st_size),
                     static_cast<unsigned long long>(info.st_mtime));
}

// The sandbox sees /usr; a toolkit elsewhere (or reached through a link outside /usr) is bound at
// its real path.
std::vector<SandboxMount> toolkit_mounts(const std::string& cuda_home) {
  std::error_code error;
  const fs::path real = fs::canonical(cuda_home, error);
  if (error || real.string().rfind("/usr/", 0) == 0) return {};
  return {{real.string(), real.string()}};
}

std::string real_cuda_home(const std::string& cuda_home) {
  std::error_code error;
  const fs::path real = fs::canonical(cuda_home, error);
  return error ? cuda_home : real.string();
}

nlohmann::json parameters_json(std::span<const KernelParameter> parameters) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& parameter : parameters) {
    nlohmann::json item = {{"name", parameter.name},
                           {"kind", parameter.is_array ? "array" : "scalar"},
                           {"element", parameter.element}};
    if (parameter.is_array) item["const"] = parameter.is_const;
    list.push_back(item);
  }
  return list;
}

std::string last_part_of(const std::string& text, std::size_t bytes) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

std::string cap(std::string text, std::size_t bytes) {
  if (text.size() > bytes) text = text.substr(0, bytes) + "\n... (log cut)";
  return text;
}

FrontendResult judge_failure(std::string why) {
  FrontendResult result;
  result.judge_failure = true;
  result.compile.log = std::move(why);
  return result;
}

FrontendResult learner_limit(const FrontendRequest& request, const std::string& what) {
  FrontendResult result;
  result.compile.log =
      fmt::format("{}: error: the {} compile {}", request.file_name, display_name(request.language), what);
  result.compile.diagnostics.push_back({request.file_name, 0, "error", result.compile.log});
  return result;
}

// An answer that does not fit the protocol (PROTOCOL.md); what() says which part, for the learner.
struct IllFormedAnswer : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The answer is an object holding lists of objects: three levels. Anything deeper is refused as it
// is read, before it is built.
constexpr int kMaxAnswerDepth = 8;
// As many as NVRTC's diagnostics keep; the rest are in the log.
constexpr std::size_t kMaxDiagnostics = 50;
// Numba's mangled entry names run to a few hundred characters.
constexpr std::size_t kMaxEntryBytes = 4096;
constexpr std::int64_t kMaxSourceFileIndex = 65535;

nlohmann::json parse_answer(const std::string& text) {
  try {
    return nlohmann::json::parse(text, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxAnswerDepth) throw IllFormedAnswer("it nests deeper than an answer can");
      return true;
    });
  } catch (const nlohmann::json::exception&) {
    throw IllFormedAnswer("it is not one JSON object");
  }
}

bool is_integer_in(const nlohmann::json& value, std::int64_t low, std::int64_t high) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>() <= static_cast<std::uint64_t>(high);
  if (!value.is_number_integer()) return false;
  const std::int64_t number = value.get<std::int64_t>();
  return number >= low && number <= high;
}

// The field `name` of `object` when present; refused when it is there but not `what` says.
template <typename Fits>
const nlohmann::json* field(const nlohmann::json& object, const std::string& name, const std::string& where,
                            const char* what, Fits fits) {
  const auto found = object.find(name);
  if (found == object.end()) return nullptr;
  if (!fits(*found)) throw IllFormedAnswer(fmt::format("\"{}\" is not {}", where, what));
  return &*found;
}

const nlohmann::json& required(const nlohmann::json* value, const std::string& where) {
  if (!value) throw IllFormedAnswer(fmt::format("\"{}\" is missing", where));
  return *value;
}

bool is_text(const nlohmann::json& value) { return value.is_string(); }

bool is_ptx_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxEntryBytes || std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  });
}

bool declares_entry(std::string_view ptx, std::string_view entry) {
  const std::string directive = ".entry " + std::string(entry);
  for (auto at = ptx.find(directive); at != std::string_view::npos; at = ptx.find(directive, at + 1)) {
    const auto next = ptx.find_first_not_of(" \t\r\n", at + directive.size());
    if (next != std::string_view::npos && ptx[next] == '(') return true;
  }
  return false;
}

// Whether a `.file INDEX "name"` line is in the PTX: the learner's lines are that file's.
bool declares_file(std::string_view ptx, std::int64_t index) {
  std::size_t line_start = 0;
  while (line_start < ptx.size()) {
    const auto line_end = std::min(ptx.find('\n', line_start), ptx.size());
    std::string_view line = ptx.substr(line_start, line_end - line_start);
    line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
    if (line.starts_with(".file")) {
      line.remove_prefix(5);
      line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
      std::int64_t number = -1;
      const auto [end, error] = std::from_chars(line.data(), line.data() + line.size(), number);
      if (error == std::errc() && number == index && end != line.data()) return true;
    }
    line_start = line_end + 1;
  }
  return false;
}

// The CompileResult an answer describes, every field checked against the protocol.
FrontendResult answer_from(const FrontendRequest& request, const nlohmann::json& answer) {
  if (!answer.is_object()) throw IllFormedAnswer("it is not a JSON object");
  const auto is_bool = [](const nlohmann::json& value) { return value.is_boolean(); };
  const bool ok = required(field(answer, "ok", "ok", "true or false", is_bool), "ok").get<bool>();
  const auto* internal = field(answer, "internal", "internal", "true or false", is_bool);
  const auto* log = field(answer, "log", "log", "text", is_text);
  if (internal && internal->get<bool>()) {
    return judge_failure(log ? log->get<std::string>() : std::string("front end failed"));
  }

  FrontendResult result;
  CompileResult& compile = result.compile;
  compile.log = cap(log ? log->get<std::string>() : std::string(), request.max_log_bytes);
  const auto source_lines =
      static_cast<std::int64_t>(std::count(request.source.begin(), request.source.end(), '\n')) + 1;
  const auto source_bytes = static_cast<std::int64_t>(request.source.size());
  const auto* diagnostics = field(answer, "diagnostics", "diagnostics", "a list",
                                  [](const nlohmann::json& value) { return value.is_array(); });
  const std::size_t count = diagnostics ? diagnostics->size() : 0;
  for (std::size_t i = 0; i < count; ++i) {
    const nlohmann::json& item = (*diagnostics)[i];
    const std::string where = fmt::format("diagnostics[{}]", i);
    if (!item.is_object()) throw IllFormedAnswer(fmt::format("\"{}\" is not an object", where));
    const auto* line =
        field(item, "line", where + ".line", "a line of the file",
              [&](const nlohmann::json& value) { return is_integer_in(value, 0, source_lines + 1); });
    const auto* column =
        field(item, "column", where + ".column", "a column of the file",
              [&](const nlohmann::json& value) { return is_integer_in(value, 0, source_bytes + 1); });
    const auto* severity = field(item, "severity", where + ".severity", "error, warning or note",
                                 [](const nlohmann::json& value) {
                                   return value == "error" || value == "warning" || value == "note";
                                 });
    const auto* message = field(item, "message", where + ".message", "text", is_text);
    if (i + 1 >= kMaxDiagnostics && count > kMaxDiagnostics) continue;  // checked, not kept
    Diagnostic diagnostic{request.file_name, line ? line->get<int>() : 0,
                          severity ? severity->get<std::string>() : "error",
                          cap(message ? message->get<std::string>() : std::string(), request.max_log_bytes)};
    diagnostic.column = column ? column->get<int>() : 0;
    compile.diagnostics.push_back(std::move(diagnostic));
  }
  if (count > kMaxDiagnostics) {
    compile.diagnostics.push_back(
        {request.file_name, 0, "note",
         fmt::format("{} more diagnostics are in the compiler's log", count - (kMaxDiagnostics - 1))});
  }
  compile.ok = ok;
  if (!compile.ok) {
    if (compile.diagnostics.empty()) {
      compile.diagnostics.push_back(
          {request.file_name, 0, "error", compile.log.empty() ? "compile failed" : compile.log});
    }
    return result;
  }
  const std::string& ptx =
      required(field(answer, "ptx", "ptx", "text", is_text), "ptx").get_ref<const std::string&>();
  if (ptx.empty() || ptx.find('\0') != std::string::npos)
    throw IllFormedAnswer("\"ptx\" is empty or holds a NUL byte");
  const std::string& entry =
      required(field(answer, "entry", "entry", "a PTX name",
                     [](const nlohmann::json& value) {
                       return value.is_string() && is_ptx_name(value.get<std::string>());
                     }),
               "entry")
          .get_ref<const std::string&>();
  if (!declares_entry(ptx, entry))
    throw IllFormedAnswer("the PTX declares no \".entry\" by the answer's name");
  const auto* abi_word =
      field(answer, "abi", "abi", "a known parameter ABI", [](const nlohmann::json& value) {
        return value.is_string() && parse_parameter_abi(value.get<std::string>()).has_value();
      });
  const auto* file_index =
      field(answer, "source_file_index", "source_file_index", "a .file number",
            [](const nlohmann::json& value) { return is_integer_in(value, 0, kMaxSourceFileIndex); });
  const int source_file_index = file_index ? file_index->get<int>() : 1;
  if (source_file_index > 0 && !declares_file(ptx, source_file_index))
    throw IllFormedAnswer(
        fmt::format("the PTX has no \".file {}\" for the learner's lines", source_file_index));

  compile.image.assign(ptx.begin(), ptx.end());
  compile.image.push_back('\0');  // the driver reads PTX as a C string
  compile.format = ImageFormat::kPtx;
  compile.abi = abi_word ? *parse_parameter_abi(abi_word->get<std::string>()) : ParameterAbi::kPlain;
  compile.lowered_name = entry;
  compile.source_file_index = source_file_index;
  return result;
}

}  // namespace

std::string default_cuda_home() { return fs::path(default_cuda_include_dir()).parent_path().string(); }

std::optional<std::string> prepare_rust_sysroot(const std::string& arch, std::string& error) {
  if (!fs::exists(kRustc)) {
    error = "Debian's rustc (package rustc-web) is not installed at /usr/bin/rustc";
    return std::nullopt;
  }
  const fs::path root = cache_root();
  const fs::path sysroot = root / fmt::format("rust-nvptx-{}-{}", rustc_identity(), arch);
  const fs::path stamp = sysroot / "cudojo-sysroot-ready";
  if (fs::exists(stamp)) return sysroot.string();
  std::error_code ignored;
  fs::create_directories(root, ignored);
  // One builder per machine at a time; the others wait for it and then find the stamp.
  const int lock = open((root / "rust-sysroot.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock < 0 || flock(lock, LOCK_EX) != 0) {
    error = "cannot lock " + (root / "rust-sysroot.lock").string();
    if (lock >= 0) close(lock);
    return std::nullopt;
  }
  struct Unlock {
    int fd;
    ~Unlock() { close(fd); }
  } unlock{lock};
  if (fs::exists(stamp)) return sysroot.string();

  ScratchFolder scratch(root);
  write_file(scratch.path() / "frontend.py", rust_frontend_script());
  SandboxRun run;
  run.command = {kPython, "-I", "-B", "/job/frontend.py", "--build-sysroot", "/job/sysroot", "--arch", arch};
  run.job_folder = scratch.path().string();
  run.time_limit = std::chrono::minutes(5);
  const SandboxResult built = run_in_sandbox(run);
  if (!built.started || built.timed_out || !built.exited || built.code != 0 ||
      !fs::exists(scratch.path() / "sysroot")) {
    error = fmt::format("building Rust's core for nvptx64 ({}) failed: {} {}", arch, built.failure,
                        last_part_of(built.out + built.err, 2000));
    return std::nullopt;
  }
  fs::remove_all(sysroot, ignored);
  fs::rename(scratch.path() / "sysroot", sysroot);
  write_file(stamp, built.out);
  return sysroot.string();
}

FrontendResult compile_with_frontend(const FrontendRequest& request) {
  const auto started = std::chrono::steady_clock::now();
  if (request.language == Language::kCuda)
    return judge_failure("CUDA C++ is compiled by NVRTC, not a front end");
  if (!fs::exists(kPython)) return judge_failure("Debian's python3 is not installed at /usr/bin/python3");

  const std::string cuda_home =
      real_cuda_home(request.cuda_home.empty() ? default_cuda_home() : request.cuda_home);
  SandboxRun run;
  run.read_only = toolkit_mounts(cuda_home);
  run.time_limit = request.time_limit;
  run.memory_bytes = request.memory_bytes;
  run.max_processes = request.max_processes;
  run.max_output_bytes = request.max_answer_bytes;
  nlohmann::json job = {{"language", to_string(request.language)},
                        {"file_name", request.file_name},
                        {"kernel", request.kernel_name},
                        {"parameters", parameters_json(request.parameters)},
                        {"arch", request.arch},
                        {"cuda_home", cuda_home}};
  std::string_view script;
  std::string source_name;
  if (request.language == Language::kPython) {
    script = numba_frontend_script();
    source_name = "submission.py";
  } else {
    std::string error;
    auto sysroot = prepare_rust_sysroot(request.arch, error);
    if (!sysroot) return judge_failure(error);
    run.read_only.push_back({*sysroot, "/sysroot"});
    job["rust_sysroot"] = "/sysroot";
    job["prelude_path"] = "/job/cudojo_prelude.rs";
    script = rust_frontend_script();
    source_name = "submission.rs";
  }
  job["source_path"] = "/job/" + source_name;

  std::optional<ScratchFolder> scratch;
  try {
    scratch.emplace(fs::temp_directory_path());
    write_file(scratch->path() / "frontend.py", script);
    write_file(scratch->path() / source_name, request.source);
    write_file(scratch->path() / "request.json", json_text(job));
    if (request.language == Language::kRust)
      write_file(scratch->path() / "cudojo_prelude.rs", rust_prelude_source());
  } catch (const std::exception& error) {
    return judge_failure(error.what());
  }
  run.job_folder = scratch->path().string();
  run.command = {kPython, "-I", "-B", "/job/frontend.py", "/job/request.json"};
  const SandboxResult ran = run_in_sandbox(run);
  const double elapsed =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();

  FrontendResult result = read_frontend_answer(request, ran);
  result.compile.compile_ms = elapsed;
  return result;
}

FrontendResult read_frontend_answer(const FrontendRequest& request, const SandboxResult& ran) {
  if (!ran.started) return judge_failure(ran.failure);
  if (ran.timed_out) {
    return learner_limit(request, fmt::format("ran past its limit of {} s and was stopped",
                                              std::chrono::duration<double>(request.time_limit).count()));
  }
  if (ran.process_limit_reached) {
    return learner_limit(request,
                         fmt::format("held more than the sandbox's limit of {} processes and threads "
                                     "at once and was stopped: a kernel's file starts no processes "
                                     "(a fork bomb?)",
                                     request.max_processes));
  }
  if (ran.signal == SIGXCPU) return learner_limit(request, "used up its CPU time and was stopped");
  // The sandbox keeps at most max_answer_bytes of it, so this is the size check before parsing.
  if (ran.out.size() >= request.max_answer_bytes) {
    return learner_limit(request, fmt::format("produced more than {} MiB of PTX (a very large table in the "
                                              "kernel's file?); keep the kernel's data in its inputs",
                                              std::max<std::size_t>(1, request.max_answer_bytes >> 20)));
  }
  try {
    return answer_from(request, parse_answer(ran.out));
  } catch (const IllFormedAnswer& refused) {
    if (ran.signal == SIGKILL || ran.signal == SIGSEGV || ran.signal == SIGABRT) {
      return learner_limit(request, "was stopped by the sandbox's limits (memory or output)");
    }
    if (ran.out.find_first_not_of(" \t\r\n") == std::string::npos) {
      return learner_limit(
          request,
          fmt::format("ended ({}) without an answer, so the file is refused: something "
                      "in it stopped the compiler before it replied",
                      ran.exited ? fmt::format("exit {}", ran.code) : fmt::format("signal {}", ran.signal)));
    }
    return learner_limit(
        request,
        fmt::format("gave an answer the judge cannot read ({}), so the file is refused", refused.what()));
  }
}

}  // namespace cudojo
