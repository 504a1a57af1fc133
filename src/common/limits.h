// Every limit and tunable the judge and the server enforce, in one table. Numbers scattered
// through the code drift apart; here they are data that a reader (and the docs) can see at once.
// Code elsewhere takes them from kDefaultLimits / ServeLimits{} and never retypes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudojo {

struct JudgeLimits {
  // Learner input. Checked once, by source_size_error below, wherever source enters.
  std::size_t max_source_bytes = 64 * 1024;
  // NVRTC's log is learner-influenced (one error per line of a long file); keep what a human reads.
  std::size_t max_compile_log_bytes = 32 * 1024;
  // Device printf output captured from the worker; the rest is drained and dropped.
  std::size_t max_output_bytes = 16 * 1024;
  // The device's printf buffer per synchronization (cudaLimitPrintfFifoSize); printing beyond it is
  // dropped on the GPU, so printing cannot make a correct kernel's check run out of time.
  std::size_t device_printf_bytes = 64 * 1024;

  // One NVRTC compile, in its own process (run/compile_child.h): wall clock (CPU time is capped at
  // the same) and address space. Measured by scripts/compile-budget.sh (150 legitimate kernels,
  // evidence/2026-11-30-cpu-compile-budget.txt): the slowest, which includes <cooperative_groups.h>,
  // takes 2.5 s and 183 MB for its two compiles; every course file under 1.8 s. A 200 MB initialized
  // __device__ array took 82 s and 3.2 GB: without these bounds a learner's source sets the
  // judge's memory use.
  double compile_budget_ms = 15'000;
  std::uint64_t compile_memory_bytes = 2ull << 30;

  // A worker's CPU seconds (RLIMIT_CPU), a backstop behind the parent's wall-clock deadlines: a
  // whole check, tools included, uses well under a minute.
  unsigned long worker_cpu_seconds = 600;

  // Wall-clock budgets the parent enforces on the worker, in milliseconds.
  // Start-up covers process start, CUDA context creation and the NVRTC compiles.
  double startup_budget_ms = 60'000;
  // Each later phase gets floor + launches x reference time x factor, capped. The factor is large
  // because a correct-but-slow kernel (one atomic per element) is a verdict of too_slow, not a
  // timeout; the cap keeps a hung kernel from holding the GPU for long.
  double phase_floor_ms = 3'000;
  double phase_launch_factor = 2'000;
  double phase_cap_ms = 20'000;

  // The tool workers (compute-sanitizer's racecheck, synccheck and memcheck; ncu when CUPTI fails).
  // The size one sanitized launch covers: a partial last block, and few blocks, because the tools
  // slow kernels 10-100x.
  std::int64_t sanitize_size = 1000;
  // One tool worker's whole run, start-up included; past it the tool is stopped and its note says so.
  double tool_budget_ms = 60'000;
  // Hot spots (run/hot_spots.h): ncu around one launch of the submission, and reading its report
  // back; a take-home report bigger than this is not kept.
  double hot_spots_budget_ms = 30'000;
  std::uint64_t max_ncu_report_bytes = 32ull << 20;
  // A warm tool worker's run (its start-up long done): the load and one launch at sanitize_size,
  // which the tools slow 10-100x; about 30 ms on an H200 for the course's kernels.
  double warm_tool_budget_ms = 10'000;
  // Jobs one warm set judges before it is let go whole and started afresh, whatever they were.
  int max_jobs_per_worker_set = 200;
  // A warm worker's settling after a clean job (drain the GPU, make its session again: tens of
  // milliseconds); one still busy past this is killed rather than reused (a kernel left running).
  double worker_settle_ms = 3'000;
  // A warm tool worker's log: how long the parent waits for the end-of-job mark after the result
  // before it stops reusing that tool and reads its log the old way, at its exit.
  double tool_log_mark_wait_ms = 2'000;
  // Reports compute-sanitizer prints per tool (--print-limit); the first few locate the fault.
  int sanitizer_print_limit = 20;
  // CUPTI replay passes before the profiler gives up (an H200 needs 11 for cudojo's metrics).
  int profiler_max_passes = 32;
  // CUPTI's set-up runs during the tests (about 0.5 s on an H200); once the kernel is timed it gets
  // at most this much longer before ncu is used instead. Below the phase floor, so a slow set-up
  // can never become the learner's time_limit_exceeded.
  double profiler_setup_wait_ms = 2'000;
  // A Python or Rust compile in its sandbox (compile/sandbox.h): wall clock (CPU time is capped at
  // the same), and address space (LLVM reserves far more than it touches).
  // Python's slowest course file (two kernels) builds in 1.8 s, 0.45 s of each run importing
  // Numba; Rust's in 0.2 s once core is built (building core has its own budget).
  double frontend_budget_ms = 15'000;
  std::uint64_t frontend_memory_bytes = 6ull << 30;
  // Processes and threads together (the kernel counts both) one sandbox may hold at once; a
  // compile found holding more is stopped at once, as a fork bomb (compile/sandbox.h). Peaks
  // measured in the sandbox, bubblewrap's own process included: building Rust's core 24 (rustc's
  // 16 codegen units; rustc takes at most 32 jobs on any machine), a Rust compile 9, a Python
  // compile 2.
  int frontend_max_processes = 64;
  // The front end's answer (its PTX, as JSON) is read only up to this; more is the learner's file
  // producing too much code.
  std::size_t frontend_max_answer_bytes = 4u << 20;
};

