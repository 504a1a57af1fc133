// Work over a large array of the judge's own data (making test inputs, their expected answers) in
// chunks on a few threads. A warm worker makes inputs of up to 2^26 values per job, on the host,
// between its launches; the other slots' workers share the machine's cores, so it takes at most
// kMaxChunks threads, and one below kParallelFrom values.
#pragma once

#include <cstddef>
#include <functional>

namespace cudojo {

inline constexpr std::size_t kMaxChunks = 4;
inline constexpr std::size_t kParallelFrom = std::size_t{1} << 20;

// Runs work(chunk, begin, end) over [0, count) split into chunks numbered from 0, each starting at
// a multiple of `align`; returns how many chunks there were (at most kMaxChunks). The calling
// thread does chunk 0.
std::size_t for_each_chunk(
    std::size_t count, std::size_t align,
    const std::function<void(std::size_t chunk, std::size_t begin, std::size_t end)>& work);

}  // namespace cudojo
