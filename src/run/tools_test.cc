// The sanitizer pass with real processes: a shell script stands in for compute-sanitizer (it writes
// a log and runs what follows its options) and another for the worker, so start-up, the job hand-
// off, the budget and cancelling are exercised as they run on a GPU machine.
#include "run/tools.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace cudojo {
namespace {

using Clock = std::chrono::steady_clock;

class SanitizerPassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cudojo-tools-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    // argv: --tool NAME --log-file PATH --print-limit N WORKER worker sanitize
    script("sanitizer",
           "log=$4\necho '========= COMPUTE-SANITIZER' > \"$log\"\nshift 6\n\"$@\"\n"
           "echo '========= ERROR SUMMARY: 0 errors' >> \"$log\"\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string script(const std::string& name, const std::string& body) {
    const auto path = dir_ / name;
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
    return path.string();
  }

  ToolSettings settings(const std::string& worker_body, double budget_ms = 10'000) {
    ToolSettings tools;
    tools.worker_executable = script("worker", worker_body);
    tools.sanitizer_executable = (dir_ / "sanitizer").string();
    tools.limits.tool_budget_ms = budget_ms;
    return tools;
  }

  std::filesystem::path dir_;
};

constexpr const char* kReadyThenResult =
    "echo '{\"event\":\"ready\"}' >&3\nread job\n"
    "echo '{\"event\":\"result\",\"outcome\":\"completed\",\"report\":{\"timings_ms\":{\"launch\":2.5}}}' "
    ">&3\n";

TEST_F(SanitizerPassTest, EveryToolRunsItsJobAndItsLogIsRead) {
  SanitizerPass pass(settings(kReadyThenResult));
  pass.wait_until_started(Clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(pass.ready());
  pass.start(Job{});
  const SanitizerOutcome outcome = pass.finish("mine.cu");
  EXPECT_TRUE(outcome.summary.ran);
  ASSERT_EQ(outcome.summary.tools.size(), 3u);
  for (const auto& tool : outcome.summary.tools) EXPECT_EQ(tool.errors, 0) << tool.tool;
  EXPECT_TRUE(outcome.summary.note.empty()) << outcome.summary.note;
  EXPECT_DOUBLE_EQ(outcome.timings_ms.at("sanitizer.racecheck.launch"), 2.5);
}

TEST_F(SanitizerPassTest, AToolPastItsBudgetIsStoppedAndSaidToBeIncomplete) {
  SanitizerPass pass(settings("read job\nsleep 30\n", 300));
  const auto started = Clock::now();
  pass.start(Job{});
  const SanitizerOutcome outcome = pass.finish("mine.cu");
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(5));
  EXPECT_NE(outcome.summary.note.find("stopped after its budget"), std::string::npos) << outcome.summary.note;
}

TEST_F(SanitizerPassTest, CancelStopsToolsThatAreRunningOrStillWaiting) {
  {
    SanitizerPass waiting(settings("read job\nsleep 30\n"));
    const auto started = Clock::now();
    waiting.cancel();
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
  }
  SanitizerPass running(settings("read job\nsleep 30\n"));
  running.start(Job{});
  const auto started = Clock::now();
  running.cancel();
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
}

TEST_F(SanitizerPassTest, AToolThatNeverReadsItsJobDoesNotHoldTheCaller) {
  // The job line is large (a cubin travels in it); a tool that never reads stdin must not block
  // the thread that hands out the jobs.
  SanitizerPass pass(settings("sleep 30\n", 500));
  Job job;
  job.source = std::string(1 << 20, 'x');
  const auto started = Clock::now();
  pass.start(job);
  EXPECT_LT(Clock::now() - started, std::chrono::milliseconds(300));
  pass.finish("mine.cu");
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(5));
}

TEST_F(SanitizerPassTest, AFaultUnderAKeptToolDoesNotStopItsLaterWorkersBeingKept) {
  // Each worker notes its start. Its first job faults (it ends without the mark, as a worker whose
  // kernel faulted does); every later job completes, leaves the mark in its tool's log and settles.
  const std::string starts = (dir_ / "starts").string();
  const std::string faulted = (dir_ / "faulted").string();
  script("sanitizer", "export LOG=$4\necho '========= COMPUTE-SANITIZER' > \"$LOG\"\nshift 6\nexec \"$@\"\n");
  ToolSettings tools =
      settings("echo started >> " + starts +
               "\necho '{\"event\":\"ready\"}' >&3\nwhile read job; do\n"
               "  if mkdir " +
               faulted +
               " 2>/dev/null; then\n"
               "    echo '{\"event\":\"result\",\"outcome\":\"runtime_error\",\"report\":{}}' >&3; exit 0\n"
               "  fi\n"
               "  echo '{\"event\":\"result\",\"outcome\":\"completed\",\"report\":{}}' >&3\n"
               "  echo '========= Program hit cudaErrorInvalidDeviceFunction (error 98) on CUDA API call to "
               "cudaFuncGetAttributes.' >> \"$LOG\"\n"
               "  echo '{\"event\":\"idle\",\"reusable\":true,\"why\":\"\"}' >&3\n"
               "done\n");
  tools.keep_alive = true;
  SanitizerPass pass(tools);
  Job job;
  job.keep_alive = true;
  for (int run = 0; run < 4; ++run) {
    pass.wait_until_started(Clock::now() + std::chrono::seconds(5));
    pass.start(job);
    pass.finish("mine.cu");
    pass.refill();
  }
  std::ifstream in(starts);
  int started = 0;
  for (std::string line; std::getline(in, line);) ++started;
  // The first three, and one in place of the worker that faulted (mkdir lets only one fault);
  // every later job finds them all kept.
  EXPECT_EQ(started, 4) << "a tool was not kept after a fault elsewhere in its history";
}

TEST(Tools, WithoutComputeSanitizerThePassSaysSoAndRunsNothing) {
  ToolSettings tools;
  tools.worker_executable = "/bin/true";
  SanitizerPass pass(tools);
  pass.start(Job{});
  const SanitizerOutcome outcome = pass.finish("mine.cu");
  EXPECT_FALSE(outcome.summary.ran);
  EXPECT_NE(outcome.summary.note.find("compute-sanitizer was not found"), std::string::npos);
}

TEST(Tools, AKeptToolsLogIsCutAtTheWorkersMark) {
  const std::string job =
      "========= Error: Race reported between Write access at reduce+0x10 in mine.cu:11\n"
      "=========     and Read access at reduce+0x20 in mine.cu:12 [32 hazards]\n";
  const std::string mark =
      "========= Program hit cudaErrorInvalidDeviceFunction (error 98) due to \"invalid device function\" "
      "on CUDA API call to cudaFuncGetAttributes.\n=========     Saved host backtrace up to driver entry "
      "point\n";
  const auto at = find_tool_log_mark(job + mark);
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(*at, job.size());
  EXPECT_FALSE(find_tool_log_mark(job).has_value());
  // The call's name alone, in a learner's line or a frame, is not the mark.
  EXPECT_FALSE(find_tool_log_mark("=========     Host Frame: on CUDA API call to cudaFuncGetAttributes\n"));
  EXPECT_EQ(find_tool_log_mark(mark + job + mark).value(), 0u);
}

}  // namespace
}  // namespace cudojo
