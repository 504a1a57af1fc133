// End-to-end tests of the CLI that need no GPU: they run the real binary, its real worker process
// and real NVRTC. On a machine with a GPU the no_device test skips (the GPU tests cover that path).
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/limits.h"
#include "compile/nvrtc_compiler.h"
#include "run/protocol.h"
#include "run_cli.h"
#include "stage/stage.h"

namespace cudojo {
namespace {

using testing::run_cli;
using testing::submission;

bool gpu_present() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliStages, ListsTheTrackInOrder) {
  auto result = run_cli("stages");
  EXPECT_EQ(result.exit_code, 0);
  auto first = result.out.find("reduction/1");
  auto last = result.out.find("reduction/4");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(last, std::string::npos);
  EXPECT_LT(first, last);
  EXPECT_NE(result.out.find("reduction/block-tree"), std::string::npos);
}

TEST(CliStages, JsonIsAListOfStages) {
  auto result = run_cli("stages --json");
  ASSERT_EQ(result.exit_code, 0);
  auto list = nlohmann::json::parse(result.out);
  ASSERT_EQ(list.size(), 12u);
  EXPECT_EQ(list[2]["signature"], "__global__ void reduce(const float* X, float* out, int N)");
  EXPECT_EQ(list[6]["id"], "reduction/7");
  EXPECT_EQ(list[6]["signature"],
            "__global__ void block_partials(const float* X, float* partial, int N); then "
            "__global__ void fold_partials(const float* partial, float* out, int count)");
  EXPECT_EQ(list[11]["id"], "atomics/3");
}

TEST(CliShow, ShowsLessonSignatureLaunchAndGate) {
  auto result = run_cli("show reduction/block-tree");
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("Guard the value, not the thread"), std::string::npos);
  EXPECT_NE(result.out.find("__global__ void reduce(const float* X, float* out, int N)"), std::string::npos);
  EXPECT_NE(result.out.find("ceil(N / 256) blocks x 256 threads, 1024 bytes"), std::string::npos);
  EXPECT_NE(result.out.find("2x the reference"), std::string::npos);  // as README writes it
}

TEST(CliShow, UnknownStageIsAUsageErrorListingTheStages) {
  auto result = run_cli("show reduction/99");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("no stage 'reduction/99'"), std::string::npos);
  EXPECT_NE(result.out.find("reduction/warp-shuffle"), std::string::npos);
}

TEST(CliStarter, PrintsACompleteKernelFile) {
  auto result = run_cli("starter reduction/4");
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("__global__ void block_sum(const float* X, float* partial, int N)"),
            std::string::npos);
}

TEST(CliCheck, MissingFileIsAUsageError) {
  auto result = run_cli("check reduction/2 /nonexistent.cu");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("cannot read"), std::string::npos);
}

TEST(CliCheck, NoArgumentsIsAUsageError) {
  EXPECT_EQ(run_cli("check").exit_code, 2);
  EXPECT_EQ(run_cli("").exit_code, 2);
}

TEST(CliCheck, CompileErrorRoundTripNamesFileAndLine) {
  auto result = run_cli("check reduction/3 " + submission("reduction-2/compile_error.cu") + " --json");
  EXPECT_EQ(result.exit_code, 1);
  auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["verdict"], "compile_error");
  EXPECT_EQ(report["compile"]["ok"], false);
  ASSERT_FALSE(report["compile"]["diagnostics"].empty());
  EXPECT_EQ(report["compile"]["diagnostics"][0]["file"], "compile_error.cu");
  EXPECT_EQ(report["compile"]["diagnostics"][0]["line"], 6);
}

TEST(CliCheck, HostIncludeIsRefusedAndNothingLeaks) {
  auto result = run_cli("check reduction/2 " + submission("reduction-2/include_host_file.cu") + " --json");
  EXPECT_EQ(result.exit_code, 1);
  auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["verdict"], "compile_error");
  EXPECT_EQ(result.out.find("root:x:0:0"), std::string::npos);
}

TEST(CliCheck, TextReportWithoutColourUnderNoColor) {
  auto result = run_cli("check reduction/3 " + submission("reduction-2/compile_error.cu") + " --color=auto");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("COMPILE_ERROR"), std::string::npos);
  EXPECT_NE(result.out.find("compile_error.cu:6"), std::string::npos);
  EXPECT_EQ(result.out.find("\x1b["), std::string::npos);  // not a terminal
}

TEST(CliCheck, OversizeSourceIsRefused) {
  const std::string path = write_temp("cudojo_big.cu", std::string(70 * 1024, '/'));
  auto result = run_cli("check reduction/2 " + path + " --json");
  EXPECT_EQ(result.exit_code, 1);
  auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["verdict"], "compile_error");
  EXPECT_NE(report["compile"]["log"].get<std::string>().find("limit"), std::string::npos);
}

