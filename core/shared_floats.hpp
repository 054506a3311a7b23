// A read-only float buffer (model weights) that actors of one process share
// instead of copying: the PS hands out its current weights to every pull and
// snapshot, and writes its next update into a fresh buffer only while one is
// still held elsewhere. Across nodes it is serialized as a plain float array.
#pragma once

#include "core/float_block.hpp"
#include "core/float_buffers.hpp"

#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/none.hpp>

#include <atomic>
#include <memory>
#include <vector>

namespace syncpoint {

class shared_floats {
 public:
  using pointer = std::shared_ptr<const std::vector<float>>;

  shared_floats() : p_(std::make_shared<const std::vector<float>>()) {}
  explicit shared_floats(pointer p) : p_(std::move(p)) {}
  explicit shared_floats(std::vector<float> v)
    : p_(std::make_shared<const std::vector<float>>(std::move(v))) {}

  /// As above; when the last reader lets go, the buffer goes back to
  /// float_buffers (weights read off the wire: the next frame reads into it).
  static shared_floats handed_back(std::vector<float> v) {
    return shared_floats(pointer(new std::vector<float>(std::move(v)), [](const std::vector<float>* p) {
      float_buffers::give(std::move(*const_cast<std::vector<float>*>(p)));
      delete p;
    }));
  }

  const float* data() const { return p_->data(); }
  size_t size() const { return p_->size(); }
  const std::vector<float>& vec() const { return *p_; }
  const pointer& shared() const { return p_; }

  friend bool operator==(const shared_floats& a, const shared_floats& b) { return *a.p_ == *b.p_; }

 private:
  pointer p_;
};

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

template <class Inspector>
typename std::enable_if<Inspector::reads_state, typename Inspector::result_type>::type
inspect(Inspector& f, shared_floats& x) {
  // Serializing only reads the block, so the shared buffer is not copied first.
  return f(caf::meta::type_name("shared_floats"),
           float_block{const_cast<std::vector<float>&>(x.vec())});
}

template <class Inspector>
typename std::enable_if<Inspector::writes_state, typename Inspector::result_type>::type
inspect(Inspector& f, shared_floats& x) {
  std::vector<float> tmp;
  auto done = caf::meta::load_callback([&]() -> caf::error {
    x = shared_floats(std::move(tmp));
    return caf::none;
  });
  return f(caf::meta::type_name("shared_floats"), float_block{tmp}, done);
}

}  // namespace syncpoint
