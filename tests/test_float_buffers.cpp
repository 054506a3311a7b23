// Float buffers handed back (core/float_buffers.hpp): a take of a size given
// back gets that buffer again, without a pass over it; small ones and more
// than a few are let go.
#include "core/float_buffers.hpp"
#include "core/shared_floats.hpp"

#include <doctest/doctest.h>

using namespace syncpoint;

TEST_CASE("float buffers: a buffer given back is the next take of its size, as it was, and small ones are not kept") {
  const size_t n = 100003;  // a size no other test's model has
  auto a = float_buffers::take(n);
  REQUIRE(a.size() == n);
  a[0] = 42.0f;
  a[n - 1] = 43.0f;
  const float* where = a.data();
  float_buffers::give(std::move(a));
  auto b = float_buffers::take(n);
  CHECK(b.data() == where);
  CHECK(b.size() == n);
  CHECK(b[0] == 42.0f);  // not filled again: whoever takes it overwrites it
  CHECK(float_buffers::take(n + 1).size() == n + 1);  // another size: a new one
  std::vector<float> small(16, 1.0f);
  auto before = float_buffers::kept();
  float_buffers::give(std::move(small));
  CHECK(float_buffers::kept() == before);
  for (int k = 0; k < 20; ++k)
    float_buffers::give(std::vector<float>(n));
  CHECK(float_buffers::kept() <= 8);
}

TEST_CASE("float buffers: weights read off the wire go back when their last reader lets go") {
  const size_t n = 100019;
  auto v = float_buffers::take(n);
  const float* where = v.data();
  {
    auto w = handed_back_floats(std::move(v));
    auto reader = w;  // a second holder
    CHECK(w.data() == where);
  }
  CHECK(float_buffers::take(n).data() == where);
}
