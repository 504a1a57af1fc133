#include "serve/dispatcher.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "common/process_registry.h"

namespace cudojo {

namespace {

// A folder of its own (mkdtemp) for one profiled job's Nsight Compute report, removed with whatever
// is in it when the job is recorded or fails; empty when none could be made (no report is kept).
struct ReportFolder {
  std::filesystem::path path;
  ReportFolder() {
    std::string name = (std::filesystem::temp_directory_path() / "cudojo-ncu-XXXXXX").string();
    if (mkdtemp(name.data())) path = name;
  }
  ~ReportFolder() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove_all(path, ignored);
  }
  ReportFolder(const ReportFolder&) = delete;
  ReportFolder& operator=(const ReportFolder&) = delete;
};

// The report the judge kept at `file`, when it kept one within the limit the store keeps.
std::optional<std::string> read_kept_report(const CheckRequest::NcuReportOutcome& outcome,
                                            const std::string& file) {
  if (!outcome.kept || outcome.bytes == 0 || outcome.bytes > JudgeLimits{}.max_ncu_report_bytes)
    return std::nullopt;
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  if (!in.good() && !in.eof()) return std::nullopt;
  if (bytes.empty() || bytes.size() > JudgeLimits{}.max_ncu_report_bytes) return std::nullopt;
  return bytes;
}

}  // namespace

Dispatcher::Dispatcher(Store& store, CourseCatalog& course, Settings settings)
    : store_(store), course_(course), settings_(std::move(settings)) {}

Dispatcher::~Dispatcher() { stop(); }

void Dispatcher::start() {
  last_arch_.assign(static_cast<std::size_t>(settings_.workers), "");
  leases_.clear();
  for (int gpu = 0; gpu < std::max(1, settings_.gpus); ++gpu) leases_.push_back(std::make_unique<GpuLease>());
  // One profiling process per GPU does every profile on it (run/gpu_profiler.h); started ahead by
  // the slots' refills.
  profilers_.clear();
  for (int gpu = 0; gpu < settings_.gpus; ++gpu) {
    profilers_.push_back(
        std::make_unique<GpuProfiler>(settings_.worker_executable, gpu_environment(gpu), kDefaultLimits));
  }
  for (int slot = 0; slot < settings_.workers; ++slot)
    threads_.emplace_back([this, slot] { run_slot(slot); });
}

