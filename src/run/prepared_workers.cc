// A slot's set of workers, started ahead of its job and kept warm between jobs (run/judge.h).
#include <memory>
#include <vector>

#include "check/sanitizer.h"
#include "run/judge.h"
#include "run/judge_internal.h"
#include "run/tools.h"

namespace cudojo {

PreparedWorkers::PreparedWorkers(const WorkerSettings& settings) : settings_(settings) {
  start_check_worker();
  if (settings_.sanitize) {
    sanitizers_ = std::make_unique<SanitizerPass>(tool_settings(settings_));
    started_processes_ += static_cast<int>(std::size(kSanitizerTools));
  }
}

void PreparedWorkers::start_check_worker() {
  check_ = std::make_unique<WorkerProcess>(std::vector<std::string>{settings_.worker_executable, "worker"},
                                           settings_.limits.max_output_bytes, settings_.environment);
  check_said_ready_ = false;
  ++started_processes_;
}

void PreparedWorkers::refill(GpuLease* lease, std::chrono::steady_clock::time_point deadline) {
  const bool check_missing = !check_ || !check_->running();
  const bool tools_missing = sanitizers_ && !sanitizers_->ready();
  if (!check_missing && !tools_missing && (!settings_.sanitize || sanitizers_)) return;
  GpuLease::Hold hold;
  if (lease) hold = lease->share();
  if (check_missing) start_check_worker();
  if (settings_.sanitize && !sanitizers_)
    sanitizers_ = std::make_unique<SanitizerPass>(tool_settings(settings_));
  else if (tools_missing)
    sanitizers_->refill();
  wait_until_started(deadline);
}

void PreparedWorkers::discard_those_that_ran_the_job() {
  check_.reset();
  if (sanitizers_) sanitizers_->discard_those_that_ran_the_job();
}

void PreparedWorkers::discard() {
  check_.reset();
  if (sanitizers_) sanitizers_->discard();
}

PreparedWorkers::~PreparedWorkers() = default;
PreparedWorkers::PreparedWorkers(PreparedWorkers&&) noexcept = default;
PreparedWorkers& PreparedWorkers::operator=(PreparedWorkers&&) noexcept = default;

void PreparedWorkers::wait_until_started(std::chrono::steady_clock::time_point deadline) {
  if (sanitizers_) sanitizers_->wait_until_started(deadline);
  if (check_ && !check_said_ready_) check_said_ready_ = wait_for_ready(*check_, deadline);
}

bool PreparedWorkers::ready() {
  return check_ && check_->running() && (!sanitizers_ || sanitizers_->ready());
}

}  // namespace cudojo
