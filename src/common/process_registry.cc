#include "common/process_registry.h"

#include <signal.h>

#include <mutex>
#include <set>

namespace cudojo {

namespace {

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::set<pid_t>& registry() {
  static std::set<pid_t> groups;
  return groups;
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