void Dispatcher::stop() {
  stopping_ = true;
  wake_.notify_all();
  store_retry_.notify_all();
  {
    std::unique_lock lock(mutex_);
    job_ended_.wait_for(lock, std::chrono::milliseconds(settings_.stop_grace_ms),
                        [this] { return running_jobs_ == 0; });
  }
  if (running_jobs_ > 0) {
    abandoning_ = true;
    const int killed = kill_registered_process_groups();
    fmt::print(stderr,
               "cudojo serve: stopping: {} job(s) still running after {} ms go back to the queue ({} "
               "process group(s) killed)\n",
               running_jobs_.load(), settings_.stop_grace_ms, killed);
  }
  for (auto& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
  profilers_.clear();
}

void Dispatcher::notify() { wake_.notify_one(); }

std::vector<JobClaim> Dispatcher::running_claims() {
  std::lock_guard lock(mutex_);
  std::vector<JobClaim> claims;
  for (const auto& [id, claim] : running_) claims.push_back(claim);
  return claims;
}

WorkerProcess::Environment Dispatcher::gpu_environment(int gpu) const {
  const std::string id = static_cast<std::size_t>(gpu) < settings_.gpu_ids.size()
                             ? settings_.gpu_ids[static_cast<std::size_t>(gpu)]
                             : std::to_string(gpu);
  return {{"CUDA_VISIBLE_DEVICES", id}};
}

WorkerSettings Dispatcher::worker_settings(int slot) const {
  WorkerSettings workers;
  workers.worker_executable = settings_.worker_executable;
  workers.keep_alive = true;
  if (settings_.gpus > 0) workers.environment = gpu_environment(slot % settings_.gpus);
  return workers;
}

void Dispatcher::run_slot(int slot) {
  // The slot's workers are started before its first job and kept warm: a job begins with their
  // CUDA contexts made and compute-sanitizer attached (a sanitizer's start-up takes longer than the
  // rest of a check). Workers let go after a job are replaced before the next claim, sharing the
  // GPU's lease while they start, so no start-up runs beside another slot's timing.
  std::optional<PreparedWorkers> workers;
  auto refill = [&] {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long long>(kDefaultLimits.startup_budget_ms));
    try {
      if (!workers) {
        GpuLease::Hold hold = lease_of(slot).share();
        workers.emplace(worker_settings(slot));
        workers->wait_until_started(deadline);
      } else if (!workers->ready()) {
        workers->refill(&lease_of(slot), deadline);
      }
      if (GpuProfiler* profiler = profiler_of(slot)) profiler->refill(&lease_of(slot), deadline);
    } catch (const std::exception& error) {
      fmt::print(stderr, "cudojo serve: cannot start workers ahead of a job: {}\n", error.what());
      workers.reset();
    }
  };
  bool store_failing = false;  // said once per outage, not at every poll
  while (!stopping_) {
    refill();
    std::optional<JobRecord> job;
    try {
      job = store_.claim_next(settings_.holder, settings_.lease_seconds);
      if (store_failing && slot == 0)
        fmt::print(stderr, "cudojo serve: the store answers again; taking jobs\n");
      store_failing = false;
    } catch (const std::exception& error) {
      if (!store_failing && slot == 0)
        fmt::print(stderr, "cudojo serve: cannot take a job: {}\n", error.what());
      store_failing = true;
    }
    if (!job) {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, std::chrono::milliseconds(settings_.idle_poll_ms));
      continue;
    }
    job_changed();  // running now, and every job behind it one place nearer
    {
      std::lock_guard lock(mutex_);
      ++running_jobs_;
      running_[job->id] = job->claim();
    }
    if (!workers) {
      // It could not start ahead: started now, sharing the GPU while it starts.
      GpuLease::Hold hold = lease_of(slot).share();
      workers.emplace(worker_settings(slot));
      workers->wait_until_started(
          std::chrono::steady_clock::now() +
          std::chrono::milliseconds(static_cast<long long>(kDefaultLimits.startup_budget_ms)));
    }
    run_job(slot, *job, *workers);
    {
      std::lock_guard lock(mutex_);
      --running_jobs_;
      running_.erase(job->id);
    }
    job_ended_.notify_all();
  }
}

