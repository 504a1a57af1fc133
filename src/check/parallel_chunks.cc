#include "check/parallel_chunks.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace cudojo {

std::size_t for_each_chunk(std::size_t count, std::size_t align,
                           const std::function<void(std::size_t, std::size_t, std::size_t)>& work) {
  const std::size_t threads =
      count < kParallelFrom ? 1 : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kMaxChunks);
  if (threads == 1) {
    work(0, 0, count);
    return 1;
  }
  std::size_t chunk = (count + threads - 1) / threads;
  chunk = (chunk + align - 1) / align * align;
  std::vector<std::thread> workers;
  std::size_t index = 1;
  for (std::size_t begin = chunk; begin < count; begin += chunk, ++index)
    workers.emplace_back(work, index, begin, std::min(count, begin + chunk));
  work(0, 0, std::min(count, chunk));
  for (auto& worker : workers) worker.join();
  return index;
}

}  // namespace cudojo
