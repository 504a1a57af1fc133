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
#include <map>
#include <vector>

namespace cudojo {
namespace {

using Clock = std::chrono::steady_clock;

// A fake tool that logs into $LOG, and the fake worker's lines that leave each tool's own mark
// there (run/tool_marks.h; synccheck needs none).
constexpr const char* kLoggingSanitizer =
    "export LOG=$4\necho '========= COMPUTE-SANITIZER' > \"$LOG\"\nshift 6\nexec \"$@\"\n";
constexpr const char* kLeaveEachToolsMark =
    "  case $CUDOJO_TOOL in\n"
    "    memcheck) echo '========= Program hit cudaErrorInvalidDeviceFunction (error 98) on CUDA API "
    "call to cudaFuncGetAttributes.' >> \"$LOG\";;\n"
    "    racecheck) echo \"========= Error: Race reported between Write access at $CUDOJO_TOOL_MARK+0x60\" "
    ">> \"$LOG\";;\n"
    "  esac\n";

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

  // Kept tools under the logging fake: each worker notes its tool in `starts` and runs `per_job`
  // (shell lines) for every job it reads.
  ToolSettings kept_tools(const std::string& starts, const std::string& per_job) {
    script("sanitizer", kLoggingSanitizer);
    ToolSettings tools =
        settings("echo $CUDOJO_TOOL >> " + starts +
                 "\necho '{\"event\":\"ready\"}' >&3\nwhile read job; do\n" + per_job + "done\n");
    tools.keep_alive = true;
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

// On a loaded machine the tool may not have printed its banner when its budget runs out: the note
// still says it was stopped, not that it "produced no report".
TEST_F(SanitizerPassTest, AToolStoppedBeforeItsFirstLineIsStillSaidToBeStopped) {
  script("sanitizer", "sleep 30\n");
  SanitizerPass pass(settings("read job\nsleep 30\n", 300));
  pass.start(Job{});
  const SanitizerOutcome outcome = pass.finish("mine.cu");
  EXPECT_NE(outcome.summary.note.find("stopped after its budget of 0.3 s"), std::string::npos)
      << outcome.summary.note;
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
  script("sanitizer", kLoggingSanitizer);
  ToolSettings tools =
      settings("echo started >> " + starts +
               "\necho '{\"event\":\"ready\"}' >&3\nwhile read job; do\n"
               "  if mkdir " +
               faulted +
               " 2>/dev/null; then\n"
               "    echo '{\"event\":\"result\",\"outcome\":\"runtime_error\",\"report\":{}}' >&3; exit 0\n"
               "  fi\n"
               "  echo '{\"event\":\"result\",\"outcome\":\"completed\",\"report\":{}}' >&3\n" +
               kLeaveEachToolsMark +
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

TEST_F(SanitizerPassTest, EachToolsLogIsCutPerJobAtItsOwnMark) {
  // The first job finds a race (racecheck goes on: a race does not stop the launch) and a barrier
  // error (synccheck, which leaves no mark: a report lets its worker go); the second is clean.
  const std::string starts = (dir_ / "starts").string();
  ToolSettings tools = kept_tools(
      starts,
      // The first job of all (mkdir succeeds once per tool), whichever worker runs it.
      "  first=no; mkdir " + (dir_ / "first-").string() +
          "$CUDOJO_TOOL 2>/dev/null && first=yes\n"
          "  if [ $first = yes ] && [ $CUDOJO_TOOL = racecheck ]; then\n"
          "    echo '========= Error: Race reported between Write access at reduce+0x10 in mine.cu:11' "
          ">> \"$LOG\"\n"
          "  fi\n"
          "  if [ $first = yes ] && [ $CUDOJO_TOOL = synccheck ]; then\n"
          "    echo '========= Barrier error detected. Invalid arguments.' >> \"$LOG\"\n"
          "    echo '=========     at reduce+0x20 in mine.cu:12' >> \"$LOG\"\n"
          "  fi\n" +
          kLeaveEachToolsMark +
          "  echo '{\"event\":\"result\",\"outcome\":\"completed\",\"report\":{}}' >&3\n"
          "  echo '{\"event\":\"idle\",\"reusable\":true,\"why\":\"\"}' >&3\n"
          "");
  SanitizerPass pass(tools);
  Job job;
  job.keep_alive = true;
  std::vector<std::map<std::string, int>> errors;
  for (int run = 0; run < 2; ++run) {
    pass.wait_until_started(Clock::now() + std::chrono::seconds(5));
    pass.start(job);
    const SanitizerOutcome outcome = pass.finish("mine.cu");
    errors.emplace_back();
    for (const auto& tool : outcome.summary.tools) errors.back()[tool.tool] = tool.errors;
    pass.refill();
  }
  EXPECT_EQ(errors[0]["racecheck"], 1);
  EXPECT_EQ(errors[0]["synccheck"], 1);
  EXPECT_EQ(errors[1]["racecheck"], 0) << "the first job's race was read again in the second's log";
  EXPECT_EQ(errors[1]["synccheck"], 0);
  EXPECT_EQ(errors[1]["memcheck"], 0);
  std::ifstream in(starts);
  std::map<std::string, int> started;
  for (std::string line; std::getline(in, line);) ++started[line];
  EXPECT_EQ(started["racecheck"], 1) << "racecheck was not kept after a job that found a race";
  EXPECT_EQ(started["memcheck"], 1);
  EXPECT_EQ(started["synccheck"], 2) << "synccheck was kept although its log held a report";
}

// Last in this file: a mark that never came in time stops racecheck's workers being kept for the
// rest of the process.
TEST_F(SanitizerPassTest, AReportThatComesLateStaysWithItsJobAndAMarkIsNeverAFinding) {
  // racecheck's mark comes after the parent stopped waiting for it; synccheck's report comes after
  // the result, while the worker settles.
  const std::string starts = (dir_ / "starts").string();
  ToolSettings tools = kept_tools(
      starts, std::string("  echo '{\"event\":\"result\",\"outcome\":\"completed\",\"report\":{}}' >&3\n"
                          "  if [ $CUDOJO_TOOL = racecheck ]; then sleep 0.5; fi\n") +
                  kLeaveEachToolsMark +
                  "  if [ $CUDOJO_TOOL = synccheck ]; then\n"
                  "    sleep 0.2\n"
                  "    echo '========= Barrier error detected. Invalid arguments.' >> \"$LOG\"\n"
                  "    echo '=========     at reduce+0x20 in mine.cu:12' >> \"$LOG\"\n"
                  "  fi\n"
                  "  echo '{\"event\":\"idle\",\"reusable\":true,\"why\":\"\"}' >&3\n"
                  "");
  tools.limits.tool_log_mark_wait_ms = 100;
  SanitizerPass pass(tools);
  Job job;
  job.keep_alive = true;
  pass.wait_until_started(Clock::now() + std::chrono::seconds(5));
  pass.start(job);
  const SanitizerOutcome outcome = pass.finish("mine.cu");
  std::map<std::string, int> errors;
  for (const auto& tool : outcome.summary.tools) errors[tool.tool] = tool.errors;
  EXPECT_EQ(errors["racecheck"], 0) << "the judge's own mark was read as the learner's race";
  EXPECT_TRUE(outcome.findings.empty() || outcome.findings.front().code != "shared_race");
  EXPECT_EQ(errors["synccheck"], 1) << "a report written after the result was lost";
  EXPECT_FALSE(pass.ready()) << "a synccheck worker whose log grew after its cut was kept";
}

}  // namespace
}  // namespace cudojo
