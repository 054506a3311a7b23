// shared_floats (public: <syncpoint/shared_floats.hpp>) and what only the
// library does with such buffers: hand one back to float_buffers when its last
// reader lets go, and tell whether a buffer's holder is its only reader.
#pragma once

#include <syncpoint/shared_floats.hpp>

#include "core/float_buffers.hpp"

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace syncpoint {

/// `v` as a shared buffer that goes back to float_buffers when the last
/// reader lets go (weights read off the wire: the next frame reads into it).
inline shared_floats handed_back_floats(std::vector<float> v) {
  return shared_floats(shared_floats::pointer(new std::vector<float>(std::move(v)), [](const std::vector<float>* p) {
    float_buffers::give(std::move(*const_cast<std::vector<float>*>(p)));
    delete p;
  }));
}

/// Whether `p` is the only reference to its buffer, so that its holder may
/// write into it: readers on other threads that held it have let go, and what
/// they read happens before what the caller writes next.
///
///     if (sole_owner(buffer)) overwrite(*buffer); else buffer = fresh();
template <class T>
bool sole_owner(const std::shared_ptr<T>& p) {
  if (!p || p.use_count() != 1)  // a relaxed read
    return false;
  // A reader lets go with a release decrement of the count. The acquire fence
  // pairs with it in C++; ThreadSanitizer does not model fences, so a copy,
  // whose increment and decrement are acq_rel on the same count, makes the
  // same edge visible to it.
  std::atomic_thread_fence(std::memory_order_acquire);
  [[maybe_unused]] std::shared_ptr<T> edge = p;
  return true;
}

}  // namespace syncpoint