void Dispatcher::run_job(int slot, const JobRecord& job, PreparedWorkers& workers) {
  Report report;
  // A profile (issue #28): hot spots in the report, and the Nsight Compute report written here,
  // then kept in the store with the job.
  std::optional<ReportFolder> report_folder;
  CheckRequest::NcuReportOutcome ncu_outcome;
  std::string ncu_file;
  std::optional<std::string> ncu_report;
  // The course as it is now, kept until this job is recorded: a reload meanwhile does not move it.
  const auto course = course_.current();
  const Stage* stage = find_stage(course->stages, job.stage);
  try {
    if (!stage) throw std::runtime_error(fmt::format("stage '{}' is no longer in the course", job.stage));
    CheckRequest request;
    request.stage = stage;
    request.stage_version = course->versions.at(stage->id);
    request.source = job.source;
    const Language language = parse_language(job.language).value_or(Language::kCuda);
    request.language = language;
    request.file_name = "submission" + std::string(source_extension(language));
    request.workers = worker_settings(slot);
    request.cuda_include_dir = settings_.cuda_include_dir;
    request.calibration_dir = settings_.calibration_dir;
    request.all_metrics = settings_.all_metrics;
    request.lease = &lease_of(slot);
    request.gpu_profiler = profiler_of(slot);
    if (job.profile) {
      request.hot_spots = true;
      report_folder.emplace();
      if (!report_folder->path.empty()) {
        ncu_file = (report_folder->path / fmt::format("cudojo-job-{}.ncu-rep", job.id)).string();
        request.ncu_report_path = ncu_file;
        request.ncu_report = &ncu_outcome;
      }
    }
    if (last_arch_[slot].size()) request.arch_guess = last_arch_[slot];
    request.on_progress = [&](std::string_view phase) {
      try {
        store_.set_phase(job.claim(), std::string(phase));
        job_changed();
      } catch (const StoreError&) {
        // Progress is for the page; the store being away must not stop the judging.
      }
    };
    report = run_check(request, workers);
    if (!report.compile.arch.empty()) last_arch_[slot] = report.compile.arch;
    if (!ncu_file.empty()) {
      ncu_report = read_kept_report(ncu_outcome, ncu_file);
      if (!ncu_report && !ncu_outcome.note.empty())
        fmt::print(stderr, "cudojo serve: job {}: no Nsight Compute report kept: {}\n", job.id,
                   ncu_outcome.note);
    }
  } catch (const std::exception& error) {
    report = Report{};
    report.stage = job.stage;
    report.verdict = Verdict::kInternalError;
    report.message = fmt::format("the server could not judge this job: {}", error.what());
    workers.discard();
  }
  report.judged_by = JudgedBy{settings_.node_name, settings_.host,
                              report.gpu && !report.gpu->name.empty() ? report.gpu->name : settings_.gpu};
  if (abandoning_) {
    // Its workers were killed by the stop, not by anything in the job: it runs again later.
    try {
      store_.requeue(job.claim(), "queued again: the server stopped while running it");
      job_changed();
    } catch (const std::exception& error) {
      fmt::print(stderr, "cudojo serve: cannot requeue job {} (its lease will): {}\n", job.id, error.what());
    }
    return;
  }
  report_folder.reset();  // the bytes are in memory now
  record(job.claim(), report, ncu_report);
}

void Dispatcher::record(const JobClaim& claim, const Report& report,
                        const std::optional<std::string>& ncu_report) {
  const std::string verdict(to_string(report.verdict));
  const std::string report_json = json_text(nlohmann::json(report));
  for (bool said_unavailable = false;;) {
    try {
      // The report first, under the same claim, so a job is never seen done before its report is.
      if (ncu_report && !store_.keep_ncu_report(claim, *ncu_report))
        fmt::print(stderr, "cudojo serve: job {}: its Nsight Compute report was not kept\n", claim.id);
      if (store_.finish(claim, verdict, report_json)) {
        job_changed();
        fmt::print("cudojo serve: job {} recorded: {}\n", claim.id, verdict);
      } else {
        fmt::print("cudojo serve: job {}: result not recorded, node {} no longer holds it\n", claim.id,
                   claim.holder);
      }
      std::fflush(stdout);
      return;
    } catch (const StoreError& error) {
      if (error.code() != StoreErrorCode::kUnavailable || stopping_) {
        fmt::print(stderr, "cudojo serve: cannot record job {}; it goes back to the queue: {}\n", claim.id,
                   error.what());
        // Best effort: when this fails too, the lease (no longer renewed) runs out and any node
        // puts the job back.
        try {
          store_.requeue(claim, "queued again: its result could not be recorded");
        } catch (const StoreError&) {
        }
        return;
      }
      if (!said_unavailable) {
        fmt::print(stderr, "cudojo serve: job {} waits to be recorded: {}\n", claim.id, error.what());
        said_unavailable = true;
      }
    }
    std::unique_lock lock(mutex_);
    store_retry_.wait_for(lock, std::chrono::milliseconds(settings_.store_retry_ms),
                          [this] { return stopping_.load(); });
  }
}

}  // namespace cudojo
