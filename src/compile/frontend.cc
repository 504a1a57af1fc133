#include "compile/frontend.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

  if (!ran.started) return judge_failure(ran.failure);
  if (ran.timed_out) {
    return learner_limit(request, fmt::format("ran past its limit of {} s and was stopped",
                                              std::chrono::duration<double>(request.time_limit).count()));
  }
  if (ran.signal == SIGXCPU) return learner_limit(request, "used up its CPU time and was stopped");
  if (ran.out.size() >= run.max_output_bytes) {
    return learner_limit(request, fmt::format("produced more than {} MiB of PTX (a very large table in the "
                                              "kernel's file?); keep the kernel's data in its inputs",
                                              std::max<std::size_t>(1, run.max_output_bytes >> 20)));
  }
  nlohmann::json answer;
  try {
    answer = nlohmann::json::parse(ran.out);
    if (!answer.is_object()) throw std::runtime_error("not an object");
  } catch (const std::exception&) {
    if (ran.signal == SIGKILL || ran.signal == SIGSEGV || ran.signal == SIGABRT) {
      return learner_limit(request, "was stopped by the sandbox's limits (memory or output)");
    }
    return judge_failure(
        fmt::format("the {} front end gave no answer ({}): {}", display_name(request.language),
                    ran.exited ? fmt::format("exit {}", ran.code) : fmt::format("signal {}", ran.signal),
                    last_part_of(ran.err, 1500)));
  }
  if (answer.value("internal", false))
    return judge_failure(answer.value("log", std::string("front end failed")));

  FrontendResult result;
  CompileResult& compile = result.compile;
  compile.compile_ms = elapsed;
  compile.log = cap(answer.value("log", std::string()), request.max_log_bytes);
  for (const auto& item : answer.value("diagnostics", nlohmann::json::array())) {
    if (!item.is_object()) continue;
    Diagnostic diagnostic{request.file_name, item.value("line", 0),
                          item.value("severity", std::string("error")), item.value("message", std::string())};
    diagnostic.column = item.value("column", 0);
    compile.diagnostics.push_back(std::move(diagnostic));
  }
  compile.ok = answer.value("ok", false);
  if (!compile.ok) {
    if (compile.diagnostics.empty()) {
      compile.diagnostics.push_back(
          {request.file_name, 0, "error", compile.log.empty() ? "compile failed" : compile.log});
    }
    return result;
  }
  const std::string ptx = answer.value("ptx", std::string());
  const std::string entry = answer.value("entry", std::string());
  const auto abi = parse_parameter_abi(answer.value("abi", std::string("plain")));
  if (ptx.empty() || entry.empty() || !abi) {
    return judge_failure(fmt::format("the {} front end answered ok without PTX, entry or a known ABI",
                                     display_name(request.language)));
  }
  compile.image.assign(ptx.begin(), ptx.end());
  compile.image.push_back('\0');  // the driver reads PTX as a C string
  compile.format = ImageFormat::kPtx;
  compile.abi = *abi;
  compile.lowered_name = entry;
  compile.source_file_index = answer.value("source_file_index", 1);
  return result;
}

}  // namespace cudojo
