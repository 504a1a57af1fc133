// run_check's wiring with real processes and no GPU: a shell script plays `cudojo worker`, speaking
// the protocol, so the pipeline (prepared workers, the session, the GPU hand-over, decide) runs as
// it does on a GPU machine.
#include "run/judge.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/environment.h"
#include "run/fake_worker_program.h"

namespace cudojo {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST_F(FakeWorkerProgram, ACorrectKernelIsAcceptedAfterTheGpuIsHandedOver) {
  CheckRequest checked = request(
      "read job\n"
      "echo '{\"event\":\"compiled\",\"compile\":{\"ok\":true,\"arch\":\"sm_90\"},\"builds\":{}}' >&3\n"
      "echo '{\"event\":\"await_gpu\"}' >&3\n"
      "read grant\n"
      "case \"$grant\" in *'\"measure\":true'*) echo '" +
      completed_report(0.05, 0.04) + "' >&3 ;; esac\n");
  GpuLease lease;
  checked.lease = &lease;
  std::vector<std::string> phases;
  checked.on_progress = [&](std::string_view phase) { phases.emplace_back(phase); };
  const Report report = run_check(checked);
  EXPECT_EQ(report.verdict, Verdict::kAccepted) << report.message;
  EXPECT_EQ(lease.state().sharers, 0) << "the lease was not given back";
  EXPECT_FALSE(lease.state().alone);
  EXPECT_TRUE(report.timings_ms.count("waited_for_gpu"));
  EXPECT_EQ(phases.front(), "compiled");
  EXPECT_TRUE(report.timings_ms.count("held_for_tools"));
  EXPECT_GT(report.timings_ms.at("total"), 0);
  EXPECT_EQ(report.file, "mine.cu");
}

TEST_F(FakeWorkerProgram, AnOversizeSourceNeverReachesAWorker) {
  CheckRequest checked = request("touch " + (dir_ / "started").string() + "\nread job\n");
  checked.source = std::string(checked.workers.limits.max_source_bytes + 1000, ' ');
  const Report report = run_check(checked);
  EXPECT_EQ(report.verdict, Verdict::kCompileError);
  EXPECT_NE(report.compile.log.find("the limit is"), std::string::npos);
  // Printed as "file: message", so the message must not name the file again (issue #27); the size
  // is the source's own, not the limit plus one.
  ASSERT_EQ(report.compile.diagnostics.size(), 1u);
  EXPECT_EQ(report.compile.diagnostics[0].file, checked.file_name);
  EXPECT_EQ(report.compile.diagnostics[0].message.find(checked.file_name), std::string::npos)
      << report.compile.diagnostics[0].message;
  EXPECT_NE(report.compile.diagnostics[0].message.find(std::to_string(checked.source.size()) + " bytes"),
            std::string::npos)
      << report.compile.diagnostics[0].message;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "started"));
}

TEST_F(FakeWorkerProgram, PreparedWorkersSayWhenTheyHaveStarted) {
  WorkerSettings settings;
  settings.sanitize = false;
  settings.worker_executable = program("read job\n");
  PreparedWorkers ready(settings);
  const auto started = Clock::now();
  ready.wait_until_started(started + std::chrono::seconds(5));
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  EXPECT_TRUE(ready.ready());

  // One that never says so is waited for only until the deadline.
  const auto path = dir_ / "silent";
  std::ofstream(path) << "#!/bin/sh\nsleep 30\n";
  chmod(path.c_str(), 0755);
  settings.worker_executable = path.string();
  PreparedWorkers silent(settings);
  const auto waited = Clock::now();
  silent.wait_until_started(waited + std::chrono::milliseconds(300));
  EXPECT_LT(Clock::now() - waited, std::chrono::seconds(2));
}

TEST_F(FakeWorkerProgram, APreparedWorkerThatDiedIsReplacedByAFreshOne) {
  WorkerSettings settings;
  settings.sanitize = false;
  settings.worker_executable = "/bin/true";  // ends at once: not ready for any job
  PreparedWorkers dead(settings);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(dead.ready());
  CheckRequest checked = request(
      "read job\n"
      "echo '{\"event\":\"compiled\",\"compile\":{\"ok\":false},\"builds\":{}}' >&3\n"
      "echo '{\"event\":\"result\",\"outcome\":\"compile_error\",\"report\":{\"stage\":\"reduction/3\","
      "\"verdict\":\"compile_error\",\"compile\":{\"ok\":false,\"log\":\"\",\"diagnostics\":[]},\"tests\":[],"
      "\"findings\":[],\"metrics\":{}}}' >&3\n");
  const Report report = run_check(checked, std::move(dead));
  EXPECT_EQ(report.verdict, Verdict::kCompileError) << report.message;
}

