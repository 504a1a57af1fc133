// `cudojo asm` end to end, without a GPU (issue #28): the real binary builds the learner's kernel and
// the reference as the judge does, in each language, and ptxas (in the sandbox) reports them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/environment.h"
#include "run/tools.h"
#include "run_cli.h"

namespace cudojo {
namespace {

using testing::course_file;
using testing::run_cli;

class CliAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_cuda_tool("ptxas", env::kPtxas).empty())
      GTEST_SKIP() << "no ptxas on PATH or in /usr/local/cuda/bin";
  }
  static nlohmann::json asm_json(const std::string& arguments) {
    const auto result = run_cli("asm " + arguments + " --json");
    EXPECT_EQ(result.exit_code, 0) << result.out;
    return nlohmann::json::parse(result.out, nullptr, false);
  }
  // Python and Rust are compiled by Numba and rustc, which a GPU machine that only judges builds
  // need not have (scripts/setup.sh installs both here): `cudojo toolchains` says whether they work.
  static void skip_without_python_and_rust() {
    const auto answer = nlohmann::json::parse(run_cli("toolchains --json").out, nullptr, false);
    if (answer.is_discarded() || !answer.value("python", nlohmann::json::object()).value("ok", false) ||
        !answer.value("rust", nlohmann::json::object()).value("ok", false))
      GTEST_SKIP()
          << "needs Numba and rustc as `cudojo toolchains` finds them (scripts/setup.sh installs them)";
  }
  static const nlohmann::json& row(const nlohmann::json& report, const std::string& whose,
                                   const std::string& kernel) {
    for (const auto& item : report["kernels"])
      if (item["whose"] == whose && item["kernel"] == kernel) return item;
    ADD_FAILURE() << "no row for " << whose << " " << kernel << " in " << report.dump();
    static const nlohmann::json none;
    return none;
  }
};

TEST_F(CliAsm, TheStarterSitsBesideTheReferenceWithWhatEachAsksOfTheMachine) {
  const auto report = asm_json("reduction/3 " + course_file("03-block-tree/starter.cu"));
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["arch"], "sm_90");
  EXPECT_EQ(report["launch"]["threads_per_block"], 256);
  const auto& yours = row(report, "yours", "reduce");
  const auto& reference = row(report, "reference", "reduce");
  // The starter adds with one atomic per element and waits at no barrier; the block tree does.
  EXPECT_EQ(yours["resources"]["barriers"], 0);
  EXPECT_EQ(reference["resources"]["barriers"], 1);
  EXPECT_GT(yours["resources"]["registers"].get<int>(), 0);
  EXPECT_EQ(yours["resources"]["spill_store_bytes"], 0);
  EXPECT_DOUBLE_EQ(reference["occupancy"]["fraction"].get<double>(), 1.0);
  EXPECT_EQ(reference["occupancy"]["limited_by"], "warps");
}

TEST_F(CliAsm, EachPtxInstructionNamesTheSourceLineItCameFrom) {
  const std::string starter = course_file("03-block-tree/starter.cu");
  int atomic_line = 0, number = 0;
  std::ifstream in(starter);
  for (std::string line; std::getline(in, line);)
    if (++number && line.find("atomicAdd") != std::string::npos) atomic_line = number;
  ASSERT_GT(atomic_line, 0);
  const auto report = asm_json("reduction/3 " + starter + " --ptx");
  bool found = false;
  for (const auto& line : report["ptx"]) {
    EXPECT_EQ(line["text"].get<std::string>().find("cudojo_signature_check"), std::string::npos)
        << "the judge's own check is not the learner's PTX";
    if (line["text"].get<std::string>().find("atom.global.add") == std::string::npos) continue;
    found = true;
    EXPECT_EQ(line["line"], atomic_line) << line.dump();
  }
  EXPECT_TRUE(found) << "no atom.global.add in the starter's PTX";
}

