// decide() for every way a check can end, with real processes: /bin/sh plays the worker and speaks
// the protocol on fd 3, exactly as the real worker would, and run_worker_session reads it.
#include "run/decide.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "run/session.h"

namespace cudojo {
namespace {

// A stage with a time gate (the gate's rule is what matters here, not the course's data).
Stage timed_stage() {
  Stage stage;
  stage.id = "reduction/3";
  stage.contract = "one_accumulator";
  stage.kernel = "reduce";
  stage.gate.rule = GateRule::kTimeRatio;
  stage.gate.max_time_ratio = 2.0;
  return stage;
}

TestResult test_row(bool ok) {
  return {"exact n=1000", 1000, "exact", 1000, ok ? 1000.0 : 990.0, ok, "bitwise"};
}

Report worker_report(bool tests_pass, std::optional<double> submission_ms, double reference_ms = 0.04) {
  Report report;
  report.stage = "reduction/3";
  report.compile.ok = true;
  report.gpu = GpuInfo{"NVIDIA H200", "sm_90", 132, "13.0", "13.0", 4300.0};
  report.tests = {test_row(true), test_row(tests_pass)};
  if (submission_ms) {
    report.metrics.n = 4194304;
    report.metrics.time_ms = TimeStats{*submission_ms, *submission_ms, *submission_ms, 20};
    report.metrics.reference_time_ms = TimeStats{reference_ms, reference_ms, reference_ms, 20};
    report.metrics.time_ratio = *submission_ms / reference_ms;
  }
  return report;
}

std::string message(const nlohmann::json& body) { return body.dump() + "\n"; }

std::string result_message(const char* outcome, const Report& report) {
  return message({{"event", "result"}, {"outcome", outcome}, {"report", report}});
}

const std::string kCompiled = message({{"event", "compiled"},
                                       {"compile", {{"ok", true}, {"arch", "sm_90"}, {"nvrtc", "13.0"}}},
                                       {"builds", nlohmann::json::object()}});

// A worker written in sh: reads its job line, writes `before` to fd 3; when `after` is given it
// then reads the parent's answer to await_gpu (kept in answer_file) and writes `after`.
class FakeWorker {
 public:
  FakeWorker(const std::string& before, const std::optional<std::string>& after = std::nullopt,
             const std::string& extra_shell = "")
      : dir_(std::filesystem::temp_directory_path() /
             ("cudojo-fake-worker-" + std::to_string(getpid()) + "-" + std::to_string(counter_++))) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "before") << before;
    std::string script = "read job; cat " + (dir_ / "before").string() + " >&3; ";
    if (after) {
      std::ofstream(dir_ / "after") << *after;
      script += "read answer; echo \"$answer\" > " + answer_path() + "; cat " + (dir_ / "after").string() +
                " >&3; ";
    }
    script_ = script + extra_shell;
  }
  ~FakeWorker() { std::filesystem::remove_all(dir_); }

  SessionResult run(const JudgeLimits& limits = kDefaultLimits, const SessionHooks& hooks = {}) {
    WorkerProcess worker({"/bin/sh", "-c", script_}, limits.max_output_bytes);
    return run_worker_session(worker, "{\"job\":1}", limits, hooks);
  }
  std::string answer() const {
    std::ifstream in(answer_path());
    std::string line;
    std::getline(in, line);
    return line;
  }

 private:
  std::string answer_path() const { return (dir_ / "answer").string(); }
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  std::string script_;
};

Report decided(const SessionResult& session, std::optional<SanitizerOutcome> sanitizers = std::nullopt) {
  static const Stage stage = timed_stage();
  DecisionInput input;
  input.stage = &stage;
  input.file_name = "mine.cu";
  input.seed = 7;
  input.session = &session;
  input.sanitizers = std::move(sanitizers);
  return decide(input);
}

TEST(Decide, CompileErrorFromTheWorker) {
  Report report;
  report.stage = "reduction/3";
  report.compile.diagnostics.push_back({"mine.cu", 3, "error", "expected a \";\""});
  FakeWorker worker(kCompiled + result_message("compile_error", report));
  const Report got = decided(worker.run());
  EXPECT_EQ(got.verdict, Verdict::kCompileError);
  ASSERT_EQ(got.compile.diagnostics.size(), 1u);
  EXPECT_EQ(got.compile.diagnostics[0].line, 3);
  EXPECT_EQ(got.file, "mine.cu");
  EXPECT_EQ(got.seed, 7u);
}

