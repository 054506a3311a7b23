/// \file
/// A read-only float buffer (model weights) that actors of one process share
/// instead of copying: the PS hands out its current weights to every pull and
/// snapshot, and writes its next update into a fresh buffer only while one is
/// still held elsewhere. Across nodes it is serialized as a plain float array.
///
/// ```cpp
/// syncpoint::shared_floats w(std::vector<float>{0.5f, -1.0f});
/// auto copy = w;              // shares the buffer, copies nothing
/// float first = copy.data()[0];
/// ```
#pragma once

#include <syncpoint/float_block.hpp>

#include <caf/meta/load_callback.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/none.hpp>

#include <memory>
#include <utility>
#include <vector>

namespace syncpoint {

/// A read-only float buffer shared by every message that carries it (above).
class shared_floats {
 public:
  using pointer = std::shared_ptr<const std::vector<float>>;  ///< the buffer, shared

  shared_floats() : p_(std::make_shared<const std::vector<float>>()) {}  ///< empty
  explicit shared_floats(pointer p) : p_(std::move(p)) {}  ///< shares `p`
  /// Takes `v` over.
  explicit shared_floats(std::vector<float> v)
    : p_(std::make_shared<const std::vector<float>>(std::move(v))) {}

  const float* data() const { return p_->data(); }  ///< the values
  size_t size() const { return p_->size(); }  ///< how many
  const std::vector<float>& vec() const { return *p_; }  ///< the values as a vector
  const pointer& shared() const { return p_; }  ///< the buffer itself

  /// Equal values (not the same buffer).
  friend bool operator==(const shared_floats& a, const shared_floats& b) { return *a.p_ == *b.p_; }
  /// Different values.
  friend bool operator!=(const shared_floats& a, const shared_floats& b) { return !(a == b); }

 private:
  pointer p_;
};

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
