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
    // As a pattern, "(30)" would match only "30": brackets make it literal, and keep it from
    // matching the shell that runs pgrep.
    leftover = std::system("pgrep -f 'import time; time[.]sleep[(]30[)]' > /dev/null");
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

// A fork bomb, bounded so that it is safe even where the limit were missing: every process starts
// two more, nine generations deep (1023 processes at most), and each of the last sleeps. The kernel
// holds it at twice the sandbox's limit, where the parent finds it and stops it at once.
TEST_F(SandboxTest, AForkBombIsStoppedAtItsProcessLimit) {
  SandboxRun run;
  // bash, because it retries a fork the kernel refused, as a determined bomb does (dash gives up,
  // and its bomb may fizzle below the limit).
  run.command = {"/bin/bash", "-c",
                 "bomb() { if [ $1 -gt 0 ]; then bomb $(($1 - 1)) & bomb $(($1 - 1)) & wait; "
                 "else sleep 4.321; fi; }; bomb 9 & sleep 4.321"};
  run.job_folder = folder_.string();
  run.time_limit = std::chrono::seconds(20);
  run.max_processes = 32;
  const auto result = run_in_sandbox(run);
  ASSERT_TRUE(result.started) << result.failure;
  EXPECT_TRUE(result.process_limit_reached) << result.err.substr(0, 500);
  EXPECT_FALSE(result.timed_out);
  EXPECT_NE(result.failure.find("limit of 32 processes"), std::string::npos) << result.failure;
  EXPECT_LT(result.ms, 3000) << "stopped long before its sleepers would have ended";
  // The host is fine: nothing of the bomb is left, and this process still starts others.
  int leftover = 0;
  for (int tries = 0; tries < 40; ++tries) {
    leftover = std::system("pgrep -f 'sleep [4][.]321' > /dev/null");  // not pgrep's own shell
    if (leftover != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(leftover, 0);
  EXPECT_EQ(std::system("true"), 0);
}

// The kernel bounds the sandbox between the parent's counts: a program that asks for many more
// processes than the sandbox allows is refused the rest (RLIMIT_NPROC, counted in the sandbox's own
// user namespace), if the parent has not already stopped it. Run it as a user with more processes
// on the host than that (as the server's user has threads) to see that they do not count.
TEST_F(SandboxTest, TheProcessLimitHoldsInsideTheSandbox) {
  SandboxRun run;
  run.command = {"/usr/bin/python3", "-I", "-c",
                 "import os, time\n"
                 "started = 0\n"
                 "for _ in range(200):\n"
                 "    try:\n"
                 "        if os.fork() == 0:\n"
                 "            time.sleep(2); os._exit(0)\n"
                 "    except OSError:\n"
                 "        break\n"
                 "    started += 1\n"
                 "print(started, flush=True)\n"};
  run.job_folder = folder_.string();
  run.max_processes = 16;
  const auto result = run_in_sandbox(run);
  ASSERT_TRUE(result.started) << result.failure;
  if (!result.process_limit_reached) {
    ASSERT_FALSE(result.out.empty()) << result.err;
    // At most twice the limit, bubblewrap's own process and the program itself among them; and the
    // sandbox's own count: the calling user's other processes on the host take nothing from it.
    EXPECT_LE(std::stoi(result.out), 2 * 16 - 2) << result.err;
    EXPECT_GT(std::stoi(result.out), 16) << result.err;
  }
  EXPECT_LT(result.ms, 5000);
}

}  // namespace
}  // namespace cudojo
