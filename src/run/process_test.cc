// The worker runner is tested with real processes (/bin/sh), exactly as it runs the real worker.
#include "run/process.h"

#include <gtest/gtest.h>

#include "common/limits.h"
#include "run/session.h"

namespace cudojo {
namespace {

using namespace std::chrono_literals;

WorkerProcess shell(const std::string& script, std::size_t cap = 1024) {
  return WorkerProcess({"/bin/sh", "-c", script}, cap);
}

TEST(WorkerProcess, ReadsMessagesFromFd3AndTheJobFromStdin) {
  auto worker = shell("read job; echo \"{\\\"got\\\":\\\"$job\\\"}\" >&3");
  worker.send_job("hello\n");
  std::string line;
  ASSERT_EQ(worker.next_message(WorkerProcess::Clock::now() + 5s, line), WorkerProcess::Wait::kMessage);
  EXPECT_EQ(line, "{\"got\":\"hello\"}");
  EXPECT_EQ(worker.next_message(WorkerProcess::Clock::now() + 5s, line), WorkerProcess::Wait::kClosed);
  EXPECT_TRUE(worker.wait().exited);
}

TEST(WorkerProcess, DeadlineThenKillEndsAHungWorker) {
  auto worker = shell("sleep 30");
  worker.send_job("");
  std::string line;
  const auto started = WorkerProcess::Clock::now();
  ASSERT_EQ(worker.next_message(started + 200ms, line), WorkerProcess::Wait::kDeadline);
  worker.kill();
  auto exit = worker.wait();
  EXPECT_FALSE(exit.exited);
  EXPECT_EQ(exit.signal, SIGKILL);
  EXPECT_LT(WorkerProcess::Clock::now() - started, 5s);
}

TEST(WorkerProcess, KillReachesTheWholeProcessGroup) {
  // The shell starts a grandchild that holds the output pipe; killing only the shell would leave
  // wait() draining a pipe that never closes.
  auto worker = shell("sleep 30 & sleep 30");
  worker.send_job("");
  std::string line;
  worker.next_message(WorkerProcess::Clock::now() + 100ms, line);
  const auto started = WorkerProcess::Clock::now();
  worker.kill();
  worker.wait();
  EXPECT_LT(WorkerProcess::Clock::now() - started, 1500ms);
}

TEST(WorkerProcess, OutputIsCappedButCounted) {
  auto worker = shell("head -c 100000 /dev/zero | tr '\\0' x; echo done >&3", 1000);
  worker.send_job("");
  std::string line;
  ASSERT_EQ(worker.next_message(WorkerProcess::Clock::now() + 5s, line), WorkerProcess::Wait::kMessage);
  worker.wait();
  EXPECT_EQ(worker.output().size(), 1000u);
  EXPECT_TRUE(worker.output_truncated());
  EXPECT_EQ(worker.output_bytes(), 100000u);
}

TEST(WorkerProcess, CrashIsReportedNotPropagated) {
  auto worker = shell("kill -SEGV $$");
  worker.send_job("");
  std::string line;
  EXPECT_EQ(worker.next_message(WorkerProcess::Clock::now() + 5s, line), WorkerProcess::Wait::kClosed);
  auto exit = worker.wait();
  EXPECT_EQ(exit.signal, SIGSEGV);
  EXPECT_NE(exit.describe().find("signal"), std::string::npos);
}

TEST(WorkerProcess, MissingExecutableThrows) {
  EXPECT_THROW(WorkerProcess({"/nonexistent/cudojo"}, 10), std::system_error);
}

TEST(WorkerProcess, ALineToAWorkerThatNeverReadsGivesUpAtItsDeadline) {
  auto worker = shell("sleep 30");
  const auto started = WorkerProcess::Clock::now();
  // Far more than a pipe holds: the write can only finish if the worker reads.
  EXPECT_FALSE(worker.send_line(std::string(4 << 20, 'x'), started + 300ms));
  EXPECT_LT(WorkerProcess::Clock::now() - started, 3s);
}

TEST(WorkerProcess, LinesKeepStdinOpenForTheNext) {
  auto worker = shell("read a; read b; echo \"{\\\"got\\\":\\\"$a-$b\\\"}\" >&3");
  ASSERT_TRUE(worker.send_line("one"));
  ASSERT_TRUE(worker.send_line("two", WorkerProcess::Clock::now() + 5s));
  std::string line;
  ASSERT_EQ(worker.next_message(WorkerProcess::Clock::now() + 5s, line), WorkerProcess::Wait::kMessage);
  EXPECT_EQ(line, "{\"got\":\"one-two\"}");
}

TEST(WorkerProcess, WaitUntilKillsAWorkerStillRunningAtTheDeadline) {
  auto slow = shell("sleep 30");
  const auto started = WorkerProcess::Clock::now();
  EXPECT_FALSE(slow.wait_until(started + 200ms));
  EXPECT_LT(WorkerProcess::Clock::now() - started, 3s);
  auto quick = shell("exit 0");
  EXPECT_TRUE(quick.wait_until(WorkerProcess::Clock::now() + 5s));
}

TEST(WorkerProcess, AfterItsLastMessageTheOutputIsKeptAndTheParentDoesNotWait) {
  // The worker has said its last word but takes its time to end (as a CUDA context's teardown does).
  auto worker = shell("echo printed; echo '{\"event\":\"result\"}' >&3; sleep 2");
  std::string line;
  ASSERT_EQ(worker.next_message(WorkerProcess::Clock::now() + 5s, line), WorkerProcess::Wait::kMessage);
  const auto started = WorkerProcess::Clock::now();
  worker.let_finish_in_background();
  EXPECT_FALSE(worker.running());
  worker.wait();
  EXPECT_LT(WorkerProcess::Clock::now() - started, 1s);
  EXPECT_EQ(worker.output(), "printed\n");
}

TEST(PhaseBudget, DerivedFromTheReferenceAndCapped) {
  JudgeLimits limits;
  EXPECT_DOUBLE_EQ(phase_budget_ms(limits, 10, 0.01),
                   limits.phase_floor_ms + 10 * 0.01 * limits.phase_launch_factor);
  EXPECT_DOUBLE_EQ(phase_budget_ms(limits, 1000000, 1.0), limits.phase_cap_ms);
  EXPECT_GE(phase_budget_ms(limits, 1, -1), limits.phase_floor_ms);  // unknown reference time
}

}  // namespace
}  // namespace cudojo
