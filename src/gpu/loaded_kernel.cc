#include <algorithm>

#include "compile/ptx_planting.h"
#include "gpu/gpu.h"

namespace cudojo {

LoadedKernel::LoadedKernel(const std::vector<char>& image, const std::string& symbol,
                           int dynamic_shared_bytes, ParameterAbi abi)
    : abi_(abi) {
  // Loading copies the code to the GPU (and a sanitizer instruments it there).
  struct Brief {
    Brief() { gpu_turns::brief_begin(); }
    ~Brief() { gpu_turns::brief_end(); }
  } brief;
  CUDOJO_CUDA(cudaLibraryLoadData(&library_, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  CUDOJO_CUDA(cudaLibraryGetKernel(&kernel_, library_, symbol.c_str()));
  const void* function = reinterpret_cast<const void*>(kernel_);
  if (dynamic_shared_bytes > 48 * 1024) {
    CUDOJO_CUDA(
        cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_shared_bytes));
  }
  CUDOJO_CUDA(cudaFuncSetAttribute(function, cudaFuncAttributePreferredSharedMemoryCarveout,
                                   cudaSharedmemCarveoutMaxShared));
}

LoadedKernel::~LoadedKernel() {
  if (!library_) return;
  gpu_turns::brief_begin();
  cudaLibraryUnload(library_);
  gpu_turns::brief_end();
}

void LoadedKernel::launch(dim3 grid, dim3 block, std::size_t shared_bytes, void** args,
                          cudaStream_t stream) const {
  if (armed_) {
    armed_ = false;
    return planted_->launch(grid, block, shared_bytes, args, stream);
  }
  if (quiet_ && launches_++ > 0) return quiet_->launch(grid, block, shared_bytes, args, stream);
  gpu_turns::enqueue();
  CUDOJO_CUDA(
      cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), grid, block, args, shared_bytes, stream));
}

LaidOutArguments lay_out_arguments(ParameterAbi abi, std::span<const KernelArgument> args) {
  LaidOutArguments laid_out;
  auto push = [&](std::uint64_t value) { laid_out.values.push_back(value); };
  for (const KernelArgument& argument : args) {
    if (!argument.is_array) {
      // Little-endian: a 32-bit parameter reads the low half of its 8-byte slot.
      push(static_cast<std::uint32_t>(argument.value));
      continue;
    }
    const auto address = reinterpret_cast<std::uint64_t>(argument.data);
    if (abi == ParameterAbi::kNumbaArrays) {
      const auto count = static_cast<std::uint64_t>(argument.count);
      push(0);                       // meminfo: no Python object owns device memory here
      push(0);                       // parent
      push(count);                   // nitems
      push(argument.element_bytes);  // itemsize
      push(address);                 // data
      push(count);                   // shape[0]
      push(argument.element_bytes);  // strides[0]: contiguous
    } else {
      push(address);
    }
  }
  for (auto& value : laid_out.values) laid_out.pointers.push_back(&value);
  return laid_out;
}

void LoadedKernel::launch(dim3 grid, dim3 block, std::size_t shared_bytes,
                          std::span<const KernelArgument> args, cudaStream_t stream) const {
  LaidOutArguments laid_out = lay_out_arguments(abi_, args);
  launch(grid, block, shared_bytes, laid_out.pointers.data(), stream);
}

std::vector<std::uint32_t> LoadedKernel::read_global(const char* name, std::size_t count) const {
  void* address = nullptr;
  std::size_t bytes = 0;
  // Looking the variable up may load the module onto the GPU (lazy loading): held from there.
  gpu_turns::brief_begin();
  if (cudaLibraryGetGlobal(&address, &bytes, library_, name) != cudaSuccess) {
    gpu_turns::brief_end();
    cudaGetLastError();  // a missing symbol is an answer, not a sticky error
    return {};
  }
  std::vector<std::uint32_t> values(std::min(count, bytes / sizeof(std::uint32_t)));
  const cudaError_t copied =
      cudaMemcpy(values.data(), address, values.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost);
  gpu_turns::brief_end();
  CUDOJO_CUDA(copied);
  return values;
}

void LoadedKernel::plant_through(std::unique_ptr<LoadedKernel> planted) {
  void* pattern = nullptr;
  std::size_t bytes = 0;
  gpu_turns::brief_begin();
  const cudaError_t found = cudaLibraryGetGlobal(&pattern, &bytes, planted->library_, kPlantedPatternSymbol);
  gpu_turns::brief_end();
  CUDOJO_CUDA(found);
  if (bytes != sizeof(std::uint32_t))
    throw CudaError(cudaErrorInvalidSymbol, "the planted build's pattern word", __FILE__, __LINE__);
  planted_ = std::move(planted);
  planted_pattern_ = pattern;
}

void LoadedKernel::arm_planting(std::uint32_t pattern_bits, cudaStream_t stream) const {
  if (!planted_) throw std::logic_error("arm_planting on a kernel with no planted build");
  // From pageable memory the copy has taken the value by the time the call returns.
  pattern_bits_ = pattern_bits;
  gpu_turns::enqueue();
  CUDOJO_CUDA(cudaMemcpyAsync(planted_pattern_, &pattern_bits_, sizeof(pattern_bits_), cudaMemcpyHostToDevice,
                              stream));
  armed_ = true;
}

}  // namespace cudojo
