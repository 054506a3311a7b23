#include "core/float_buffers.hpp"

#include <algorithm>
#include <deque>
#include <mutex>

namespace syncpoint::float_buffers {

namespace {

// Below this the zero fill costs less than the lock (16 KB).
constexpr size_t smallest = 4096;
// A process holds a few model-sized buffers in flight at once (a worker's
// gradient, a frame being read, the weights a model just let go); more kept
// would only hold memory.
constexpr size_t most = 8;
constexpr size_t most_bytes = size_t{512} << 20;

struct pool {
  std::mutex mutex;
  std::deque<std::vector<float>> kept;  // oldest first
  size_t bytes = 0;
};

pool& the_pool() {
  static pool* p = new pool;  // never destroyed: buffers may come back while the process exits
  return *p;
}

}  // namespace

std::vector<float> take(size_t n) {
  if (n >= smallest) {
    auto& p = the_pool();
    std::lock_guard<std::mutex> guard(p.mutex);
    auto i = std::find_if(p.kept.rbegin(), p.kept.rend(), [n](const auto& v) { return v.size() == n; });
    if (i != p.kept.rend()) {
      std::vector<float> out = std::move(*i);
      p.bytes -= out.capacity() * sizeof(float);
      p.kept.erase(std::next(i).base());
      return out;
    }
  }
  return std::vector<float>(n);
}

void give(std::vector<float>&& v) {
  if (v.size() < smallest || v.capacity() * sizeof(float) > most_bytes)
    return;
  std::vector<float> mine = std::move(v);
  auto& p = the_pool();
  std::lock_guard<std::mutex> guard(p.mutex);
  p.bytes += mine.capacity() * sizeof(float);
  p.kept.push_back(std::move(mine));
  while (p.kept.size() > most || p.bytes > most_bytes) {
    p.bytes -= p.kept.front().capacity() * sizeof(float);
    p.kept.pop_front();  // freed under the lock: rare, and the pool stays consistent
  }
}

size_t kept() {
  auto& p = the_pool();
  std::lock_guard<std::mutex> guard(p.mutex);
  return p.kept.size();
}

}  // namespace syncpoint::float_buffers