std::string result_line(const char* outcome, bool tests_pass) {
  Report report;
  report.stage = "reduction/3";
  report.compile.ok = true;
  report.tests = {{"exact n=1", 1, "exact", 1, tests_pass ? 1.0 : 2.0, tests_pass, "bitwise"}};
  report.metrics.metrics_source = "cupti";
  if (std::string(outcome) == "runtime_error") report.error_name = "cudaErrorIllegalAddress";
  return nlohmann::json{{"event", "result"}, {"outcome", outcome}, {"report", report}}.dump();
}

// A server slot's warm workers: a shell script plays `cudojo worker` in keep-alive mode, so what
// is reused, what is let go and what the GPU's lease sees are the parent's own decisions.
class WarmWorkers : public FakeWorkerProgram {
 protected:
  // A worker that notes each start in a file, then answers every job line with `per_job` (which
  // sees the job as $job), as long as it reads one.
  WorkerSettings settings(const std::string& per_job) {
    const auto path = dir_ / "worker";
    std::ofstream(path) << "#!/bin/sh\necho started >> " << (dir_ / "starts").string()
                        << "\necho '{\"event\":\"ready\"}' >&3\nwhile read job; do\n"
                        << per_job << "done\n";
    chmod(path.c_str(), 0755);
    return kept_fake_worker(path.string());
  }

  int starts() const {
    std::ifstream in(dir_ / "starts");
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }

  CheckRequest warm_request(const WorkerSettings& workers) {
    CheckRequest request;
    request.stage = &stage_;
    request.source = "__global__ void reduce(const float*, float*, int) {}";
    request.file_name = "mine.cu";
    request.seed = 1;
    request.workers = workers;
    return request;
  }

  // One job on a slot of its own sharing `lease` with whatever else holds it.
  Report judged_sharing(const WorkerSettings& workers, GpuLease& lease) {
    PreparedWorkers warm(workers);
    CheckRequest checked = warm_request(workers);
    checked.lease = &lease;
    return run_check(checked, warm);
  }

  static std::string echo(const std::string& line) { return "echo '" + line + "' >&3\n"; }
  static std::string compiled() {
    return echo(R"({"event":"compiled","compile":{"ok":true,"arch":"sm_90"},"builds":{}})");
  }
  static std::string idle(bool reusable) {
    return echo(std::string(R"({"event":"idle","reusable":)") + (reusable ? "true" : "false") +
                R"(,"why":""})");
  }
};

TEST_F(WarmWorkers, ACleanJobLeavesTheWorkerForTheNext) {
  const auto workers = settings(compiled() + echo(result_line("completed", false)) + idle(true));
  PreparedWorkers warm(workers);
  for (int job = 0; job < 3; ++job) {
    const Report report = run_check(warm_request(workers), warm);
    EXPECT_EQ(report.verdict, Verdict::kWrongAnswer) << report.message;
  }
  EXPECT_EQ(starts(), 1) << "a worker whose job was clean was started again";
  EXPECT_EQ(warm.started_processes(), 1);
}

TEST_F(WarmWorkers, ASetIsStartedAfreshAfterItsLastJob) {
  auto workers = settings(compiled() + echo(result_line("completed", false)) + idle(true));
  workers.limits.max_jobs_per_worker_set = 2;
  PreparedWorkers warm(workers);
  for (int job = 0; job < 4; ++job) run_check(warm_request(workers), warm);
  EXPECT_EQ(starts(), 2) << "a set judged more jobs than it may";
}

TEST_F(WarmWorkers, AFaultLetsTheWorkerGoEvenIfItSaysItCouldStay) {
  // The worker claims it could stay; the parent does not take a faulted job's word for it.
  const auto workers = settings(compiled() + echo(result_line("runtime_error", false)) + idle(true));
  PreparedWorkers warm(workers);
  EXPECT_EQ(run_check(warm_request(workers), warm).verdict, Verdict::kRuntimeError);
  EXPECT_EQ(run_check(warm_request(workers), warm).verdict, Verdict::kRuntimeError);
  EXPECT_EQ(starts(), 2) << "a worker that ran a faulting kernel took another job";
}