TEST(Decide, NoDeviceIsTheJudgesNotTheLearners) {
  Report report;
  report.stage = "reduction/3";
  report.error_name = "cudaErrorNoDevice";
  FakeWorker worker(kCompiled + result_message("no_device", report));
  EXPECT_EQ(decided(worker.run()).verdict, Verdict::kNoDevice);
}

TEST(Decide, AFaultIsARuntimeErrorWithCudasName) {
  Report report = worker_report(false, std::nullopt);
  report.error_name = "cudaErrorIllegalAddress";
  FakeWorker worker(kCompiled + result_message("runtime_error", report));
  const Report got = decided(worker.run());
  EXPECT_EQ(got.verdict, Verdict::kRuntimeError);
  EXPECT_EQ(got.error_name, "cudaErrorIllegalAddress");
}

TEST(Decide, AFaultKeepsWhatMemcheckSaidOfIt) {
  Report report = worker_report(false, std::nullopt);
  report.error_name = "cudaErrorIllegalAddress";
  FakeWorker worker(kCompiled + result_message("runtime_error", report));
  SanitizerOutcome sanitizers;
  sanitizers.summary.requested = sanitizers.summary.ran = true;
  sanitizers.findings.push_back({"out_of_bounds", "a load past the end of X", 5});
  const Report got = decided(worker.run(), sanitizers);
  EXPECT_EQ(got.verdict, Verdict::kRuntimeError);
  ASSERT_EQ(got.findings.size(), 1u);
  EXPECT_EQ(got.findings[0].line, 5);
  EXPECT_TRUE(got.sanitizer.ran);
}

TEST(Decide, ADeadlineBeforeTheCompileIsACompileError) {
  JudgeLimits limits;
  limits.startup_budget_ms = 200;
  FakeWorker worker("", std::nullopt, "sleep 30");
  const SessionResult session = worker.run(limits);
  EXPECT_EQ(session.ending, SessionResult::Ending::kDeadline);
  const Report got = decided(session);
  EXPECT_EQ(got.verdict, Verdict::kCompileError);
  EXPECT_NE(got.message.find("compiling did not finish"), std::string::npos) << got.message;
}

TEST(Decide, ADeadlineInAPhaseIsATimeLimitNamingThePhase) {
  JudgeLimits limits;
  limits.phase_floor_ms = 200;
  limits.phase_cap_ms = 300;
  FakeWorker worker(kCompiled + message({{"event", "phase"}, {"name", "tests"}, {"launches", 4}}),
                    std::nullopt, "sleep 30");
  const Report got = decided(worker.run(limits));
  EXPECT_EQ(got.verdict, Verdict::kTimeLimitExceeded);
  EXPECT_NE(got.message.find("tests phase"), std::string::npos) << got.message;
}

TEST(Decide, AWorkerThatDiesWithoutAResultIsAnInternalError) {
  FakeWorker worker(kCompiled, std::nullopt, "echo 'worker: something broke' >&2; exit 3");
  const Report got = decided(worker.run());
  EXPECT_EQ(got.verdict, Verdict::kInternalError);
  EXPECT_NE(got.message.find("exited with code 3"), std::string::npos) << got.message;
  EXPECT_NE(got.message.find("something broke"), std::string::npos) << got.message;
}

TEST(Decide, AMalformedMessageIsAnInternalError) {
  FakeWorker worker("this is not json\n");
  const SessionResult session = worker.run();
  EXPECT_EQ(session.ending, SessionResult::Ending::kMalformed);
  EXPECT_EQ(decided(session).verdict, Verdict::kInternalError);
}

TEST(Decide, AResultThatDoesNotReadIsAnInternalErrorThatSaysSo) {
  FakeWorker worker(kCompiled +
                    message({{"event", "result"}, {"outcome", "completed"}, {"report", {{"stage", 5}}}}));
  const Report got = decided(worker.run());
  EXPECT_EQ(got.verdict, Verdict::kInternalError);
  EXPECT_NE(got.message.find("could not be read"), std::string::npos) << got.message;
}

TEST(Decide, CorrectAndFastIsAcceptedAfterTheGpuWasGranted) {
  bool asked = false;
  SessionHooks hooks;
  hooks.on_await_gpu = [&] {
    asked = true;
    return true;
  };
  FakeWorker worker(kCompiled + message({{"event", "await_gpu"}}),
                    result_message("completed", worker_report(true, 0.05)));
  const SessionResult session = worker.run(kDefaultLimits, hooks);
  EXPECT_TRUE(asked);
  EXPECT_EQ(nlohmann::json::parse(worker.answer()), (nlohmann::json{{"event", "gpu"}, {"measure", true}}));
  EXPECT_TRUE(session.timings_ms.count("held_for_tools"));
  const Report got = decided(session);
  EXPECT_EQ(got.verdict, Verdict::kAccepted);
  ASSERT_TRUE(got.gate);
  EXPECT_NEAR(*got.gate->value, 1.25, 1e-9);
}

