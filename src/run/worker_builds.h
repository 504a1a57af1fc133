// What a worker compiles before it runs anything: the submission, the reference, a two-kernel
// stage's second kernels, the quiet build of a source that prints, and the check build (the
// submission's PTX with the barrier and warp-collective counters, compile/check_build.h), and the
// one launch of that check build that the worker judges after the tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "compile/nvrtc_compiler.h"
#include "contract/driver.h"
#include "report/report.h"
#include "run/protocol.h"

namespace cudojo {

// Builds the parent passed in (from the check worker, or a `cudojo build` file) are loaded, not
// compiled again.
struct Builds {
  CompileResult submission;
  CompileResult reference;  // not in sanitize mode
  CompileResult counted;    // check mode only: the check build
  CompileResult quiet;      // check mode, a CUDA source that prints: printf compiled out
  // A two-kernel contract's second kernels, each its own build (not counted, not quieted).
  CompileResult second_submission;
  CompileResult second_reference;
};

// `second`: the compile of a two-kernel contract's second kernel (stage.second_kernel).
CompileRequest compile_request(const Job& job, const std::string& source, const std::string& file_name,
                               const std::string& arch, bool second = false);

// Every build the job's mode needs, compiled at once (they are independent, and each NVRTC
// compile runs in a child of its own).
Builds compile_all(const Job& job, const std::string& arch);

// The check build of a compiled kernel's PTX, or nothing, with `note` saying why.
std::optional<BuiltKernel> check_build_of(const CompileResult& compiled, std::string_view file_name,
                                          std::string& note);

// A module that declares one of the judge's counter names would collide with the check build (or
// forge its counts): it becomes a compile error that says so.
void refuse_judge_names(CompileResult& compiled, const std::string& file_name);

// Whether the learner's kernels call the device heap (malloc or free in device code): what they
// leave there outlives the job, so a worker that ran them is not given another. A cubin given by
// the parent (no PTX here) counts as no: its PTX was read when it was built.
bool uses_device_heap(const Builds& builds);
// Whether the learner's kernels may touch shared memory: racecheck reports shared-memory hazards
// only, so without any `.shared` state space in the PTX (no declaration, static or dynamic, and so
// no shared address to reach) it has nothing to watch. Unknown counts as yes.
bool may_use_shared_memory(const Builds& builds);
// Whether the learner's kernels may use a synchronization primitive synccheck watches (block
// barriers, `bar.warp.sync`, the `.sync` warp collectives, mbarriers): without "bar" or ".sync"
// anywhere in the PTX there is none. Unknown counts as yes.
bool may_synchronize(const Builds& builds);

// A stage that wants the same bits on every run refuses float atomic adds in either kernel.
void add_float_atomic_findings(const Job& job, const Builds& builds, FindingSet& findings);

// The check build launched once at the tool size on its own buffers, after the tests and before
// anything is timed; its barrier and warp-collective counters become findings.
void check_counted_build(const Job& job, GpuSession& gpu, ContractDriver& driver,
                         const CompileResult& counted_build, const LoadedKernel* second,
                         PhaseAnnouncer& announce, Report& report);

}  // namespace cudojo
