// The check and tool workers' CUDA start-up, on a thread of its own from the process's first
// instruction (run/worker.cc), and the judge's GpuSession for each job after it.
#pragma once

#include <cuda_runtime.h>
#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "compile/nvrtc_compiler.h"
#include "gpu/gpu.h"
#include "run/tool_marks.h"
#include "run/worker_channel.h"

namespace cudojo {

// CUDA's start-up, on a thread of its own from the first instruction: which device, its arch, the
// context and the judge's GpuSession. Creating a context costs a good part of a second on a large
// GPU; meanwhile the main thread reads the job and compiles.
class CudaStartup {
 public:
  using Clock = std::chrono::steady_clock;
  explicit CudaStartup(bool with_judge_kernels)
      : with_judge_kernels_(with_judge_kernels), thread_([this] { run(); }) {}
  ~CudaStartup() {
    if (thread_.joinable()) thread_.join();
  }
  CudaStartup(const CudaStartup&) = delete;
  CudaStartup& operator=(const CudaStartup&) = delete;

  struct Device {
    cudaError_t status = cudaSuccess;
    bool present = false;
    std::string arch;  // "sm_90" when present
  };
  // Waits for the device query (fast: no context yet).
  const Device& device() { return device_future_.get(); }
  // Waits for the context and the judge's session; rethrows the judge's own failure.
  GpuSession& session() {
    session_future_.wait();
    if (error_) std::rethrow_exception(error_);
    return *session_;
  }
  // A reused worker's next job gets a session of its own: the judge's buffers and kernels are made
  // again, so nothing the last job's kernels could have written to is read by the next. The
  // context stays. Call only after session() has returned.
  void renew_session() {
    const bool with_judge_kernels = with_judge_kernels_;
    session_.reset();
    session_ = std::make_unique<GpuSession>(0, default_cuda_include_dir(), with_judge_kernels);
  }
  double device_ms() const { return device_ms_; }
  double session_ms() const { return session_ms_; }

 private:
  void run() {
    const auto started = Clock::now();
    Device device;
    int count = 0;
    device.status = cudaGetDeviceCount(&count);
    device.present = device.status == cudaSuccess && count > 0;
    if (device.present) {
      int major = 0, minor = 0;
      if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) == cudaSuccess &&
          cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) == cudaSuccess) {
        device.arch = fmt::format("sm_{}{}", major, minor);
      } else {
        device.present = false;
      }
    }
    device_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    device_promise_.set_value(device);
    if (device.present) {
      try {
        session_ = std::make_unique<GpuSession>(0, default_cuda_include_dir(), with_judge_kernels_);
        // A sanitizer's worker builds its end-of-job mark now, before it says it is ready.
        if (!with_judge_kernels_) prepare_tool_log_mark(*session_);
      } catch (...) {
        error_ = std::current_exception();
      }
    }
    session_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - started).count() - device_ms_;
    session_promise_.set_value();
    // A worker started ahead of its job is now idle on the GPU until the job arrives: the parent of
    // the job before may wait for this before it times anything.
    send({{"event", "ready"}});
  }

  std::promise<Device> device_promise_;
  std::shared_future<Device> device_future_ = device_promise_.get_future().share();
  std::promise<void> session_promise_;
  std::future<void> session_future_ = session_promise_.get_future();
  std::unique_ptr<GpuSession> session_;
  std::exception_ptr error_;
  double device_ms_ = 0;
  double session_ms_ = 0;
  bool with_judge_kernels_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace cudojo
