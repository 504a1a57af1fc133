#include "stage/kernel_scan.h"

#include <gtest/gtest.h>

namespace cudojo {
namespace {

std::vector<std::string> names(Language language, std::string_view source) {
  std::vector<std::string> found;
  for (const auto& kernel : find_kernel_definitions(language, source)) {
    found.push_back(kernel.name + ":" + std::to_string(kernel.line));
  }
  return found;
}

TEST(KernelScan, CudaFindsGlobalFunctionsPastAttributesAndComments) {
  const std::string source =
      "// __global__ void commented(int* c) {}\n"
      "/* __global__ void blocked(int* c) {} */\n"
      "__device__ float helper(float x) { return x; }\n"
      "__global__ void __launch_bounds__(256) reduce(const float* X, float* out, int N) {}\n"
      "extern \"C\" __global__\nvoid\nsplit(int* c) {}\n"
      "const char* text = \"__global__ void quoted(\";\n";
  EXPECT_EQ(names(Language::kCuda, source), (std::vector<std::string>{"reduce:4", "split:7"}));
  EXPECT_EQ(find_function_line(Language::kCuda, source, "helper"), std::optional<int>(3));
  EXPECT_EQ(find_function_line(Language::kCuda, source, "absent"), std::nullopt);
}

TEST(KernelScan, PythonFindsJitFunctionsButNotDeviceFunctions) {
  const std::string source =
      "from numba import cuda\n"
      "@cuda.jit(device=True)\ndef helper(x):\n    return x\n"
      "@cuda.jit\ndef reduce(X, out, N):\n    pass\n"
      "@cuda.jit(\n    fastmath=False,\n)\ndef other(X, out, N):\n    pass\n"
      "def plain(x):\n    pass\n"
      "# @cuda.jit\n";
  EXPECT_EQ(names(Language::kPython, source), (std::vector<std::string>{"reduce:6", "other:11"}));
  EXPECT_EQ(find_function_line(Language::kPython, source, "plain"), std::optional<int>(13));
}

TEST(KernelScan, RustFindsKernelFnsAndPtxKernelExterns) {
  const std::string source =
      "fn helper(x: f32) -> f32 { x }\n"
      "#[kernel]\nfn reduce(x: *const f32, out: *mut f32, n: i32) {\n    let c = 'a';\n}\n"
      "#[no_mangle]\npub unsafe extern \"ptx-kernel\" fn direct(c: *mut i32) {}\n"
      "// #[kernel] fn commented() {}\n";
  EXPECT_EQ(names(Language::kRust, source), (std::vector<std::string>{"reduce:3", "direct:7"}));
  EXPECT_EQ(find_function_line(Language::kRust, source, "helper"), std::optional<int>(1));
}

}  // namespace
}  // namespace cudojo