TEST_F(CliAsm, EachSassInstructionNamesTheSourceLineItCameFrom) {
  const std::string starter = course_file("03-block-tree/starter.cu");
  const auto report = asm_json("reduction/3 " + starter + " --sass");
  if (find_cuda_tool("nvdisasm", env::kNvdisasm).empty()) {
    // This toolkit has no disassembler: the answer says why, and the table is still there.
    EXPECT_FALSE(report.contains("sass")) << report.dump();
    EXPECT_NE(report["sass_note"].get<std::string>().find("nvdisasm"), std::string::npos) << report.dump();
    EXPECT_EQ(report["kernels"].size(), 2u);
    GTEST_SKIP() << "no nvdisasm here (a GPU machine's toolkit has it): only its absence was tested";
  }
  int atomic_line = 0, number = 0;
  std::ifstream in(starter);
  for (std::string line; std::getline(in, line);)
    if (++number && line.find("atomicAdd") != std::string::npos) atomic_line = number;
  ASSERT_EQ(report["sass"].size(), 1u) << report.dump();
  bool found = false;
  for (const auto& line : report["sass"][0]["lines"]) {
    if (line["text"].get<std::string>().rfind("RED", 0) != 0) continue;
    found = true;
    EXPECT_EQ(line["line"], atomic_line) << line.dump();
  }
  EXPECT_TRUE(found) << "no RED instruction in the starter's SASS: " << report.dump();
}

TEST_F(CliAsm, PythonAndRustPtxNamesTheLearnersLineOfTheAtomic) {
  skip_without_python_and_rust();
  // The references of reduction/3: one atomic add per block, on a line of their own.
  for (const std::string file : {"03-block-tree/reference.py", "03-block-tree/reference.rs"}) {
    const std::string path = course_file(file);
    int atomic_line = 0, number = 0;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
      if (++number && (line.find("cuda.atomic.add(") != std::string::npos ||
                       line.find("atomic_add_f32(out") != std::string::npos))
        atomic_line = number;
    ASSERT_GT(atomic_line, 0) << file;
    const auto report = asm_json("reduction/3 " + path + " --ptx");
    bool found = false;
    for (const auto& line : report["ptx"]) {
      const std::string text = line["text"].get<std::string>();
      if (text.find("atom.") == std::string::npos || text.find(".add.f32") == std::string::npos) continue;
      found = true;
      EXPECT_EQ(line["line"], atomic_line) << file << ": " << line.dump();
    }
    EXPECT_TRUE(found) << "no atomic add in " << file << "'s PTX";
  }
}

TEST_F(CliAsm, PythonAndRustKernelsAndBothKernelsOfATwoKernelStage) {
  skip_without_python_and_rust();
  for (const char* file : {"07-deterministic/reference.py", "07-deterministic/reference.rs"}) {
    const auto report = asm_json("reduction/7 " + course_file(file));
    ASSERT_FALSE(report.is_discarded()) << file;
    for (const char* kernel : {"block_partials", "fold_partials"}) {
      EXPECT_GT(row(report, "yours", kernel)["resources"]["registers"].get<int>(), 0)
          << file << " " << kernel;
      EXPECT_GT(row(report, "reference", kernel)["resources"]["registers"].get<int>(), 0) << kernel;
    }
  }
}

TEST_F(CliAsm, ACompileErrorShowsItsLinesAndABadArchitectureIsAUsageError) {
  const std::string broken = "/tmp/cudojo_asm_broken.cu";
  std::ofstream(broken) << "__global__ void reduce(const float* X, float* out, int N) {\n  oops;\n}\n";
  const auto failed = run_cli("asm reduction/3 " + broken);
  EXPECT_EQ(failed.exit_code, 1) << failed.out;
  EXPECT_NE(failed.out.find("cudojo_asm_broken.cu:2"), std::string::npos) << failed.out;
  const auto bad_arch =
      run_cli("asm reduction/3 " + course_file("03-block-tree/starter.cu") + " --arch sm_999");
  EXPECT_EQ(bad_arch.exit_code, 2) << bad_arch.out;
}

}  // namespace
}  // namespace cudojo
