#include "core/parallel_chunks.hpp"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace syncpoint {

namespace {
std::atomic<size_t> max_threads{0};
}

size_t set_parallel_chunks_threads(size_t max) {
  return max_threads.exchange(max);
}

// Threads are started per pass rather than kept in a pool: a start costs tens
// of microseconds against a pass of milliseconds, and no idle thread spins
// beside the workers between passes.
void parallel_chunks(size_t n, const std::function<void(size_t, size_t)>& body) {
  size_t cores = std::max(1u, std::thread::hardware_concurrency());
  size_t cap = max_threads.load(std::memory_order_relaxed);
  size_t parts = n < parallel_pass_min ? 1 : std::min({cores, cap > 0 ? cap : size_t{8}, n / (parallel_pass_min / 2)});
  if (parts <= 1) {
    body(0, n);
    return;
  }
  // Chunks of a multiple of 16 floats: each starts on its own cache line.
  size_t chunk = (n / parts + 15) / 16 * 16;
  std::vector<std::thread> helpers;
  helpers.reserve(parts - 1);
  size_t inline_from = n;  // where a thread could not start, the caller does the rest
  for (size_t k = 1; k < parts; ++k) {
    size_t begin = std::min(n, k * chunk), end = k + 1 == parts ? n : std::min(n, (k + 1) * chunk);
    try {
      helpers.emplace_back([&body, begin, end] { body(begin, end); });
    } catch (const std::system_error&) {
      inline_from = begin;
      break;
    }
  }
  body(0, std::min(n, chunk));
  if (inline_from < n)
    body(inline_from, n);
  for (auto& t : helpers)
    t.join();
}

}  // namespace syncpoint
