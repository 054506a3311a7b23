// The floats a push carries: a vector of its own, or a view of the range
// [begin, end) of one gradient that the slices of a sharded push share, so
// that cutting a gradient into K slices copies nothing. A view is read-only:
// take() gives a vector to keep and write (a view's range copied then, into
// a handed-back buffer). Serialized (core/messages.hpp), either is a plain
// float block, and one read back owns its vector.
//
//   auto whole = handed_back_floats(std::move(grad)).shared();
//   float_slice a(whole, 0, half), b(whole, half, whole->size());  // no copy
//   auto keep = b.share();  link.send(b.data(), b.size(), keep);    // no copy
//   std::vector<float> mine = a.take();                            // copied now
#pragma once

#include "core/float_buffers.hpp"
#include "core/shared_floats.hpp"

#include <algorithm>
#include <initializer_list>
#include <memory>
#include <vector>

namespace syncpoint {

class float_slice {
 public:
  using buffer = std::shared_ptr<const std::vector<float>>;

  float_slice() = default;
  float_slice(std::vector<float> v) : own_(std::move(v)) {}  // NOLINT: a push is built from a vector
  float_slice(std::initializer_list<float> v) : own_(v) {}
  /// A view of whole[begin, end): `whole` stays alive while the view does.
  float_slice(buffer whole, size_t begin, size_t end) : whole_(std::move(whole)), begin_(begin), end_(end) {}

  const float* data() const { return whole_ ? whole_->data() + begin_ : own_.data(); }
  size_t size() const { return whole_ ? end_ - begin_ : own_.size(); }
  bool empty() const { return size() == 0; }
  bool is_view() const { return whole_ != nullptr; }

  /// A vector of its own with these values: moved out, or the view's range copied.
  std::vector<float> take() {
    if (!whole_)
      return std::move(own_);
    auto out = float_buffers::take(size());
    std::copy(data(), data() + size(), out.data());
    *this = {};
    return out;
  }

  /// Done with the values: a vector of its own is kept for the next take of
  /// its size (core/float_buffers.hpp), a view lets go of its share.
  void give_back() {
    if (!whole_)
      float_buffers::give(std::move(own_));
    *this = {};
  }

  /// What keeps data() valid while a transport writes it: the shared whole.
  /// A slice with a vector of its own becomes a view of all of it first, the
  /// vector handed back (core/float_buffers.hpp) when the last view lets go.
  const buffer& share() {
    if (!whole_) {
      auto n = own_.size();
      whole_ = handed_back_floats(std::move(own_)).shared();
      own_ = {};
      begin_ = 0;
      end_ = n;
    }
    return whole_;
  }

  friend bool operator==(const float_slice& a, const float_slice& b) {
    return a.size() == b.size() && std::equal(a.data(), a.data() + a.size(), b.data());
  }
  friend bool operator!=(const float_slice& a, const float_slice& b) { return !(a == b); }

  /// The vector of its own (empty for a view): what a message reads into.
  std::vector<float>& own() { return own_; }

 private:
  std::vector<float> own_;
  buffer whole_;
  size_t begin_ = 0, end_ = 0;
};

}  // namespace syncpoint