TEST_F(WarmWorkers, AFaultedKernelGoesToMemcheckOnlySoRacecheckAndSynccheckStayWarm) {
  // One program plays the check worker (its kernel faults) and, under a fake compute-sanitizer
  // that logs and runs it, each tool's worker (memcheck leaves its mark and settles). Each notes
  // its start as its tool's name, or "check".
  const std::string starts = (dir_ / "starts").string();
  const auto worker = dir_ / "worker";
  std::ofstream(worker)
      << "#!/bin/sh\necho ${CUDOJO_TOOL:-check} >> " << starts
      << "\necho '{\"event\":\"ready\"}' >&3\nwhile read job; do\n"
         "  case \"$job\" in\n"
         "  *'\"mode\":\"sanitize\"'*)\n"
         "    echo '{\"event\":\"result\",\"outcome\":\"completed\",\"report\":{}}' >&3\n"
         "    echo '========= Program hit cudaErrorInvalidDeviceFunction (error 98) on CUDA API "
         "call to cudaFuncGetAttributes.' >> \"$LOG\"\n"
         "    echo '{\"event\":\"idle\",\"reusable\":true,\"why\":\"\"}' >&3;;\n"
         "  *)\n"
      << "    " << compiled() << "    " << echo(result_line("runtime_error", false)) << "    " << idle(true)
      << "  ;;\n  esac\ndone\n";
  chmod(worker.c_str(), 0755);
  const auto sanitizer = dir_ / "sanitizer";
  std::ofstream(sanitizer) << "#!/bin/sh\nexport LOG=$4\necho '========= COMPUTE-SANITIZER' > \"$LOG\"\n"
                              "shift 6\nexec \"$@\"\n";
  chmod(sanitizer.c_str(), 0755);
  WorkerSettings workers;
  workers.worker_executable = worker.string();
  workers.sanitizer_executable = sanitizer.string();
  workers.keep_alive = true;
  workers.limits.worker_settle_ms = 500;
  GpuLease lease;  // as on a server: the tools get their job once the check worker's is done
  PreparedWorkers warm(workers);
  for (int job = 0; job < 2; ++job) {
    CheckRequest checked = warm_request(workers);
    checked.lease = &lease;
    const Report report = run_check(checked, warm);
    EXPECT_EQ(report.verdict, Verdict::kRuntimeError) << report.message;
    EXPECT_EQ(report.sanitizer.skipped, (std::vector<std::string>{"racecheck", "synccheck"}));
    EXPECT_NE(report.sanitizer.note.find("the kernel faulted"), std::string::npos) << report.sanitizer.note;
  }
  std::ifstream in(starts);
  std::map<std::string, int> started;
  for (std::string line; std::getline(in, line);) ++started[line];
  EXPECT_EQ(started["check"], 2) << "a worker that ran a faulting kernel took another job";
  EXPECT_EQ(started["memcheck"], 2) << "memcheck ran the faulting kernel and was kept";
  EXPECT_EQ(started["racecheck"], 1) << "racecheck never got the kernel, yet was started again";
  EXPECT_EQ(started["synccheck"], 1);
}

TEST_F(WarmWorkers, AWorkerThatCannotSettleIsLetGo) {
  const auto workers =
      settings(compiled() + echo(result_line("completed", false)) + idle(false) + "exit 0\n");
  PreparedWorkers warm(workers);
  run_check(warm_request(workers), warm);
  run_check(warm_request(workers), warm);
  EXPECT_EQ(starts(), 2);
}

TEST_F(WarmWorkers, AWorkerStillBusyAfterItsResultIsKilledAtTheSettleDeadline) {
  // A kernel left running: the worker never says idle.
  const auto workers = settings(compiled() + echo(result_line("completed", false)) + "sleep 30\n");
  PreparedWorkers warm(workers);
  const auto started = Clock::now();
  EXPECT_EQ(run_check(warm_request(workers), warm).verdict, Verdict::kWrongAnswer);
  EXPECT_LT(Clock::now() - started, 5s) << "the parent waited past the settle deadline";
  run_check(warm_request(workers), warm);
  EXPECT_EQ(starts(), 2);
}

TEST_F(WarmWorkers, APlantingIsAnsweredOnlyOnceNoOtherJobSharesTheGpu) {
  // The worker asks for the GPU alone, notes when the answer came, gives it back and ends.
  const std::string answered = (dir_ / "answered").string();
  const auto workers =
      settings(compiled() + echo(R"({"event":"gpu_turn","want":"alone"})") + "read grant\ndate +%s%N > " +
               answered + "\n" + echo(R"({"event":"gpu_turn","want":"none"})") +
               echo(result_line("completed", false)) + idle(true));
  GpuLease lease;
  auto other_job = lease.share();
  std::int64_t released_ns = 0;
  std::thread other([&] {
    std::this_thread::sleep_for(400ms);
    released_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    other_job.release();
  });
  const Report report = judged_sharing(workers, lease);
  other.join();
  EXPECT_EQ(report.verdict, Verdict::kWrongAnswer) << report.message;
  std::ifstream in(answered);
  std::int64_t answered_ns = 0;
  in >> answered_ns;
  EXPECT_GE(answered_ns, released_ns) << "the planting went ahead while another job shared the GPU";
  EXPECT_GE(report.timings_ms.at("waited_for_gpu"), 300);
  EXPECT_EQ(lease.state().sharers, 0);
  EXPECT_FALSE(lease.state().alone);
}

