#include "gpu/gpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "common/limits.h"

namespace cudojo {

namespace {

constexpr std::size_t kProbeBytes = std::size_t{1} << 30;
constexpr int kProbeRuns = 5;

}  // namespace

GpuSession::GpuSession(int device, const std::string& cuda_include_dir, bool with_judge_kernels) {
  CUDOJO_CUDA(cudaSetDevice(device));
  // Device printf writes into this buffer and the host prints it at each synchronization; a
  // printf on every one of four million threads would otherwise cost seconds per launch. What does
  // not fit is dropped on the device (the report says the output was cut).
  CUDOJO_CUDA(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, kDefaultLimits.device_printf_bytes));
  cudaDeviceProp prop{};
  CUDOJO_CUDA(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  CUDOJO_CUDA(cudaDriverGetVersion(&driver));
  CUDOJO_CUDA(cudaRuntimeGetVersion(&runtime));
  info_.name = prop.name;
  info_.arch = fmt::format("sm_{}{}", prop.major, prop.minor);
  info_.sm_count = prop.multiProcessorCount;
  info_.driver = fmt::format("{}.{}", driver / 1000, (driver % 1000) / 10);
  info_.runtime = fmt::format("{}.{}", runtime / 1000, (runtime % 1000) / 10);

  CUDOJO_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDOJO_CUDA(cudaEventCreate(&start_));
  CUDOJO_CUDA(cudaEventCreate(&stop_));
  if (!with_judge_kernels) return;

  // Compiled once per process and arch: a worker reused for many jobs makes a fresh session for
  // each (nothing a learner's kernel could have scribbled on survives), without compiling again.
  struct JudgeModule {
    std::vector<char> cubin;
    std::string poison_symbol;
  };
  static std::mutex compiled_mutex;
  static std::map<std::string, JudgeModule> compiled;
  JudgeModule module;
  {
    std::lock_guard lock(compiled_mutex);
    auto found = compiled.find(info_.arch);
    if (found == compiled.end()) {
      JudgeModule fresh;
      fresh.cubin = compile_judge_kernel(kJudgeKernels, "cudojo_poison_shared", info_.arch, cuda_include_dir,
                                         fresh.poison_symbol);
      found = compiled.emplace(info_.arch, std::move(fresh)).first;
    }
    module = found->second;
  }
  const std::vector<char>& cubin = module.cubin;
  const std::string& poison_symbol = module.poison_symbol;
  poison_shared_bytes_ = static_cast<int>(prop.sharedMemPerBlockOptin);
  poison_kernel_ = std::make_unique<LoadedKernel>(cubin, poison_symbol, poison_shared_bytes_);
  probe_kernel_ = std::make_unique<LoadedKernel>(cubin, "cudojo_read_probe", 0);
  noise_kernel_ = std::make_unique<LoadedKernel>(cubin, "cudojo_noise", 0);
  compare_kernel_ = std::make_unique<LoadedKernel>(cubin, "cudojo_count_changed", 0);
  compare_result_ = DeviceBuffer<unsigned long long>(2);
  noise_scratch_ = DeviceBuffer<unsigned>(1024);
  CUDOJO_CUDA(cudaStreamCreateWithFlags(&noise_stream_, cudaStreamNonBlocking));
  l2_flush_ = DeviceBuffer<unsigned char>(
      std::max<std::size_t>(2 * static_cast<std::size_t>(prop.l2CacheSize), 1 << 20));
  l2_flush_sink_ = DeviceBuffer<float>(1);
  fill_async(l2_flush_.get(), 0, l2_flush_.bytes());
  sync_judge();
}

GpuSession::~GpuSession() {
  poison_kernel_.reset();
  probe_kernel_.reset();
  noise_kernel_.reset();
  compare_kernel_.reset();
  if (noise_stream_) cudaStreamDestroy(noise_stream_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

namespace {

const LoadedKernel& judge_kernel(const std::unique_ptr<LoadedKernel>& kernel) {
  if (!kernel) throw std::logic_error("this GPU session was started without the judge's kernels");
  return *kernel;
}

}  // namespace

void GpuSession::poison_shared(float pattern) {
  if (!plants_shared_) return;
  if (!self_planting_.empty()) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &pattern, sizeof(bits));
    for (const LoadedKernel* kernel : self_planting_) kernel->arm_planting(bits, stream_);
    return;
  }
  if (!planting_) {
    // A planting's turn begins with this process's earlier work finished (gpu/gpu_turns.h).
    sync_judge();
    gpu_turns::pin_planting();
    planting_ = true;
  }
  int words = poison_shared_bytes_ / static_cast<int>(sizeof(float));
  void* args[] = {&pattern, &words};
  // Several blocks per SM so every SM runs at least one, whatever order the scheduler picks.
  judge_kernel(poison_kernel_)
      .launch(dim3(info_.sm_count * 4), dim3(1024), poison_shared_bytes_, args, stream_);
}

GpuSession::PlantingSpan::PlantingSpan(GpuSession& gpu) : gpu_(gpu) {
  if (!gpu_.plants_shared_ || !gpu_.self_planting_.empty()) return;
  gpu_.sync_judge();  // the span begins with nothing of this process's on the GPU
  gpu_turns::pin_span();
  pinned_ = true;
}

GpuSession::PlantingSpan::~PlantingSpan() {
  if (pinned_) gpu_turns::unpin_span();
}

void GpuSession::start_noise(std::uint32_t seed) {
  // One block per SM beside whatever else runs there; about 0.1-0.5 ms of atomics, longer than a
  // memory-speed pass over 2^26 floats and its fold.
  int rounds = 1000;
  void* args[] = {nullptr, &seed, &rounds};
  unsigned* scratch = noise_scratch_.get();
  args[0] = &scratch;
  gpu_turns::pin_noise();
  noise_running_ = true;
  judge_kernel(noise_kernel_).launch(dim3(info_.sm_count), dim3(256), 0, args, noise_stream_);
}

void GpuSession::wait_noise() {
  if (!noise_stream_) return;
  const cudaError_t waited = cudaStreamSynchronize(noise_stream_);
  if (noise_running_) {
    noise_running_ = false;
    gpu_turns::unpin_noise();
  }
  CUDOJO_CUDA(waited);
}

GpuSession::ChangedWords GpuSession::count_changed_words(const void* now, const void* before,
                                                         std::size_t words) {
  const unsigned long long start[2] = {0, ~0ull};
  copy_async(compare_result_.get(), start, sizeof(start), cudaMemcpyHostToDevice);
  const auto* now_words = static_cast<const unsigned*>(now);
  const auto* before_words = static_cast<const unsigned*>(before);
  long long count = static_cast<long long>(words);
  unsigned long long* result = compare_result_.get();
  void* args[] = {&now_words, &before_words, &count, &result};
  judge_kernel(compare_kernel_).launch(dim3(info_.sm_count * 4), dim3(512), 0, args, stream_);
  unsigned long long got[2] = {0, 0};
  download(got, compare_result_.get(), sizeof(got));
  ChangedWords changed;
  changed.changed = static_cast<std::int64_t>(got[0]);
  changed.first = got[0] ? static_cast<std::int64_t>(got[1]) : -1;
  return changed;
}

void GpuSession::flush_l2() {
  // Reading, not writing: a write flush leaves the L2 full of dirty lines, and the next kernel
  // would pay for writing them back (CUPTI counted that as the kernel's own DRAM traffic).
  const float4* pointer = reinterpret_cast<const float4*>(l2_flush_.get());
  long long count = static_cast<long long>(l2_flush_.bytes() / sizeof(float4));
  float* sink = l2_flush_sink_.get();
  void* args[] = {&pointer, &count, &sink};
  judge_kernel(probe_kernel_).launch(dim3(info_.sm_count * 4), dim3(512), 0, args, stream_);
}

double GpuSession::measure_peak_read_gbps() {
  DeviceBuffer<float> data(kProbeBytes / sizeof(float));
  DeviceBuffer<float> sink(1);
  fill_async(data.get(), 0, data.bytes());
  const float4* pointer = reinterpret_cast<const float4*>(data.get());
  long long count = static_cast<long long>(kProbeBytes / sizeof(float4));
  float* sink_pointer = sink.get();
  void* args[] = {&pointer, &count, &sink_pointer};
  const dim3 grid(info_.sm_count * 4), block(512);
  double best_ms = 1e30;
  for (int run = 0; run < kProbeRuns + 1; ++run) {
    double ms = time_once([&] { flush_l2(); },
                          [&] { judge_kernel(probe_kernel_).launch(grid, block, 0, args, stream_); });
    if (run > 0) best_ms = std::min(best_ms, ms);  // the first run is a warm-up
  }
  info_.peak_read_gbps = static_cast<double>(kProbeBytes) / (best_ms * 1e-3) / 1e9;
  return info_.peak_read_gbps;
}

double GpuSession::time_once(const std::function<void()>& prepare, const std::function<void()>& launch) {
  prepare();
  CUDOJO_CUDA(cudaEventRecord(start_, stream_));
  launch();
  CUDOJO_CUDA(cudaEventRecord(stop_, stream_));
  CUDOJO_CUDA(cudaEventSynchronize(stop_));
  gpu_turns::drained();
  float ms = 0;
  CUDOJO_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

void GpuSession::sync_learner(const std::string& what) {
  cudaError_t error = cudaStreamSynchronize(stream_);
  if (error == cudaSuccess) error = cudaGetLastError();
  if (planting_) {
    // The planted launch has finished (or faulted): the GPU may be shared again.
    planting_ = false;
    gpu_turns::unpin_planting();
  }
  if (error == cudaSuccess) gpu_turns::drained();
  if (error != cudaSuccess) {
    throw LearnerFault(cudaGetErrorName(error),
                       fmt::format("{}: {} ({})", what, cudaGetErrorName(error), cudaGetErrorString(error)));
  }
}

void GpuSession::sync_judge() {
  CUDOJO_CUDA(cudaStreamSynchronize(stream_));
  gpu_turns::drained();
}

void GpuSession::copy_async(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind) {
  gpu_turns::enqueue();
  CUDOJO_CUDA(cudaMemcpyAsync(to, from, bytes, kind, stream_));
}

void GpuSession::fill_async(void* device, int byte, std::size_t bytes) {
  gpu_turns::enqueue();
  CUDOJO_CUDA(cudaMemsetAsync(device, byte, bytes, stream_));
}

void GpuSession::upload(void* device, const void* host, std::size_t bytes) {
  copy_async(device, host, bytes, cudaMemcpyHostToDevice);
  sync_judge();
}

void GpuSession::download(void* host, const void* device, std::size_t bytes) {
  copy_async(host, device, bytes, cudaMemcpyDeviceToHost);
  sync_judge();
}

}  // namespace cudojo
