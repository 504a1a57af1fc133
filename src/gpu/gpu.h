// The worker's GPU toolkit: device buffers, kernels loaded from NVRTC cubins, the judge's own
// helper kernels (shared-memory poisoning, the read-bandwidth probe), L2 flushing and event timing.
// Runs only inside the worker process (and `cudojo lab`). Every resource is owned by an object (RAII).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.h"
#include "compile/kernel_image.h"
#include "gpu/gpu_info.h"
#include "gpu/gpu_turns.h"

namespace cudojo {

// A CUDA error that surfaced after learner code ran: the learner's runtime_error, not the judge's.
class LearnerFault : public std::runtime_error {
 public:
  LearnerFault(std::string error_name, std::string message)
      : std::runtime_error(std::move(message)), error_name_(std::move(error_name)) {}
  const std::string& error_name() const { return error_name_; }

 private:
  std::string error_name_;
};

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    // The driver may clear the memory it hands out on the GPU: the process holds its turn meanwhile.
    gpu_turns::brief_begin();
    const cudaError_t allocated = cudaMalloc(&data_, count * sizeof(T));
    gpu_turns::brief_end();
    CUDOJO_CUDA(allocated);
  }
  ~DeviceBuffer() {
    if (!data_) return;
    gpu_turns::brief_begin();
    cudaFree(data_);
    gpu_turns::brief_end();
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) {
    other.data_ = nullptr;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  T* get() const { return data_; }
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// One argument as a contract passes it, whatever the kernel's language: a device array of `count`
// elements, or one int. The loaded kernel lays it out as its parameter ABI wants.
struct KernelArgument {
  static KernelArgument array(const void* data, std::int64_t count, std::size_t element_bytes) {
    return {data, count, element_bytes, 0, true};
  }
  static KernelArgument scalar(int value) { return {nullptr, 0, 0, value, false}; }

  const void* data;
  std::int64_t count;
  std::size_t element_bytes;
  int value;
  bool is_array;
};

// One kernel from a cubin or PTX, loaded as a CUDA library (the driver compiles PTX at load).
// Shared memory is configured at load: the stage's dynamic bytes are allowed, and the carveout is
// set to all-shared so that launching it right after the poisoning kernel reuses the SM's shared
// memory as the poisoner left it.
class LoadedKernel {
 public:
  LoadedKernel(const std::vector<char>& image, const std::string& symbol, int dynamic_shared_bytes,
               ParameterAbi abi = ParameterAbi::kPlain);
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  // `args` point at the values of the kernel's own parameters (the judge's kernels).
  void launch(dim3 grid, dim3 block, std::size_t shared_bytes, void** args, cudaStream_t stream) const;
  // A contract's launch, laid out for this kernel's ABI.
  void launch(dim3 grid, dim3 block, std::size_t shared_bytes, std::span<const KernelArgument> args,
              cudaStream_t stream) const;
  // Printing costs a launch on every thread far more than the work (device printf serializes on
  // one buffer): after its first launch, this kernel's launches run `quiet`, the same source
  // built with printf compiled out. The first launch's output is what the learner sees.
  void print_only_first_launch(std::unique_ptr<LoadedKernel> quiet) { quiet_ = std::move(quiet); }

  // Copies the loaded code's __device__ variable `name` (an extern "C" name) to the host, at most
  // `count` elements; empty when the code has no such variable.
  std::vector<std::uint32_t> read_global(const char* name, std::size_t count) const;

  // The tests' build of this kernel (compile/ptx_planting.h), which fills each block's shared memory
  // with a pattern before the kernel's own code. Throws CudaError when it has no pattern variable.
  void plant_through(std::unique_ptr<LoadedKernel> planted);
  bool plants_itself() const { return planted_ != nullptr; }
  // The next launch of this kernel runs the planted build, its blocks filled with `pattern_bits`
  // (set on `stream`, ahead of that launch); the launches after it run this build again.
  void arm_planting(std::uint32_t pattern_bits, cudaStream_t stream) const;

 private:
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t kernel_ = nullptr;
  ParameterAbi abi_;
  std::unique_ptr<LoadedKernel> quiet_;
  mutable int launches_ = 0;
  std::unique_ptr<LoadedKernel> planted_;
  void* planted_pattern_ = nullptr;  // the planted build's pattern word, on the device
  mutable std::uint32_t pattern_bits_ = 0;
  mutable bool armed_ = false;
};

// The parameter values of one launch in `abi`'s layout, each 8 bytes wide (a 32-bit parameter
// reads the low half), and the pointers cudaLaunchKernel wants. Plain C++, tested without a GPU.
struct LaidOutArguments {
  std::vector<std::uint64_t> values;
  std::vector<void*> pointers;
};
LaidOutArguments lay_out_arguments(ParameterAbi abi, std::span<const KernelArgument> args);

class GpuSession {
 public:
  // A session for one sanitized launch needs none of the judge's own kernels (poisoning, flushing,
  // the bandwidth probe): without them it starts faster under a sanitizer, which instruments
  // every module loaded.
  GpuSession(int device, const std::string& cuda_include_dir, bool with_judge_kernels = true);
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const GpuInfo& info() const { return info_; }
  cudaStream_t stream() const { return stream_; }

  // Fills every SM's shared memory with `pattern` so the next kernel finds it there. When other
  // processes share the GPU (gpu/gpu_turns.h), from here to the next sync_learner() this process
  // has it alone. With kernels that plant themselves (plant_through), arms them instead.
  void poison_shared(float pattern);
  // A test case's plantings under one turn alone (gpu/gpu_turns.h, pin_span): scoped, and meant
  // for launches with only short host work between them. Nothing when no planting is needed.
  class PlantingSpan {
   public:
    explicit PlantingSpan(GpuSession& gpu);
    ~PlantingSpan();
    PlantingSpan(const PlantingSpan&) = delete;
    PlantingSpan& operator=(const PlantingSpan&) = delete;

   private:
    GpuSession& gpu_;
    bool pinned_ = false;
  };
  // Whether plantings are needed at all: a kernel whose code has no shared memory cannot read what
  // a planting leaves, so for it poison_shared() plants nothing and takes no turn alone.
  void plant_shared_memory(bool needed) { plants_shared_ = needed; }
  bool plants_shared_memory() const { return plants_shared_; }
  // The learner's kernels of this job, when every one plants itself (LoadedKernel::plant_through):
  // poison_shared() then arms them instead of filling every SM, and neither it nor PlantingSpan
  // asks for the GPU alone, since no other process's kernel can run between a block's own fill and
  // its code. Empty (the default): the fill of every SM, under a turn alone.
  void plant_through(std::vector<const LoadedKernel*> kernels) { self_planting_ = std::move(kernels); }
  bool plants_through_kernels() const { return !self_planting_.empty(); }
  // Starts a judge kernel on a second stream that keeps every SM and the L2 busy with atomics for
  // a while (its length drawn from `seed`), so a launch made now runs beside other work, as on a
  // shared GPU: an order of atomics that only repeats on an idle GPU changes. wait_noise() ends it.
  void start_noise(std::uint32_t seed);
  void wait_noise();
  // Evicts the L2 by reading a buffer twice its size (outside any timed region); what is left
  // behind is clean, so the next kernel neither hits its input in the L2 nor writes back lines.
  void flush_l2();
  // Best of several timed full reads of a 1 GiB buffer; stored in info().peak_read_gbps.
  double measure_peak_read_gbps();
  // Events around one launch; `prepare` (reset, flush) runs before the start event.
  double time_once(const std::function<void()>& prepare, const std::function<void()>& launch);

  // How many of the `words` 32-bit words at `now` differ from those at `before` (both on the
  // device), and the index of the first that does (-1 when none): a kernel that wrote its input is
  // found without bringing the input back to the host. Synchronizes.
  struct ChangedWords {
    std::int64_t changed = 0;
    std::int64_t first = -1;
  };
  ChangedWords count_changed_words(const void* now, const void* before, std::size_t words);

  // Copies and fills on the judge's stream, left queued (the next synchronization finishes them).
  void copy_async(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind);
  void fill_async(void* device, int byte, std::size_t bytes);

  // Copies ordered on the judge's stream, finished when they return. A plain cudaMemcpy runs on the
  // legacy stream, which the judge's non-blocking stream does not wait for: from pageable memory it
  // may return before the data has landed, and a kernel launched next on the judge's stream could
  // read the previous case's input (seen on the H200 with other contexts sharing the GPU).
  void upload(void* device, const void* host, std::size_t bytes);
  void download(void* host, const void* device, std::size_t bytes);

  // Synchronizes after learner code ran; a CUDA error becomes a LearnerFault naming `what`.
  void sync_learner(const std::string& what);
  // Synchronizes after the judge's own or the reference's work; errors are the judge's.
  void sync_judge();

 private:
  GpuInfo info_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  std::unique_ptr<LoadedKernel> poison_kernel_;
  std::unique_ptr<LoadedKernel> probe_kernel_;
  std::unique_ptr<LoadedKernel> noise_kernel_;
  std::unique_ptr<LoadedKernel> compare_kernel_;
  DeviceBuffer<unsigned long long> compare_result_;
  cudaStream_t noise_stream_ = nullptr;
  DeviceBuffer<unsigned> noise_scratch_;
  int poison_shared_bytes_ = 0;
  bool planting_ = false;  // a planting's turn is held until the learner's launch has finished
  bool plants_shared_ = true;
  std::vector<const LoadedKernel*> self_planting_;
  bool noise_running_ = false;
  DeviceBuffer<unsigned char> l2_flush_;
  DeviceBuffer<float> l2_flush_sink_;
};

// Judge kernels are plain CUDA C++ compiled by NVRTC, like a submission, so the build needs no
// CUDA compiler and they always match the device's architecture (gpu/judge_kernels.cc says what
// each one does).
extern const char* const kJudgeKernels;
std::vector<char> compile_judge_kernel(const std::string& source, const std::string& symbol,
                                       const std::string& arch, const std::string& cuda_include_dir,
                                       std::string& lowered);

}  // namespace cudojo