// Nanoseconds since the epoch, as `date +%s%N` writes them.
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t read_ns(const std::filesystem::path& path) {
  std::int64_t ns = 0;
  std::ifstream(path) >> ns;
  return ns;
}

TEST_F(WarmWorkers, AWorkersHostWorkBetweenItsTurnsHoldsNothing) {
  // Work on the GPU (a turn held 0.2 s), then half a second of checking on the host, then the
  // result: another slot must get the GPU alone during the checking, before the result.
  const auto result_at = dir_ / "result_at";
  const auto workers =
      settings(compiled() + echo(R"({"event":"gpu_turn","want":"shared"})") + "read grant\nsleep 0.2\n" +
               echo(R"({"event":"gpu_turn","want":"none"})") + "sleep 0.5\ndate +%s%N > " +
               result_at.string() + "\n" + echo(result_line("completed", false)) + idle(true));
  GpuLease lease;
  bool saw_the_worker_share = false;
  std::int64_t alone_at = 0;
  std::thread other([&] {
    const auto give_up = Clock::now() + 5s;
    while (lease.state().sharers == 0 && Clock::now() < give_up) std::this_thread::sleep_for(1ms);
    saw_the_worker_share = lease.state().sharers > 0;
    auto timing = lease.alone();
    alone_at = now_ns();
  });
  EXPECT_EQ(judged_sharing(workers, lease).verdict, Verdict::kWrongAnswer);
  other.join();
  ASSERT_TRUE(saw_the_worker_share) << "the worker's shared turn was never held";
  EXPECT_LT(alone_at, read_ns(result_at)) << "another slot waited for this worker's host work";
}

TEST_F(WarmWorkers, WorkOnTheGpuWaitsForAnotherSlotsTimingAndTheWaitIsNotTheKernels) {
  // The worker notes when its turn was granted; another slot times for 0.4 s, longer than the
  // worker's whole budget before its first phase.
  const auto granted_at = dir_ / "granted_at";
  auto workers =
      settings(compiled() + echo(R"({"event":"gpu_turn","want":"shared"})") + "read grant\ndate +%s%N > " +
               granted_at.string() + "\n" + echo(R"({"event":"gpu_turn","want":"none"})") +
               echo(result_line("completed", false)) + idle(true));
  workers.limits.startup_budget_ms = 250;
  GpuLease lease;
  auto timing = lease.alone();
  std::int64_t released_at = 0;
  std::thread other([&] {
    std::this_thread::sleep_for(400ms);
    released_at = now_ns();
    timing.release();
  });
  const Report report = judged_sharing(workers, lease);
  other.join();
  EXPECT_EQ(report.verdict, Verdict::kWrongAnswer) << report.message;
  EXPECT_GE(read_ns(granted_at), released_at) << "the turn was granted while another slot timed";
  EXPECT_EQ(lease.state().sharers, 0);
}

TEST_F(WarmWorkers, ATurnRequestThatIsNotTextLetsTheLeaseGoAndEndsNothing) {
  const auto workers =
      settings(compiled() + echo(R"({"event":"gpu_turn","want":"shared"})") + "read grant\n" +
               echo(R"({"event":"gpu_turn","want":5})") + echo(R"({"event":"gpu_turn"})") +
               echo(result_line("completed", false)) + idle(true));
  GpuLease lease;
  EXPECT_EQ(judged_sharing(workers, lease).verdict, Verdict::kWrongAnswer);
  EXPECT_EQ(lease.state().sharers, 0);
  EXPECT_FALSE(lease.state().alone);
}

TEST_F(WarmWorkers, OutputIsTheJobsOwn) {
  const auto workers = settings("echo \"printed for $job\" | cut -c1-20\n" + compiled() +
                                echo(result_line("completed", false)) + idle(true));
  PreparedWorkers warm(workers);
  const Report first = run_check(warm_request(workers), warm);
  const Report second = run_check(warm_request(workers), warm);
  EXPECT_EQ(first.output.text, second.output.text) << "one job's output carried into the next";
}

}  // namespace
}  // namespace cudojo
