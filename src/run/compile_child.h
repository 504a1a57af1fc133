// Every NVRTC compile of a check runs in a process of its own (`cudojo nvrtc-compile`), started by
// the worker: NVRTC's memory grows with what the source asks for (an initialized 200 MB
// `__device__` array took 3.2 GB and 82 s), and the worker, which holds a CUDA context, cannot be
// given an address-space limit itself. The child limits its address space and CPU time, dies with
// the worker, and the worker kills it at the compile budget. What it sends back is the
// CompileResult, as one JSON line on fd 3.
#pragma once

#include "common/limits.h"
#include "compile/nvrtc_compiler.h"

namespace cudojo {

// Compiles in a child process within `limits` (compile_budget_ms, compile_memory_bytes). A child
// that runs out of either, or dies, gives a failed result whose diagnostic says which limit it met.
CompileResult compile_in_child(const CompileRequest& request, const JudgeLimits& limits = kDefaultLimits);

// The child: `cudojo nvrtc-compile` reads one request from stdin.
int compile_child_main();

}  // namespace cudojo
