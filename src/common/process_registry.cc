#include "common/process_registry.h"

#include <signal.h>

#include <mutex>
#include <set>

namespace cudojo {

namespace {

// Both are made once and never destroyed: a worker let finish in the background is unregistered by
// a detached thread that may still run while exit() destroys the process's statics.
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}

std::set<pid_t>& registry() {
  static auto* groups = new std::set<pid_t>;
  return *groups;
}

}  // namespace

void register_process_group(pid_t group) {
  if (group <= 0) return;
  std::lock_guard lock(registry_mutex());
  registry().insert(group);
}

void unregister_process_group(pid_t group) {
  std::lock_guard lock(registry_mutex());
  registry().erase(group);
}

int kill_registered_process_groups() {
  std::lock_guard lock(registry_mutex());
  for (const pid_t group : registry()) kill(-group, SIGKILL);
  return static_cast<int>(registry().size());
}

}  // namespace cudojo
