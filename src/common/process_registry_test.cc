#include "common/process_registry.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <thread>

namespace cudojo {
namespace {

// A worker let finish in the background is unregistered by a detached thread that can outlive
// main(): the judge's CLI returned while one was still waiting, and the process aborted ("double
// free or corruption") when the thread erased from a registry exit had already destroyed. The
// registry must stay usable until the process is gone.
TEST(ProcessRegistry, ADetachedThreadMayStillUnregisterWhileTheProcessExits) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Fake group ids far above any real pid: nothing here is ever killed.
      for (pid_t group = 1 << 30; group < (1 << 30) + 2000; ++group) register_process_group(group);
      std::atomic<bool> running{false};
      std::thread([&running] {
        running = true;
        for (pid_t group = (1 << 30) + 5000;; ++group) {
          register_process_group(group);
          unregister_process_group(group - 1000);
        }
      }).detach();
      while (!running) std::this_thread::yield();
      std::exit(0);  // runs the static destructors with the thread still busy
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << "attempt " << attempt << ": the child died of signal "
                                   << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
}

}  // namespace
}  // namespace cudojo