inline constexpr JudgeLimits kDefaultLimits{};

// The one place source size is judged: nullopt when `bytes` is within the limit, else the sentence
// every front end shows.
inline std::optional<std::string> source_size_error(std::size_t bytes,
                                                    const JudgeLimits& limits = kDefaultLimits) {
  if (bytes <= limits.max_source_bytes) return std::nullopt;
  return "the source is " + std::to_string(bytes) + " bytes; the limit is " +
         std::to_string(limits.max_source_bytes) + " bytes";
}

// What a stage's data may ask of the judge: the bounds stage loading enforces, so a course folder
// cannot make a worker allocate without limit or launch what CUDA refuses.
struct StageBounds {
  int max_threads_per_block = 1024;               // CUDA's own limit
  int warp_size = 32;                             // threads_per_block is a whole number of warps
  std::int64_t max_size = std::int64_t{1} << 30;  // elements in one test or timed launch
  int min_runs = 2;                               // repeated launches: one run shows no race
  int max_runs = 100;
};

inline constexpr StageBounds kStageBounds{};

// The server's limits, in one table beside the judge's. Every one can be set for a deployment
// (`cudojo serve --limit NAME=VALUE`; `cudojo serve --list-limits` prints them): the names are
// the members' own, listed once in serve_limit_fields() below.
struct ServeLimits {
  // --- Admission: what one learner, one address and everyone may have waiting.
  // A class of 300 pressing Run before a deadline, each with a job or two, must fit.
  int max_queue_length = 1000;      // queued + running, everyone's; then 429
  int max_pending_per_learner = 4;  // queued + running, one learner's; then 429
  // Queued + running jobs from one client address: a quarter of the queue, so that the learners one
  // address can create (60 an hour) cannot fill it for everyone else. A class behind one NAT
  // address without a proxy in front may need more.
  int max_pending_per_address = 250;
  int retry_after_seconds = 10;  // sent with every 429 and 503
  // New learners one client address may create in an hour (behind a trusted proxy, the address the
  // proxy names). Without it a script makes hundreds of learners a second and the per-learner job
  // limit means nothing.
  int max_new_learners_per_address_per_hour = 60;
  // Learners joining one class by its invite code in an hour, from any number of addresses. A class
  // behind one school address joins as a crowd, so joins are counted per class, not per address; a
  // leaked code is bounded by this until an instructor changes it.
  int max_joins_per_class_per_hour = 1000;
  // Learners in one roster import (a CSV of student id, name, e-mail).
  int max_roster_rows = 5000;
  // Learners one class may hold (removed ones not counted): a grid and an export of this many stay
  // well inside a second, and no import or join grows a class past it.
  int max_learners_per_class = 3000;
  // Invite codes one client address may get wrong in an hour: a class's typos fit many times over;
  // guessing a 50-bit code at this rate is hopeless.
  int max_failed_joins_per_address_per_hour = 1000;
  // Drafts one learner may save (or delete) in a minute. The page saves a second after typing stops,
  // so a learner typing all minute saves about 60; past it, 429 and the page keeps its local copy.
  int max_draft_saves_per_minute = 120;
  // Jobs one rejudging may take: a class of 300 with 12 stages and a few tries each fits. Reruns
  // wait behind every learner's job, so a large one delays nobody, but it holds a GPU for long.
  int max_jobs_per_rejudging = 5000;
  // Jobs one learner may share at once, each by a link of its own (serve/store_shares.h): a run of
  // every stage four times over; past it, 409 until the learner stops sharing one.
  int max_live_shares_per_learner = 50;

  // --- The HTTP front door (src/http/): one event loop holds every connection, so a connection
  // costs memory, not a thread; each is bounded in time and size from its first byte.
  // Threads running the event loop: reads, writes, deadlines, static files. Two, so that a burst
  // of completions (ten thousand clients leaving at once) never stands between one client and the
  // loop; measured on 2 cores by tests/load/hostile_load.py.
  int io_threads = 2;
  // Threads running the routes that call the store; a route never runs on the event loop, so a
  // slow database call delays only other database calls.
  int handler_threads = 8;
  // Requests read and waiting for a handler thread; past it a request is answered 503 at once.
  int max_waiting_requests = 1024;
  // Open connections, everyone's (also capped by the process's open-file limit, which the server
  // raises to its hard limit), and from one peer address (a trusted proxy's are not counted).
  int max_connections = 16384;
  int max_connections_per_address = 512;
  int listen_backlog = 1024;
  // A request's line and header must arrive whole within this of the connection opening or of the
  // previous answer, however slowly they trickle; then the connection is closed.
  int header_deadline_ms = 10'000;
  // Its body (at most max_request_bytes) within this of the header.
  int body_deadline_ms = 30'000;
  // An answer must be taken by the client within this (a 300 KB script on a slow phone link is
  // well inside it); then the connection is closed.
  int write_deadline_ms = 60'000;
  // Answers over 64 KiB (the page's scripts) being sent at once; the rest wait their turn, so a
  // crowd fetching large files takes turns with every other client instead of crowding them out.
  int max_large_answers = 16;
  std::size_t max_header_bytes = 16 * 1024;    // request line and header fields; then 431
  int max_header_fields = 100;                 // then 431 (browsers send about 20)
  std::size_t max_target_bytes = 8 * 1024;     // the request's path and query; then 414
  std::size_t max_request_bytes = 256 * 1024;  // whole request body; the source limit is the judge's

