// The PS's passes over a large model run on several cores (core/parallel_chunks.hpp):
// every index exactly once, and the optimizer's result the same, bit for bit,
// as the pass on one core.
#include "actors/ps_passes.hpp"
#include "core/parallel_chunks.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

using namespace syncpoint;

namespace {

struct one_thread {  // every pass inline while it lives
  size_t before = set_parallel_chunks_threads(1);
  ~one_thread() { set_parallel_chunks_threads(before); }
};

std::vector<float> random_floats(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (auto& x : v)
    x = d(rng);
  return v;
}

}  // namespace

TEST_CASE("parallel chunks: every index once, whatever the size and the threads") {
  for (size_t cap : {0, 1, 2, 3, 8})
    for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, parallel_pass_min - 1, parallel_pass_min,
                     parallel_pass_min + 7, 3 * parallel_pass_min + 13}) {
      CAPTURE(cap);
      CAPTURE(n);
      auto before = set_parallel_chunks_threads(cap);
      std::vector<uint8_t> seen(n, 0);
      parallel_chunks(n, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i)
          ++seen[i];
      });
      set_parallel_chunks_threads(before);
      CHECK(std::count(seen.begin(), seen.end(), uint8_t{1}) == static_cast<std::ptrdiff_t>(n));
    }
}

// A model of 3M parameters and 100 buffer values, one momentum SGD pass
// with weight decay, on the cores and on one: the same floats.
TEST_CASE("parallel chunks: the PS's SGD pass over a large model gives one core's floats") {
  const size_t n = 3 * parallel_pass_min + 100;
  auto make = [&] {
    ps_state st;
    st.w = std::make_shared<std::vector<float>>(random_floats(n, 1));
    st.trained = n - 100;
    st.velocity = random_floats(n, 2);
    st.cfg.weight_decay = 5e-4;
    st.cfg.optimizer.kind = optimizer_kind::sgd;
    return st;
  };
  auto g = random_floats(n, 3);
  auto grad = [&](size_t i) { return g[i]; };
  auto on_cores = make(), on_one = make();
  passes::sgd_pass(on_cores, grad, 0.25f, 1.0f, 0.9f, 0.05f, passes::buffers_toward(g.data(), 0.25f));
  {
    one_thread serial;
    passes::sgd_pass(on_one, grad, 0.25f, 1.0f, 0.9f, 0.05f, passes::buffers_toward(g.data(), 0.25f));
  }
  CHECK(*on_cores.w == *on_one.w);
  CHECK(on_cores.velocity == on_one.velocity);
  CHECK(*on_cores.w != random_floats(n, 1));  // the pass moved them
}