// NVRTC's memory grows with what the source asks for; the compile runs in a child process with an
// address-space limit, so a 2 GB initialized array is a compile error within seconds, not 6 GB of
// the judge's memory for a minute.
TEST(CliCheck, ACompileBombMeetsTheCompilersMemoryLimit) {
  const std::string path = write_temp("cudojo_compile_bomb.cu",
                                      "__device__ char big[2000000000] = {1};\n"
                                      "__global__ void reduce(const float* X, float* out, int N) {\n"
                                      "  if (N < 0) out[0] = big[N];\n"
                                      "}\n");
  const auto started = std::chrono::steady_clock::now();
  auto result = run_cli("check reduction/3 " + path + " --json --no-sanitize");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(result.exit_code, 1) << result.out;
  auto report = nlohmann::json::parse(result.out);
  EXPECT_EQ(report["verdict"], "compile_error");
  const std::string log = report["compile"]["log"];
  EXPECT_NE(log.find(std::to_string(kDefaultLimits.compile_memory_bytes >> 20) + " MiB"), std::string::npos)
      << log;
  EXPECT_LT(seconds, kDefaultLimits.compile_budget_ms / 1000.0 + 5) << log;
}

// A worker that compute-sanitizer or ncu starts is the tool's child: it cannot get a parent-death
// signal from the judge, so it watches the judge's pid and ends with it (nothing of a killed server
// keeps running on a kernel that never returns).
TEST(CliWorker, AToolsWorkerEndsWhenTheJudgeDoes) {
  const pid_t judge = fork();
  if (judge == 0) {
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  int job_pipe[2];
  ASSERT_EQ(pipe(job_pipe), 0);
  const pid_t worker = fork();
  if (worker == 0) {
    dup2(job_pipe[0], 0);  // a job that never comes: the worker waits for it
    close(job_pipe[1]);
    setenv("CUDOJO_JUDGE_PID", std::to_string(judge).c_str(), 1);
    const std::string binary = testing::cudojo_binary();
    execl(binary.c_str(), binary.c_str(), "worker", "sanitize", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(job_pipe[0]);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int status = 0;
  EXPECT_EQ(waitpid(worker, &status, WNOHANG), 0) << "the worker ended while the judge was alive";
  kill(judge, SIGKILL);
  waitpid(judge, nullptr, 0);
  bool ended = false;
  for (int waited_ms = 0; waited_ms < 5'000 && !ended; waited_ms += 20) {
    ended = waitpid(worker, &status, WNOHANG) == worker;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!ended) {
    kill(worker, SIGKILL);
    waitpid(worker, &status, 0);
  }
  close(job_pipe[1]);
  EXPECT_TRUE(ended) << "the worker outlived the judge by 5 s";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
}

TEST(CliCheck, WithoutAGpuTheKernelStillCompilesThenNoDevice) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present; the GPU tests cover the full path";
  auto starter =
      run_cli("check reduction/3 " + testing::course_file("03-block-tree/reference.cu") + " --json");
  EXPECT_EQ(starter.exit_code, 2);
  auto report = nlohmann::json::parse(starter.out);
  EXPECT_EQ(report["verdict"], "no_device");
  EXPECT_EQ(report["compile"]["ok"], true);
  EXPECT_TRUE(report["error_name"].get<std::string>().starts_with("cudaError"));
  EXPECT_NE(report["message"].get<std::string>().find("needs an NVIDIA GPU"), std::string::npos);
}

// Runs `cudojo worker` on a job and returns the protocol messages it wrote on fd 3.
std::vector<nlohmann::json> run_worker(const Job& job) {
  const std::string job_path = write_temp("cudojo_worker_job.json", nlohmann::json(job).dump());
  const std::string messages_path = "/tmp/cudojo_worker_messages.jsonl";
  std::filesystem::remove(messages_path);
  run_cli("worker < " + job_path + " 3> " + messages_path);
  // "ready" (CUDA's start-up is done) may come at any point; the rest come in protocol order.
  std::vector<nlohmann::json> messages;
  int ready = 0;
  std::ifstream in(messages_path);
  for (std::string line; std::getline(in, line);) {
    auto message = nlohmann::json::parse(line);
    if (message["event"] == "ready") {
      ++ready;
    } else {
      messages.push_back(std::move(message));
    }
  }
  EXPECT_LE(ready, 1) << "a worker says ready at most once";
  return messages;
}

TEST(CliWorker, ToolWorkersLoadTheChecksBuildInsteadOfCompilingAgain) {
  if (gpu_present()) GTEST_SKIP() << "the outcome below (no_device) needs a machine without a GPU";
  const auto course = load_course(testing::source_root() / "course");
  Job job;
  job.stage = *find_stage(course, "reduction/3");
  job.source = job.stage.reference_source;
  job.file_name = "mine.cu";
  job.reference_source = job.stage.reference_source;
  job.cuda_include_dir = default_cuda_include_dir();

  // The check worker sends its builds with the "compiled" event, before any learner code runs.
  const auto check = run_worker(job);
  ASSERT_FALSE(check.empty());
  ASSERT_EQ(check.front()["event"], "compiled");
  const auto& builds = check.front()["builds"];
  ASSERT_TRUE(builds.contains("submission")) << builds.dump();
  ASSERT_TRUE(builds.contains("reference"));
  const BuiltKernel built = builds["submission"].get<BuiltKernel>();
  EXPECT_GT(built.image.size(), 1000u);

  // A sanitizer worker given that build never compiles its source: a source that cannot compile
  // gets as far as looking for a GPU.
  job.mode = WorkerMode::kSanitize;
  job.source = "this is not CUDA";
  job.submission_build = built;
  const auto reused = run_worker(job);
  ASSERT_FALSE(reused.empty());
  EXPECT_EQ(reused.back()["outcome"], "no_device") << reused.back().dump();
  job.submission_build.reset();
  EXPECT_EQ(run_worker(job).back()["outcome"], "compile_error");
}

TEST(CliWorker, AWorkerDiesWithTheProcessThatStartedIt) {
  // A shell starts a worker that waits for its job (its stdin held open by `sleep`), then the
  // shell is killed as a server killed with SIGKILL would be.
  const std::string pid_file = "/tmp/cudojo_orphan_worker.pid";
  std::filesystem::remove(pid_file);
  const pid_t shell = fork();
  if (shell == 0) {
    setpgid(0, 0);  // a group of its own, so the test can clean up `sleep` afterwards
    const std::string script =
        "sleep 30 | " + testing::cudojo_binary() + " worker & echo $! > " + pid_file + "; wait";
    execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t worker = 0;
  for (int i = 0; i < 100 && worker == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream(pid_file) >> worker;
  }
  ASSERT_GT(worker, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it is up and waiting
  ASSERT_EQ(kill(worker, 0), 0) << "the worker should be running before its parent dies";
  kill(shell, SIGKILL);
  waitpid(shell, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gone = kill(worker, 0) != 0;
  }
  EXPECT_TRUE(gone) << "the worker outlived the process that started it";
  if (!gone) kill(worker, SIGKILL);
  kill(-shell, SIGKILL);  // the rest of the shell's group (sleep)
}

TEST(CliCalibrate, WithoutAGpuItWritesNothingAndExitsTwo) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present; calibrating would overwrite the committed figures";
  const std::string dir = "/tmp/cudojo_calibrate_e2e";
  std::filesystem::remove_all(dir);
  auto result = run_cli("--calibration " + dir + " calibrate");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("needs an NVIDIA GPU"), std::string::npos) << result.out;
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(CliLab, ListsEveryExperiment) {
  auto result = run_cli("lab list");
  EXPECT_EQ(result.exit_code, 0);
  for (const char* name : {"race", "contention", "sum-strategies", "determinism", "precision", "float-max"}) {
    EXPECT_NE(result.out.find(name), std::string::npos) << name;
  }
}

TEST(CliLab, UnknownExperimentIsAUsageError) {
  auto result = run_cli("lab nope");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("cudojo lab list"), std::string::npos);
}

TEST(CliLab, WithoutAGpuItSaysWhyAndExitsTwo) {
  if (gpu_present()) GTEST_SKIP() << "a GPU is present; scripts/lab-check.sh runs the experiments";
  auto result = run_cli("lab race");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.out.find("no usable CUDA device"), std::string::npos);
}

}  // namespace
}  // namespace cudojo

