// How many jobs a store can take through their whole life per second, with no judging at all:
// the ceiling the database puts on a cluster however many GPU hosts it has. A job here is what a
// dispatcher does to the store for one real job (claim, four progress phases, finish with a 4 KB
// report), plus what learners do (queue it, and poll it while it runs, as an event stream does).
//
//   cudojo_store_bench LOCATION [--jobs N] [--nodes N] [--threads N]
//
// LOCATION: a SQLite file path or a postgresql:// URL (an empty database; the bench fills it).
// scripts/store-bench.sh runs it against both stores and prints the table.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serve/store.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<std::size_t>(p * static_cast<double>(values.size())))];
}

struct Timings {
  std::mutex mutex;
  std::vector<double> submit, claim, phase, finish, poll;
  void add(std::vector<double>& into, double ms) {
    std::lock_guard lock(mutex);
    into.push_back(ms);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: cudojo_store_bench LOCATION [--jobs N] [--nodes N] [--threads N]\n");
    return 2;
  }
  const std::string location = argv[1];
  int jobs = 2000, nodes = 2, threads = 4;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--jobs") jobs = value;
    if (flag == "--nodes") nodes = value;
    if (flag == "--threads") threads = value;
  }
  try {
    // One Store per node, as each cudojo process has; `threads` dispatcher slots on each.
    std::vector<std::unique_ptr<cudojo::Store>> stores;
    for (int node = 0; node < nodes; ++node) stores.push_back(cudojo::open_store(location));
    constexpr int kLearners = 50;
    std::vector<std::int64_t> learners;
    for (int i = 0; i < kLearners; ++i)
      learners.push_back(stores[0]->create_learner(fmt::format("bench {}", i)).learner.id);
    const std::string source(2000, 'x');
    const std::string report =
        fmt::format(R"({{"verdict":"compile_error","padding":"{}"}})", std::string(4000, 'p'));
    Timings timings;

    // Learners queue every job, from as many threads as there are slots.
    std::atomic<int> next_submission{0};
    const auto submit_start = Clock::now();
    {
      std::vector<std::thread> submitters;
      for (int t = 0; t < nodes * threads; ++t) {
        submitters.emplace_back([&, t] {
          cudojo::Store& store = *stores[static_cast<std::size_t>(t % nodes)];
          for (int i; (i = next_submission++) < jobs;) {
            const auto start = Clock::now();
            store.submit({learners[static_cast<std::size_t>(i % kLearners)], "reduction/3", source, "cuda",
                          fmt::format("bench-{}", i)});
            timings.add(timings.submit, ms_since(start));
          }
        });
      }
      for (auto& thread : submitters) thread.join();
    }
    const double submit_ms = ms_since(submit_start);

    // Every slot of every node drains the queue as a dispatcher would, while one poller per node
    // reads jobs as open event streams do.
    std::atomic<bool> draining{true};
    std::atomic<int> finished{0};
    const auto drain_start = Clock::now();
    std::vector<std::thread> workers;
    for (int node = 0; node < nodes; ++node) {
      for (int slot = 0; slot < threads; ++slot) {
        workers.emplace_back([&, node, slot] {
          cudojo::Store& store = *stores[static_cast<std::size_t>(node)];
          const std::string holder = fmt::format("bench-node-{}#{}", node, slot);
          for (;;) {
            auto start = Clock::now();
            auto job = store.claim_next(holder, 30);
            if (!job) break;
            timings.add(timings.claim, ms_since(start));
            for (const char* phase : {"compiled", "tests", "timing", "profile"}) {
              start = Clock::now();
              store.set_phase(job->claim(), phase);
              timings.add(timings.phase, ms_since(start));
            }
            start = Clock::now();
            if (store.finish(job->claim(), "compile_error", report)) ++finished;
            timings.add(timings.finish, ms_since(start));
          }
        });
      }
      workers.emplace_back([&, node] {
        cudojo::Store& store = *stores[static_cast<std::size_t>(node)];
        for (std::int64_t id = 1; draining; id = id % jobs + 1) {
          const auto start = Clock::now();
          store.job(id);
          timings.add(timings.poll, ms_since(start));
        }
      });
    }
    for (std::size_t i = 0; i < workers.size(); ++i) {
      // The pollers are every (threads + 1)-th thread; stop them once the slots are done.
      if ((i + 1) % static_cast<std::size_t>(threads + 1) != 0) workers[i].join();
    }
    const double drain_ms = ms_since(drain_start);
    draining = false;
    for (auto& thread : workers) {
      if (thread.joinable()) thread.join();
    }

    fmt::print("store       {} ({})\n", stores[0]->kind(), stores[0]->location());
    fmt::print("shape       {} jobs, {} node(s) x {} slot(s), {} learners, 4 KB reports\n", jobs, nodes,
               threads, kLearners);
    fmt::print("queue       {:8.0f} submissions/s ({} threads)\n", jobs / (submit_ms / 1000),
               nodes * threads);
    fmt::print("drain       {:8.0f} jobs/s claimed, 4 phases, finished ({} recorded of {})\n",
               finished.load() / (drain_ms / 1000), finished.load(), jobs);
    fmt::print("polls       {:8.0f} job reads/s beside the drain ({} pollers)\n",
               static_cast<double>(timings.poll.size()) / (drain_ms / 1000), nodes);
    fmt::print("\n{:<10} {:>8} {:>8} {:>8}\n", "call", "p50 ms", "p99 ms", "count");
    for (const auto& [name, values] :
         {std::pair<const char*, const std::vector<double>&>{"submit", timings.submit},
          {"claim", timings.claim},
          {"set_phase", timings.phase},
          {"finish", timings.finish},
          {"job", timings.poll}}) {
      fmt::print("{:<10} {:8.3f} {:8.3f} {:8}\n", name, percentile(values, 0.5), percentile(values, 0.99),
                 values.size());
    }
    return finished.load() == jobs ? 0 : 1;
  } catch (const std::exception& error) {
    fmt::print(stderr, "cudojo_store_bench: {}\n", error.what());
    return 1;
  }
}
