// For the PTX rewrites' tests: hands a module to the toolkit's ptxas, as the driver's JIT would
// take it, and fails the test with ptxas's own words when it refuses.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace cudojo::testing {

inline void expect_ptxas_accepts(const std::string& ptx) {
  const std::filesystem::path ptxas = std::filesystem::path(CUDOJO_CUDA_BIN_DIR) / "ptxas";
  if (!std::filesystem::exists(ptxas))
    GTEST_SKIP() << "no ptxas at " << ptxas << " (the CUDA toolkit's bin/)";
  const auto folder = std::filesystem::temp_directory_path() / ("cudojo-ptxas-" + std::to_string(::getpid()));
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "module.ptx") << ptx;
  const std::string command = ptxas.string() + " -arch=sm_90 " + (folder / "module.ptx").string() + " -o " +
                              (folder / "module.cubin").string() + " 2>" + (folder / "log").string();
  const int status = std::system(command.c_str());
  std::ifstream log(folder / "log");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(status, 0) << text;
  std::filesystem::remove_all(folder);
}

}  // namespace cudojo::testing
