// What compute-sanitizer's racecheck and synccheck report on this GPU for kernels written to be
// caught, whether each launch is reported again (a kept tool needs a mark per job), when the
// report reaches the log file, and where a tool's start-up spends its time. Run by
// scripts/sanitizer-marks-probe.sh; not part of the judge.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>

namespace {

using Clock = std::chrono::steady_clock;

// Every thread of two warps writes the same shared word: a write-write hazard between warps.
extern "C" __global__ void mark_race(int* out) {
  __shared__ int word;
  volatile int* shared_word = &word;
  *shared_word = threadIdx.x;
  if (threadIdx.x == 0) out[0] = *shared_word;
}

// The judge's racecheck mark as the worker builds it (run/tool_marks.cc): no parameter, one store.
extern "C" __global__ void mark_race_plain() {
  __shared__ int word;
  volatile int* shared_word = &word;
  *shared_word = threadIdx.x;
}

// A racy "learner" kernel: reads a neighbour's shared slot with no barrier.
extern "C" __global__ void learner_race(int* out) {
  __shared__ int slots[64];
  slots[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = slots[(threadIdx.x + 32) % 64];
}

// Lane 0 names only lane 1 in its mask; lane 1 names itself.
extern "C" __global__ void mark_sync_mask_without_self(int* out) {
  if (threadIdx.x == 0) __syncwarp(0x2u);
  if (threadIdx.x == 1) __syncwarp(0x2u);
  out[threadIdx.x] = 1;
}

// Lane 1 shuffles with a mask that leaves it out.
extern "C" __global__ void mark_sync_shfl_without_self(int* out) {
  int value = threadIdx.x;
  if (threadIdx.x == 1) value = __shfl_sync(0x1u, value, 0);
  out[threadIdx.x] = value;
}

// Warp 0 waits at the block barrier; warp 1 leaves without it.
extern "C" __global__ void mark_sync_barrier_one_warp(int* out) {
  if (threadIdx.x < 32) __syncthreads();
  out[threadIdx.x] = 1;
}

// Half of one warp waits at the block barrier.
extern "C" __global__ void mark_sync_barrier_half_warp(int* out) {
  if (threadIdx.x < 16) __syncthreads();
  out[threadIdx.x] = 1;
}

double ms_since(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

std::size_t count_in_file(const char* path, const char* needle) {
  if (!path) return 0;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  std::size_t count = 0;
  for (auto at = all.find(needle); at != std::string::npos; at = all.find(needle, at + 1)) ++count;
  return count;
}

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) std::printf("  %s: %s\n", what, cudaGetErrorName(error));
}

template <typename Kernel>
void launch_and_watch(const char* name, Kernel kernel, int threads, int* out, const char* log, int times) {
  for (int i = 0; i < times; ++i) {
    const std::size_t before = count_in_file(log, name);
    const auto start = Clock::now();
    if constexpr (std::is_invocable_v<Kernel>) {
      kernel<<<1, threads>>>();
    } else {
      kernel<<<1, threads>>>(out);
    }
    check(cudaDeviceSynchronize(), name);
    check(cudaGetLastError(), name);
    const double launch_ms = ms_since(start);
    const std::size_t right_after = count_in_file(log, name);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const std::size_t later = count_in_file(log, name);
    std::printf("%s launch %d: %.1f ms; lines naming it in the log: before %zu, right after sync %zu, 300 ms later %zu\n",
                name, i + 1, launch_ms, before, right_after, later);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto entered = Clock::now();
  const char* mode = argc > 1 ? argv[1] : "noop";
  const char* log = argc > 2 ? argv[2] : nullptr;
  // Milliseconds from the shell's timestamp (nanoseconds since the epoch) to main.
  if (const char* spawned = std::getenv("PROBE_SPAWNED_NS")) {
    const double now_ns = std::chrono::duration<double, std::nano>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    std::printf("spawn to main: %.0f ms\n", (now_ns - std::atof(spawned)) / 1e6);
  }
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  std::printf("main to device count: %.0f ms\n", ms_since(entered));
  const auto context_start = Clock::now();
  check(cudaFree(nullptr), "cudaFree(0)");
  std::printf("context: %.0f ms\n", ms_since(context_start));
  int* out = nullptr;
  check(cudaMalloc(&out, 64 * sizeof(int)), "cudaMalloc");
  if (std::strcmp(mode, "race") == 0) {
    launch_and_watch("learner_race", learner_race, 64, out, log, 1);
    launch_and_watch("mark_race", mark_race, 64, out, log, 3);
    launch_and_watch("mark_race_plain", mark_race_plain, 64, out, log, 3);
  } else if (std::strcmp(mode, "sync_mask") == 0) {
    // One candidate per process: an error that kills the launch leaves the context unusable.
    launch_and_watch("mark_sync_mask_without_self", mark_sync_mask_without_self, 32, out, log, 2);
  } else if (std::strcmp(mode, "sync_shfl") == 0) {
    launch_and_watch("mark_sync_shfl_without_self", mark_sync_shfl_without_self, 32, out, log, 2);
  } else if (std::strcmp(mode, "sync_one_warp") == 0) {
    launch_and_watch("mark_sync_barrier_one_warp", mark_sync_barrier_one_warp, 64, out, log, 2);
  } else if (std::strcmp(mode, "sync_half_warp") == 0) {
    launch_and_watch("mark_sync_barrier_half_warp", mark_sync_barrier_half_warp, 32, out, log, 2);
  }
  std::printf("main to exit: %.0f ms\n", ms_since(entered));
  return 0;
}