namespace cudojo {
namespace {

using testing::run_cli;

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name)).string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(CliCheck, LatinOneBytesInASourceAreTheLearnersTextNotTheJudgesError) {
  // A comment saved in Latin-1 ("caf\xe9"): not UTF-8, which JSON cannot carry as it is.
  const std::string good = write_bytes("cudojo-latin1.cu",
                                       "// caf\xe9 au lait\n"
                                       "__global__ void reduce(const float* X, float* out, int N) {\n"
                                       "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                       "    if (i < N) atomicAdd(out, X[i]);\n"
                                       "}\n");
  auto result = run_cli("check reduction/2 " + good + " --json --no-sanitize 2>/dev/null");
  const auto report = nlohmann::json::parse(result.out);  // one JSON object, whatever happened
  EXPECT_NE(report["verdict"], "internal_error") << result.out;
  const std::string bad =
      write_bytes("cudojo-latin1-bad.cu",
                  "// \xe9t\xe9\n__global__ void reduce(const float* X, float* out, int N) { oops }\n");
  result = run_cli("check reduction/2 " + bad + " --json 2>/dev/null");
  EXPECT_EQ(nlohmann::json::parse(result.out)["verdict"], "compile_error") << result.out;
}

// The binary's stdout alone (stderr dropped), killed after `seconds` (exit 137 then) and, when
// given, held to `memory_kib` of address space, so that a command that would hang or grow without
// bound ends the test instead.
testing::CliResult run_cli_within(int seconds, const std::string& arguments, long memory_kib = 0) {
  testing::CliResult result;
  const std::string command = fmt::format("{}timeout -s KILL {} {} {} 2>/dev/null",
                                          memory_kib ? fmt::format("ulimit -v {}; ", memory_kib) : "",
                                          seconds, testing::cudojo_binary(), arguments);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Opening a FIFO waits for a writer that never comes, and /dev/zero never ends: what is not a
// regular file is refused at once, as a usage error with its JSON object under --json.
TEST(CliCheck, AFifoOrADeviceIsRefusedAtOnceNotWaitedOn) {
  const std::string fifo = fmt::format("/tmp/cudojo_fifo_{}.cu", getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  struct Unlink {
    std::string path;
    ~Unlink() { ::unlink(path.c_str()); }
  } unlink_fifo{fifo};
  const std::pair<std::string, std::string> cases[] = {
      {"check reduction/3 " + fifo, "is a named pipe (FIFO)"},
      {"build reduction/3 " + fifo + " -o /tmp/cudojo_fifo.build", "is a named pipe (FIFO)"},
      {"check reduction/3 --build " + fifo, "is a named pipe (FIFO)"},
      {"check reduction/3 /dev/zero --lang cuda", "is a character device"},
      {"build reduction/3 /dev/zero --lang python -o /tmp/cudojo_zero.build", "is a character device"},
  };
  for (const auto& [arguments, words] : cases) {
    SCOPED_TRACE(arguments);
    const auto started = std::chrono::steady_clock::now();
    const auto result = run_cli_within(20, arguments + " --json");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_LT(seconds, 5);
    ASSERT_EQ(result.exit_code, 2) << result.out;
    const auto object = nlohmann::json::parse(result.out, nullptr, false);
    ASSERT_TRUE(object.is_object()) << result.out;
    EXPECT_EQ(object["kind"], "usage_error");
    EXPECT_NE(object["error"].get<std::string>().find(words), std::string::npos) << object["error"];
  }
  EXPECT_FALSE(std::filesystem::exists("/tmp/cudojo_fifo.build"));
}

// `cudojo build` compiles as the judge's worker does, in a child under the compile budget
// (run/compile_child.h): a template that instantiates itself twice per level, 2^28 times, ends as
// a compile error naming the budget. The test bounds it too (8 GiB, 60 s), in case it did not.
TEST(CliBuild, ATemplateBombEndsWithinTheCompileBudget) {
  const std::string path =
      write_temp("cudojo_template_bomb.cu",
                 "template <int N, int M> struct Grow {\n"
                 "  static constexpr int value = Grow<N - 1, 2 * M>::value + "
                 "Grow<N - 1, 2 * M + 1>::value;\n"
                 "};\n"
                 "template <int M> struct Grow<0, M> { static constexpr int value = 1; };\n"
                 "__global__ void reduce(const float* X, float* out, int N) {\n"
                 "  if (N < 0) out[0] = Grow<28, 0>::value;\n"
                 "}\n");
  const auto started = std::chrono::steady_clock::now();
  const auto result = run_cli_within(
      60, "build reduction/3 " + path + " -o /tmp/cudojo_template_bomb.build --json", 8l << 20);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(result.exit_code, 1) << result.out;
  const auto summary = nlohmann::json::parse(result.out);
  EXPECT_EQ(summary["compile"]["ok"], false);
  const std::string log = summary["compile"]["log"];
  EXPECT_NE(log.find(fmt::format("{:g} s", kDefaultLimits.compile_budget_ms / 1000.0)), std::string::npos)
      << log;
  EXPECT_LT(seconds, kDefaultLimits.compile_budget_ms / 1000.0 + 5) << log;
}

}  // namespace
}  // namespace cudojo
