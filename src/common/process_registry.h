// Every process group this process has started for learner work (workers, tool workers, compiler
// sandboxes) and not yet reaped. A server that must stop within its deadline ends them all at once;
// each group is taken out when its leader is reaped, so a reused id is never signalled.
#pragma once

#include <sys/types.h>

namespace cudojo {

void register_process_group(pid_t group);
void unregister_process_group(pid_t group);
// SIGKILL to every registered group; returns how many there were.
int kill_registered_process_groups();

}  // namespace cudojo
