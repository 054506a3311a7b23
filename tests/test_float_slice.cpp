// A push's floats (core/float_slice.hpp): the slices of a sharded push are
// views of one gradient, copied nothing; a view is copied only when a holder
// must own and write it; the gradient goes back to the float buffers when the
// last view lets go.
#include "core/float_slice.hpp"

#include <doctest/doctest.h>

#include <numeric>

using namespace syncpoint;

namespace {

std::vector<float> counting(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

}  // namespace

TEST_CASE("float slice: the slices of one gradient are views of it, and it goes back when the last lets go") {
  const size_t n = 100057;  // a size no other test's model has
  auto grad = counting(n);
  const float* where = grad.data();
  {
    auto whole = handed_back_floats(std::move(grad)).shared();
    float_slice a(whole, 0, 40000), b(whole, 40000, n);
    whole.reset();
    CHECK(a.is_view());
    CHECK(a.data() == where);
    CHECK(b.data() == where + 40000);
    CHECK(a.size() == 40000);
    CHECK(b.size() == n - 40000);
    CHECK(b.data()[0] == 40000.0f);
    a.give_back();
    CHECK(a.empty());
    CHECK(float_buffers::take(n).size() == n);  // b still holds the gradient: a new buffer
    auto b2 = std::move(b);
    CHECK(b2.data() == where + 40000);
  }
  CHECK(float_buffers::take(n).data() == where);  // the last view let go: the next gradient's buffer
}

TEST_CASE("float slice: take() moves a vector of its own out, and copies a view's range") {
  auto v = counting(10);
  const float* where = v.data();
  float_slice own(std::move(v));
  CHECK(!own.is_view());
  auto out = own.take();
  CHECK(out.data() == where);  // moved, not copied
  CHECK(own.empty());

  auto whole = std::make_shared<const std::vector<float>>(counting(10));
  float_slice view(whole, 3, 7);
  auto copy = view.take();
  CHECK(copy == std::vector<float>{3, 4, 5, 6});
  CHECK(copy.data() != whole->data() + 3);
  CHECK(view.empty());
  CHECK(!view.is_view());
  CHECK(whole.use_count() == 1);  // the view let go of its share
}

TEST_CASE("float slice: share() turns a vector of its own into a view of the same memory, for a transport to hold") {
  const size_t n = 100069;
  auto v = float_buffers::take(n);
  const float* where = v.data();
  float_slice s(std::move(v));
  {
    auto keep = s.share();
    CHECK(s.is_view());
    CHECK(s.data() == where);
    CHECK(s.size() == n);
    CHECK(keep->data() == where);
    CHECK(s.share() == keep);  // once a view, the same buffer
    s.give_back();
  }
  CHECK(float_buffers::take(n).data() == where);  // written and let go: handed back
}

TEST_CASE("float slice: slices compare by values, whether views or vectors") {
  auto whole = std::make_shared<const std::vector<float>>(counting(6));
  CHECK(float_slice(whole, 2, 4) == float_slice{2.0f, 3.0f});
  CHECK(float_slice(whole, 2, 4) != float_slice{2.0f, 3.5f});
  CHECK(float_slice(whole, 2, 4) != float_slice(whole, 2, 5));
  CHECK(float_slice{} == float_slice(whole, 4, 4));
}