TEST(Decide, CorrectButSlowIsTooSlow) {
  FakeWorker worker(kCompiled + result_message("completed", worker_report(true, 0.2)));
  const Report got = decided(worker.run());
  EXPECT_EQ(got.verdict, Verdict::kTooSlow);
  EXPECT_NE(got.message.find("5.00x"), std::string::npos) << got.message;
}

// A stage gated against CUB timed in the same run: the reference's time does not matter, and no
// calibration stands in for the baseline.
TEST(Decide, ABaselineGateComparesWithTheLibraryTimedInTheSameRun) {
  Stage stage = timed_stage();
  stage.gate.rule = GateRule::kBaselineRatio;
  stage.gate.baseline = "cub_reduce";
  stage.gate.max_time_ratio = 1.25;
  for (const auto& [submission_ms, verdict] :
       {std::pair{0.070, Verdict::kAccepted}, std::pair{0.090, Verdict::kTooSlow}}) {
    Report report = worker_report(true, submission_ms, /*reference_ms=*/0.010);  // 7x the reference
    report.metrics.baseline_name = "CUB DeviceReduce::Sum";
    report.metrics.baseline_time_ms = TimeStats{0.064, 0.063, 0.066, 20};
    report.metrics.baseline_ratio = submission_ms / 0.064;
    FakeWorker worker(kCompiled + result_message("completed", report));
    const SessionResult session = worker.run();
    DecisionInput input;
    input.stage = &stage;
    input.file_name = "mine.cu";
    input.session = &session;
    const Report got = decide(input);
    EXPECT_EQ(got.verdict, verdict) << submission_ms;
    ASSERT_TRUE(got.gate);
    EXPECT_NEAR(*got.gate->value, submission_ms / 0.064, 1e-9);
    EXPECT_NE(got.gate->rule.find("1.25 x CUB DeviceReduce::Sum"), std::string::npos) << got.gate->rule;
    if (verdict == Verdict::kTooSlow) {
      EXPECT_NE(got.message.find("1.41x CUB DeviceReduce::Sum's time"), std::string::npos) << got.message;
    }
  }
}

TEST(Decide, AFailedTestIsAWrongAnswer) {
  FakeWorker worker(kCompiled + result_message("completed", worker_report(false, std::nullopt)));
  const Report got = decided(worker.run());
  EXPECT_EQ(got.verdict, Verdict::kWrongAnswer);
  EXPECT_EQ(got.message, "1 of 2 tests failed");
  EXPECT_FALSE(got.gate);
}

TEST(Decide, ASanitizerFindingMakesACorrectLookingKernelWrongAndDropsItsTimes) {
  SessionHooks hooks;
  hooks.on_await_gpu = [] { return false; };  // the tools found something: do not measure
  FakeWorker worker(kCompiled + message({{"event", "await_gpu"}}),
                    result_message("completed", worker_report(true, 0.05)));
  const SessionResult session = worker.run(kDefaultLimits, hooks);
  EXPECT_EQ(nlohmann::json::parse(worker.answer())["measure"], false);
  SanitizerOutcome sanitizers;
  sanitizers.summary.requested = sanitizers.summary.ran = true;
  sanitizers.summary.tools.push_back({"racecheck", 2, 0.6});
  sanitizers.findings.push_back({"shared_race", "two threads touched one shared slot", 11});
  sanitizers.timings_ms["sanitizer.racecheck"] = 600;
  const Report got = decided(session, sanitizers);
  EXPECT_EQ(got.verdict, Verdict::kWrongAnswer);
  ASSERT_EQ(got.findings.size(), 1u);
  EXPECT_EQ(got.findings[0].line, 11);
  EXPECT_FALSE(got.metrics.time_ms);
  EXPECT_DOUBLE_EQ(got.timings_ms.at("sanitizer.racecheck"), 600);
}

TEST(Decide, ATestFindingGetsItsLineFromTheSanitizerInsteadOfRepeating) {
  std::vector<Finding> findings = {
      {"shared_race", "the sums differ between identical launches", std::nullopt}};
  add_or_locate(findings, {"shared_race", "racecheck saw it", 11});
  add_or_locate(findings, {"shared_race", "racecheck saw it", 11});
  add_or_locate(findings, {"shared_race", "and elsewhere", 14});
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].line, 11);
  EXPECT_EQ(findings[1].line, 14);
}

}  // namespace
}  // namespace cudojo
