// A host buffer that outlives the job: a warm worker judges job after job (run/worker.cc), and the
// largest stages' inputs are 2^26 values, 256 MiB made on the host per job. A fresh vector of that
// size has every page faulted in and zeroed again (a tenth of a second or more); this one hands the
// next driver the pages the last one used. What it holds is the judge's own data, written again
// before each use: nothing of a learner's reaches it.
#pragma once

#include <mutex>
#include <vector>

namespace cudojo {

template <typename T>
class KeptHostBuffer {
 public:
  KeptHostBuffer() {
    std::lock_guard lock(mutex());
    values_.swap(kept());
  }
  ~KeptHostBuffer() {
    std::lock_guard lock(mutex());
    if (values_.capacity() > kept().capacity()) values_.swap(kept());
  }
  KeptHostBuffer(const KeptHostBuffer&) = delete;
  KeptHostBuffer& operator=(const KeptHostBuffer&) = delete;

  // At least `count` elements; what they hold is whatever was there (write before reading).
  std::vector<T>& at_least(std::size_t count) {
    if (values_.size() < count) values_.resize(count);
    return values_;
  }
  std::vector<T>& values() { return values_; }
  T* data() { return values_.data(); }
  auto begin() { return values_.begin(); }

 private:
  static std::mutex& mutex() {
    static std::mutex kept_mutex;
    return kept_mutex;
  }
  static std::vector<T>& kept() {
    static std::vector<T> kept_values;
    return kept_values;
  }
  std::vector<T> values_;
};

}  // namespace cudojo
