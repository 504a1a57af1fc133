// For scripts/foreign-fault.sh (issue #25): can a kernel that faults in one process break a correct
// process's CUDA context on the same GPU? Under the burst, two correct reduction/8 kernels got
// cudaErrorLaunchFailure on a warm worker while other slots judged kernels that trap or read
// outside memory; judged alone they never did.
//   foreign_fault --victim SECONDS   launches a correct kernel (and allocates) in a loop, checking
//                                    every step; prints how many steps and the first error
//   foreign_fault --fault trap|address|spin-trap|none   one faulting (or, with none, correct) kernel
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void add_one(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

__global__ void trap_kernel() { asm volatile("trap;"); }

__global__ void read_far(const float* data, float* out) {
  // Far outside any allocation: an illegal address, as the corpus's illegal_address.cu reads.
  out[0] = data[(1ull << 40) / sizeof(float) + threadIdx.x];
}

// Runs long enough to be on the GPU while another process's context is switched in, then traps.
__global__ void spin_then_trap(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  asm volatile("trap;");
}

int victim(double seconds) {
  const int n = 1 << 20;
  float* data = nullptr;
  if (cudaMalloc(&data, n * sizeof(float)) != cudaSuccess) return 2;
  cudaMemset(data, 0, n * sizeof(float));
  const auto started = std::chrono::steady_clock::now();
  long steps = 0;
  cudaError_t first = cudaSuccess;
  const char* where = "";
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() < seconds) {
    add_one<<<(n + 255) / 256, 256>>>(data, n);
    cudaError_t status = cudaDeviceSynchronize();
    if (status != cudaSuccess) { first = status; where = "synchronizing a launch"; break; }
    float* scratch = nullptr;
    status = cudaMalloc(&scratch, 4096);
    if (status != cudaSuccess) { first = status; where = "allocating"; break; }
    cudaFree(scratch);
    if (++steps % 64 == 0) usleep(2000);  // idle now and then, as a warm worker between jobs
  }
  float sample = 0;
  if (first == cudaSuccess) cudaMemcpy(&sample, data, sizeof(float), cudaMemcpyDeviceToHost);
  const bool counted_right = first != cudaSuccess || sample == static_cast<float>(steps);
  std::printf("victim %d: %ld steps in %.1f s, %s%s%s, data %s\n", getpid(), steps,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              first == cudaSuccess ? "no error" : cudaGetErrorName(first), first == cudaSuccess ? "" : " while ",
              where, counted_right ? "as counted" : "WRONG");
  return first == cudaSuccess && counted_right ? 0 : 1;
}

int fault(const char* how) {
  float* out = nullptr;
  cudaMalloc(&out, sizeof(float));
  if (std::strcmp(how, "trap") == 0) trap_kernel<<<1, 32>>>();
  else if (std::strcmp(how, "address") == 0) read_far<<<1, 32>>>(out, out);
  else if (std::strcmp(how, "spin-trap") == 0) spin_then_trap<<<132, 256>>>(20'000'000);  // ~10 ms
  else add_one<<<1, 32>>>(out, 1);
  const cudaError_t status = cudaDeviceSynchronize();
  const bool meant_to_fault = std::strcmp(how, "none") != 0;
  return (status != cudaSuccess) == meant_to_fault ? 0 : 3;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--victim") == 0) return victim(std::atof(argv[2]));
  if (argc == 3 && std::strcmp(argv[1], "--fault") == 0) return fault(argv[2]);
  std::fprintf(stderr, "usage: foreign_fault --victim SECONDS | --fault trap|address|spin-trap|none\n");
  return 2;
}
