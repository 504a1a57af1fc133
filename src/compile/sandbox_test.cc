// The sandbox the Python and Rust front ends run in, tried with the host programs they use. Each
// test is an escape a learner's compile-time code could try.
#include "compile/sandbox.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace cudojo {
namespace {

namespace fs = std::filesystem;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (find_bubblewrap().empty())
      GTEST_SKIP() << "bubblewrap is not installed (scripts/setup.sh installs it)";
    if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
    folder_ = fs::temp_directory_path() / ("cudojo-sandbox-test-" + std::to_string(::getpid()));
    fs::create_directories(folder_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(folder_, ignored);
  }
  SandboxResult python(const std::string& code, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    SandboxRun run;
    run.command = {"/usr/bin/python3", "-I", "-c", code};
    run.job_folder = folder_.string();
    run.time_limit = limit;
    return run_in_sandbox(run);
  }
  fs::path folder_;
};

TEST_F(SandboxTest, RunsAProgramAndKeepsItsOutput) {
  auto result = python("import sys; print('hello'); print('oops', file=sys.stderr)");
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_TRUE(result.exited);
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "hello\n");
  EXPECT_EQ(result.err, "oops\n");
}

TEST_F(SandboxTest, HostFilesAreNotThere) {
  std::ofstream(folder_ / "mine.txt") << "the job's own file";
  auto result = python(
      "import os\n"
      "for p in ['/etc/passwd', '/etc/shadow', '/root', '/home', '/work', '" +
      fs::current_path().string() +
      "']:\n"
      "    print(p, os.path.exists(p))\n"
      "print(open('/job/mine.txt').read())\n");
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("/etc/passwd False"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("/root False"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("/work False"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("the job's own file"), std::string::npos);
}

TEST_F(SandboxTest, SystemIsReadOnlyAndNetworkIsGone) {
  auto result = python(
      "import socket\n"
      "try:\n"
      "    open('/usr/cudojo-was-here', 'w'); print('wrote /usr')\n"
      "except OSError: print('usr read-only')\n"
      "s = socket.socket()\n"
      "s.settimeout(2)\n"
      "try:\n"
      "    s.connect(('1.1.1.1', 80)); print('connected')\n"
      "except OSError: print('no network')\n");
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_NE(result.out.find("usr read-only"), std::string::npos) << result.out << result.err;
  EXPECT_NE(result.out.find("no network"), std::string::npos) << result.out << result.err;
  EXPECT_FALSE(fs::exists("/usr/cudojo-was-here"));
}

TEST_F(SandboxTest, EndlessLoopIsStoppedAtItsTimeLimit) {
  auto result = python("while True: pass", std::chrono::milliseconds(1500));
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_TRUE(result.timed_out);
  EXPECT_LT(result.ms, 5000);
}

TEST_F(SandboxTest, ChildrenDieWithTheSandbox) {
  // A process left behind in the background must not outlive the time limit.
  auto result = python(
      "import subprocess; subprocess.Popen(['/usr/bin/python3', '-c', 'import time; time.sleep(30)']);"
      "import time; time.sleep(30)",
      std::chrono::milliseconds(1500));
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_TRUE(result.timed_out);
  // Nothing of the sandbox is left: the sleeper saw its parent go and was killed with it (the
  // kernel takes a moment to deliver that, so look for up to two seconds).
  int leftover = 0;
  for (int tries = 0; tries < 40; ++tries) {
    leftover = std::system("pgrep -f 'import time; time.sleep(30)' > /dev/null");
    if (leftover != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(leftover, 0);
}

TEST_F(SandboxTest, MemoryIsBounded) {
  SandboxRun run;
  run.command = {"/usr/bin/python3", "-I", "-c", "x = bytearray(3 << 30); print('allocated')"};
  run.job_folder = folder_.string();
  run.memory_bytes = 1ull << 30;
  auto result = run_in_sandbox(run);
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_EQ(result.out.find("allocated"), std::string::npos);
  EXPECT_NE(result.err.find("MemoryError"), std::string::npos) << result.err;
}

TEST_F(SandboxTest, OutputIsCapped) {
  SandboxRun run;
  run.command = {"/usr/bin/python3", "-I", "-c",
                 "import sys\nfor i in range(100000): sys.stdout.write('x' * 1000)"};
  run.job_folder = folder_.string();
  run.max_output_bytes = 1 << 16;
  auto result = run_in_sandbox(run);
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_EQ(result.out.size(), 1u << 16);
}

}  // namespace
}  // namespace cudojo
