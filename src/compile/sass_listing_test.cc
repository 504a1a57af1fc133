// SASS as nvdisasm prints it, read into functions of instructions tied to the learner's lines; and
// a real nvdisasm run in the sandbox where the toolkit has one (a GPU machine's does).
#include "compile/sass_listing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "compile/compile_test_support.h"
#include "compile/kernel_resources.h"
#include "compile/nvrtc_compiler.h"
#include "compile/sandbox.h"

namespace cudojo {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(CUDOJO_FIXTURES_DIR) + "/sass/" + name);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

const SassLine* find_text(const SassFunction& function, const std::string& text) {
  auto found = std::find_if(function.lines.begin(), function.lines.end(),
                            [&](const SassLine& line) { return line.text == text; });
  return found == function.lines.end() ? nullptr : &*found;
}

TEST(SassListing, NvdisasmsListingIsReadFunctionByFunction) {
  const auto functions = parse_nvdisasm(fixture("source_hot_spots.nvdisasm.txt"), "source_hot_spots.cu");
  ASSERT_EQ(functions.size(), 2u);
  EXPECT_EQ(functions[0].entry, "_Z20one_thread_per_blockPKfPfi");
  EXPECT_EQ(functions[1].entry, "_Z11one_addressPKfPfi");
  const SassFunction& serial = functions[0];
  ASSERT_FALSE(serial.lines.empty());
  EXPECT_EQ(serial.lines[0].offset, 0u);
  EXPECT_EQ(serial.lines[0].text, "LDC R1, c[0x0][0x28] ;");
  EXPECT_EQ(serial.lines[0].line, 13u);
  // The predicate's padding is one space; the early exit is the `return` of line 15.
  const SassLine* exit = find_text(serial, "@P0 EXIT ;");
  ASSERT_NE(exit, nullptr);
  EXPECT_EQ(exit->offset, 0x40u);
  EXPECT_EQ(exit->line, 15u);
  // The unrolled loop's adds are line 18's, its counter line 17's.
  const SassLine* add = find_text(serial, "@!P3 FADD R3, R3, R10 ;");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->line, 18u);
  const SassLine* label = find_text(serial, ".L_x_2:");
  ASSERT_NE(label, nullptr);
  EXPECT_FALSE(label->offset.has_value());
  const SassLine* store = find_text(serial, "STG.E desc[UR4][R4.64], R3 ;");
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->line, 19u);
  EXPECT_EQ(functions[1].lines.front().line, 8u);
}

TEST(SassListing, AnotherFilesLinesAreNotTheLearners) {
  const auto functions = parse_nvdisasm(fixture("source_hot_spots.nvdisasm.txt"), "mine.cu");
  ASSERT_EQ(functions.size(), 2u);
  for (const auto& function : functions)
    for (const auto& line : function.lines) EXPECT_EQ(line.line, 0u) << line.text;
}

TEST(SassListing, InlinedCodeTakesTheLearnersLine) {
  // An atomicAdd from CUDA's header: the place it was inlined at is the learner's; an annotation
  // naming only CUDA's file leaves the learner's last line in force.
  const std::string listing =
      "\t.section\t.text.k,\"ax\",@progbits\n"
      "\t//## File \"/tmp/x/mine.cu\", line 4\n"
      "        /*0000*/                   LDG.E R3, desc[UR4][R2.64] ;\n"
      "\t//## File \"/usr/local/cuda/include/sm_20_atomic_functions.hpp\", line 84 inlined at "
      "\"/tmp/x/mine.cu\", line 5\n"
      "        /*0010*/                   REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R4.64], R3 ;\n"
      "\t//## File \"/usr/local/cuda/include/cuda/std/atomic\", line 12\n"
      "        /*0020*/                   EXIT ;\n";
  const auto functions = parse_nvdisasm(listing, "mine.cu");
  ASSERT_EQ(functions.size(), 1u);
  ASSERT_EQ(functions[0].lines.size(), 3u);
  EXPECT_EQ(functions[0].lines[0].line, 4u);
  EXPECT_EQ(functions[0].lines[1].line, 5u);
  EXPECT_EQ(functions[0].lines[2].line, 5u);
}

TEST(SassListing, WithoutADisassemblerItSaysSo) {
  const SassListing listing = disassemble(
      "\x7f"
      "ELF",
      "", "mine.cu");
  EXPECT_FALSE(listing.ok);
  EXPECT_NE(listing.error.find("nvdisasm"), std::string::npos) << listing.error;
}

TEST(SassListing, NvdisasmInTheSandboxListsNvrtcsKernel) {
  const std::filesystem::path bin = std::filesystem::path(CUDOJO_CUDA_BIN_DIR);
  const std::string nvdisasm = (bin / "nvdisasm").string();
  if (!std::filesystem::exists(nvdisasm))
    GTEST_SKIP() << "no nvdisasm at " << nvdisasm
                 << " (this toolkit has no disassembler; a GPU machine's has)";
  if (find_bubblewrap().empty()) GTEST_SKIP() << "no bubblewrap (scripts/setup.sh installs it)";
  const CompileResult compiled = compile_kernel(testing::kernel_request(
      "__global__ void reduce(const float* X, float* out, int N) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < N)\n"
      "    atomicAdd(out, X[i]);\n"
      "}\n",
      "reduce", "const float* X, float* out, int N", "void (*)(const float*, float*, int)", "sm_90"));
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const ResourceReport report = assemble_for_resources(compiled.ptx, "sm_90", (bin / "ptxas").string());
  ASSERT_TRUE(report.ok) << report.error;
  const SassListing listing = disassemble(report.cubin, nvdisasm, "mine.cu");
  ASSERT_TRUE(listing.ok) << listing.error;
  ASSERT_EQ(listing.functions.size(), 1u);
  // The atomic, inlined from CUDA's header, is the learner's line 4.
  const auto& lines = listing.functions[0].lines;
  auto atomic = std::find_if(lines.begin(), lines.end(),
                             [](const SassLine& line) { return line.text.find("RED") == 0; });
  ASSERT_NE(atomic, lines.end());
  EXPECT_EQ(atomic->line, 4u);

  const SassListing refused = disassemble("not a cubin", nvdisasm, "mine.cu");
  EXPECT_FALSE(refused.ok);
}

}  // namespace
}  // namespace cudojo
