// The GPU's profiler between the parent and a worker (run/gpu_lease.h, run/session.h), with a shell
// script playing `cudojo worker` as in run/judge_test.cc: the profiler is the worker's before the
// GPU is alone, only one job holds it, and it is let go at the end whatever the worker said.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "run/fake_worker_program.h"
#include "run/judge.h"

namespace cudojo {
namespace {

using namespace std::chrono_literals;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string echo(const std::string& line) { return "echo '" + line + "' >&3\n"; }
const std::string kCompiled =
    "read job\n" + echo(R"({"event":"compiled","compile":{"ok":true,"arch":"sm_90"},"builds":{}})");

// The parent's answers after an await_gpu, one per line in `answers`, the first's arrival time in
// `first_at`; a grant that says measure gets a correct kernel's result.
std::string await_with(const std::string& await_line, const std::filesystem::path& answers,
                       const std::filesystem::path& first_at) {
  return kCompiled + echo(await_line) + "read first\ndate +%s%N > " + first_at.string() +
         "\necho \"$first\" > " + answers.string() +
         "\ncase \"$first\" in *profiler_ready*) read grant ;; *) grant=\"$first\" ;; esac\n"
         "echo \"$grant\" >> " +
         answers.string() + "\ncase \"$grant\" in *'\"measure\":true'*) echo '" +
         completed_report(0.05, 0.04) + "' >&3 ;; esac\n";
}

std::vector<std::string> lines_of(const std::filesystem::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(FakeWorkerProgram, OnASharedGpuAProfiledJobWithoutTheProfilerStartsItsPassInItsTurnAlone) {
  // Another job holds the GPU's profiler: this one is not told its first pass may start early, and
  // is alone only once the other has let the profiler go.
  const auto answers = dir_ / "answers", first_at = dir_ / "first_at";
  CheckRequest checked = request(await_with(R"({"event":"await_gpu","profiler":true})", answers, first_at));
  GpuLease lease;
  checked.lease = &lease;
  auto other_job = lease.profiler_if_idle();
  ASSERT_TRUE(other_job.held());
  std::int64_t released_at = 0;
  std::thread other([&] {
    std::this_thread::sleep_for(300ms);
    released_at = now_ns();
    other_job.release();
  });
  const Report report = run_check(checked);
  other.join();
  EXPECT_EQ(report.verdict, Verdict::kAccepted) << report.message;
  const auto said = lines_of(answers);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0], said[1]) << "a profiler_ready came to a worker that does not hold the profiler";
  EXPECT_NE(said[1].find(R"("measure":true)"), std::string::npos) << said[1];
  std::int64_t granted_at = 0;
  std::ifstream(first_at) >> granted_at;
  EXPECT_GE(granted_at, released_at) << "alone while another job's profiler was enabled";
  EXPECT_FALSE(lease.state().alone);
}

TEST_F(FakeWorkerProgram, AJobThatTookTheIdleGpusProfilerStartsItsPassBeforeItsTurnAloneAndLetsItGo) {
  const auto answers = dir_ / "answers", first_at = dir_ / "first_at";
  CheckRequest checked = request(
      kCompiled + echo(R"({"event":"gpu_turn","want":"profiler_if_idle"})") + "read taken\n" +
      await_with(R"({"event":"await_gpu","profiler":true})", answers, first_at).substr(kCompiled.size()));
  GpuLease lease;
  checked.lease = &lease;
  const Report report = run_check(checked);
  EXPECT_EQ(report.verdict, Verdict::kAccepted) << report.message;
  const auto said = lines_of(answers);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find("profiler_ready"), std::string::npos) << said[0];
  EXPECT_NE(said[1].find(R"("measure":true)"), std::string::npos) << said[1];
  EXPECT_FALSE(lease.state().profiler) << "a job that never said profiler_done kept the profiler";
}

TEST_F(FakeWorkerProgram, AProfilerThatIsNotTrueIsNotAsked) {
  const auto answers = dir_ / "answers", first_at = dir_ / "first_at";
  CheckRequest checked = request(await_with(R"({"event":"await_gpu","profiler":"yes"})", answers, first_at));
  GpuLease lease;
  checked.lease = &lease;
  EXPECT_EQ(run_check(checked).verdict, Verdict::kAccepted);
  const auto said = lines_of(answers);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0].find("profiler_ready"), std::string::npos);
}

TEST_F(FakeWorkerProgram, OnAGpuOfItsOwnTheProfilerIsReadyAtOnce) {
  const auto answers = dir_ / "answers", first_at = dir_ / "first_at";
  CheckRequest checked = request(await_with(R"({"event":"await_gpu","profiler":true})", answers, first_at));
  EXPECT_EQ(run_check(checked).verdict, Verdict::kAccepted);
  const auto said = lines_of(answers);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[0].find("profiler_ready"), std::string::npos) << said[0];
}

TEST_F(FakeWorkerProgram, AnIdleServersProfilerIsGivenAtOnceAndRefusedWhileAnotherJobUsesTheGpu) {
  const auto answers = dir_ / "answers";
  auto asking = [&](bool other_job_shares) {
    CheckRequest checked =
        request(kCompiled + echo(R"({"event":"gpu_turn","want":"profiler_if_idle"})") +
                "read answer\necho \"$answer\" > " + answers.string() + "\n" +
                echo(R"({"event":"gpu_turn","want":"profiler_done"})") + echo(R"({"event":"await_gpu"})") +
                "read grant\n" + "echo '" + completed_report(0.05, 0.04) + "' >&3\n");
    GpuLease lease;
    checked.lease = &lease;
    GpuLease::Hold other;
    if (other_job_shares) other = lease.share();
    std::thread release_later([&] {
      std::this_thread::sleep_for(200ms);
      other.release();
    });
    EXPECT_EQ(run_check(checked).verdict, Verdict::kAccepted);
    release_later.join();
    EXPECT_FALSE(lease.state().profiler);
    const auto said = lines_of(answers);
    return said.empty() ? std::string() : said[0];
  };
  EXPECT_NE(asking(false).find(R"("profiler":true)"), std::string::npos);
  EXPECT_NE(asking(true).find(R"("profiler":false)"), std::string::npos);
}

}  // namespace
}  // namespace cudojo