  // --- Event streams (GET /api/jobs/{id}/events): a live stream per learner while a job waits.
  int max_event_streams = 1000;           // open streams, everyone's; then 429 (the page polls)
  int max_event_streams_per_learner = 4;  // a learner's next stream closes their oldest
  double event_stream_max_seconds = 600;  // one stream stays open at most this
  // How often the open streams' jobs are read (one batched query for all of them): a phase
  // written by another node reaches its streams at most this late; this node's own judges wake the
  // streams at once.
  int event_poll_ms = 100;
  // An unchanged stream sends a comment this often, so proxies in between keep it open.
  int event_heartbeat_ms = 15'000;
  // Bytes written to a stream that its client has not taken yet; past it the stream is closed.
  std::size_t max_stream_backlog_bytes = 1024 * 1024;
  // How long a stream ticket (POST /api/jobs/{id}/ticket) can be used to open its one stream.
  int stream_ticket_seconds = 60;

  // --- Pages of answers.
  int history_limit = 100;         // most jobs one page of /api/history returns (?limit=)
  int history_default_limit = 20;  // jobs one page returns when ?limit= is not given
  int leaderboard_limit = 50;      // entries one stage's leaderboard returns
  int audit_limit = 200;           // most entries one page of an audit log returns (?limit=)
  int audit_default_limit = 50;    // entries one page returns when ?limit= is not given

  // --- Judging and the store.
  // A job interrupted this many times by server restarts fails rather than being run again.
  int max_job_attempts = 3;
  // How long an idle dispatcher slot sleeps before looking at the queue again. A submission wakes a
  // slot at once; the poll bounds the wait only when that wake-up raced the slot's last look.
  int dispatcher_idle_poll_ms = 500;
  // Jobs judged at once on one GPU when --workers is not given: their compiles, tests and sanitized
  // launches overlap, and each timing has the GPU alone (run/gpu_lease.h). Four kept an H200 busy
  // on the course's mix (docs/SCALING.md).
  int judge_slots_per_gpu = 4;
  // How long a Store call waits for a write lock held by another connection to the same file (a
  // second process, such as a test or an operator's sqlite3 shell) before it fails.
  int database_busy_timeout_ms = 5000;
  // After SIGTERM, running jobs get this long to finish; then their workers are killed and the jobs
  // go back to the queue, so the server is gone within 5 s whatever it was running.
  int stop_grace_ms = 3000;
  // A running job's lease: its node renews it every heartbeat_ms; a job whose lease ran out (its
  // node died, hung, or lost the database) goes back to the queue, so a dead GPU host delays its
  // jobs by at most this long. Kept well above a heartbeat and a store retry, so one missed
  // renewal never costs a job.
  double job_lease_seconds = 30;
  // How often a node renews its leases, refreshes its entry in the nodes table and returns expired
  // jobs to the queue.
  int heartbeat_ms = 5000;
  // How often a node that cannot reach its store tries again (to record a result, or to claim).
  int store_retry_ms = 1000;
  // A node not seen for this long is left out of GET /api/nodes.
  double node_listed_seconds = 60;
  // Connections one node keeps to a PostgreSQL store: the handler threads and dispatcher slots
  // share them, each holding one only for the length of a call.
  int postgres_connections = 8;
};

// One settable member of ServeLimits, by name: what `--limit NAME=VALUE` and `--list-limits` use.
struct ServeLimitField {
  const char* name;
  const char* unit;     // "jobs", "ms", "bytes", ...
  const char* meaning;  // one line
  std::string (*read)(const ServeLimits&);
  // Sets the member from text; an error sentence when the text is not a number in range.
  std::optional<std::string> (*write)(ServeLimits&, const std::string& text);
};

// Every settable limit, in the order of the struct.
const std::vector<ServeLimitField>& serve_limit_fields();
// Applies "NAME=VALUE"; nullopt when applied, else the sentence saying what was wrong (an unknown
// name lists the known ones).
std::optional<std::string> apply_serve_limit(ServeLimits& limits, const std::string& assignment);

}  // namespace cudojo
