// A sparse table's rows on one shard (actors/row_store.hpp; issue 61, step 1):
// rows made from their key's own generator, pushes summed per key, each row
// optimizer's lazy update as computed by hand, the capacity policies on
// scripted key streams, and bad input refused with nothing changed.
#include "actors/row_store.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace syncpoint;

namespace {

table_spec spec_of(uint32_t width, row_optimizer opt = row_optimizer::sgd) {
  table_spec t;
  t.name = "ids";
  t.width = width;
  t.optimizer = opt;
  return t;
}

std::vector<float> row_of(row_store& s, uint64_t key) { return s.pull({key}); }

}  // namespace

TEST_CASE("rows: absent keys are made from their seed, in any order, and duplicates read the same row") {
  row_store a(spec_of(4), 7), b(spec_of(4), 7), other_seed(spec_of(4), 8);
  auto ab = a.pull({3, 9, 3});
  auto ba = b.pull({9, 3});
  REQUIRE(ab.size() == 12);
  CHECK(std::vector<float>(ab.begin(), ab.begin() + 4) == std::vector<float>(ba.begin() + 4, ba.end()));  // key 3
  CHECK(std::vector<float>(ab.begin() + 4, ab.begin() + 8) == std::vector<float>(ba.begin(), ba.begin() + 4));  // key 9
  CHECK(std::vector<float>(ab.begin(), ab.begin() + 4) == std::vector<float>(ab.begin() + 8, ab.end()));  // key 3 twice
  CHECK(a.initial_row(3) == std::vector<float>(ab.begin(), ab.begin() + 4));
  CHECK(other_seed.initial_row(3) != a.initial_row(3));
  CHECK(a.rows() == 2);
  CHECK(a.hits() == 1);  // the second 3
  CHECK(a.misses() == 2);
  double sum = 0, squares = 0;
  row_store wide(spec_of(4000), 1);
  for (auto x : wide.initial_row(5)) {
    sum += x;
    squares += static_cast<double>(x) * x;
  }
  CHECK(std::abs(sum / 4000) < 0.001);                   // normal(0, 0.01)
  CHECK(std::abs(std::sqrt(squares / 4000) - 0.01) < 0.001);
}

TEST_CASE("rows: a key pushed twice in one push takes the sum of its gradients in one step (sgd)") {
  row_store s(spec_of(2), 1);
  auto w = row_of(s, 5);
  std::vector<float> g{1, 2, 3, 4};
  s.push({5, 5}, g.data(), 0.5, 1);
  auto now = row_of(s, 5);
  CHECK(now[0] == static_cast<float>(w[0] - 0.5 * 4.0f));
  CHECK(now[1] == static_cast<float>(w[1] - 0.5 * 6.0f));
}

TEST_CASE("rows: adagrad's and lazy adam's updates are torch's rules per row, computed by hand") {
  row_store ada(spec_of(1, row_optimizer::adagrad), 1);
  auto w = static_cast<double>(row_of(ada, 1)[0]);
  double acc = 0;
  for (float g : {0.5f, -2.0f}) {
    ada.push({1}, &g, 0.1, 1);
    acc += static_cast<double>(g) * g;
    w = static_cast<float>(w - 0.1 * g / (std::sqrt(static_cast<double>(static_cast<float>(acc))) + 1e-8));
  }
  CHECK(row_of(ada, 1)[0] == static_cast<float>(w));

  // Lazy adam: row 1 pushed at steps 1 and 3, row 2 at step 2 only: each row's bias
  // corrections count its own pushes, not the table's.
  row_store adam(spec_of(1, row_optimizer::adam), 1);
  auto by_hand = [](double w0, std::vector<float> gs) {
    double m = 0, v = 0, w = w0;
    int t = 0;
    for (float g : gs) {
      ++t;
      m = static_cast<float>(0.9 * m + 0.1 * g);
      v = static_cast<float>(0.999 * v + 0.001 * g * g);
      double denom = std::sqrt(v) / std::sqrt(1 - std::pow(0.999, t)) + 1e-8;
      w = static_cast<float>(w - 0.01 / (1 - std::pow(0.9, t)) * m / denom);
    }
    return static_cast<float>(w);
  };
  double w1 = row_of(adam, 1)[0], w2 = row_of(adam, 2)[0];
  float g1 = 1.0f, g2 = -0.5f, g3 = 3.0f;
  adam.push({1}, &g1, 0.01, 1);
  adam.push({2}, &g2, 0.01, 2);
  adam.push({1}, &g3, 0.01, 3);
  CHECK(row_of(adam, 1)[0] == by_hand(w1, {g1, g3}));
  CHECK(row_of(adam, 2)[0] == by_hand(w2, {g2}));
}

TEST_CASE("rows: lru and lfu evict by their rule, ttl expires what was untouched, admission waits for the Nth sighting") {
  auto lru = spec_of(1);
  lru.capacity = row_capacity::lru;
  lru.max_rows = 2;
  row_store l(lru, 1);
  l.pull({1}, 1);
  l.pull({2}, 2);
  l.pull({1}, 3);
  l.pull({3}, 4);  // full: 2 was touched least recently
  CHECK(l.has(1));
  CHECK(!l.has(2));
  CHECK(l.has(3));
  CHECK(l.evictions() == 1);

  auto lfu = lru;
  lfu.capacity = row_capacity::lfu;
  row_store f(lfu, 1);
  f.pull({1, 1, 1}, 1);
  f.pull({2}, 2);  // the more recent, but touched once
  f.pull({3}, 3);
  CHECK(f.has(1));
  CHECK(!f.has(2));
  CHECK(f.has(3));

  auto ttl = spec_of(1);
  ttl.capacity = row_capacity::ttl;
  ttl.ttl_steps = 2;
  row_store t(ttl, 1);
  t.pull({1, 2}, 1);
  float g = 1;
  t.push({2}, &g, 0.1, 3);  // 1 untouched since step 1: 1 + 2 < 3 is false, it stays
  CHECK(t.has(1));
  t.expire(4);              // 1 + 2 < 4: it goes; 2 was touched at 3
  CHECK(!t.has(1));
  CHECK(t.has(2));

  auto admit = spec_of(1);
  admit.admit_after = 2;
  row_store a(admit, 1);
  auto first = a.pull({9});
  CHECK(first == a.initial_row(9));  // read as it would start, but no row yet
  CHECK(!a.has(9));
  a.push({9}, &g, 0.1, 1);  // dropped: no row
  CHECK(a.pull({9}) == a.initial_row(9));
  CHECK(a.has(9));  // the second sighting made it
}

TEST_CASE("rows: a non-finite gradient is refused and nothing of the push is applied, and impossible specs are refused") {
  row_store s(spec_of(2), 1);
  auto before = s.pull({1, 2});
  std::vector<float> g{1, 1, 1, std::numeric_limits<float>::quiet_NaN()};
  CHECK_THROWS_WITH_AS(s.push({1, 2}, g.data(), 0.1, 1),
                       "table 'ids': a non-finite value in the row gradient of key 2", std::invalid_argument);
  CHECK(s.pull({1, 2}) == before);
  auto bad = spec_of(0);
  CHECK_THROWS_WITH_AS(row_store(bad, 1), "table 'ids': a row of width 0", std::invalid_argument);
  bad = spec_of(2);
  bad.capacity = row_capacity::lru;
  CHECK_THROWS_WITH_AS(row_store(bad, 1), "table 'ids': lru and lfu need the most rows to keep (max_rows > 0)",
                       std::invalid_argument);
}

TEST_CASE("rows: a kept version reads its rows as they were while later pushes change them") {
  row_store s(spec_of(1), 1);
  auto w0 = row_of(s, 3)[0];
  float g = 1.0f;
  s.keep_versions({0}, 0);  // a release of version 0 still to be served
  s.push({3}, &g, 0.5, 0);  // version 1
  s.keep_versions({0}, 1);  // (version 0 stays readable; 1 is not kept)
  s.push({3}, &g, 0.5, 1);  // version 2
  CHECK(s.pull({3}, 2, /*at=*/0)[0] == w0);
  CHECK(s.pull({3}, 2)[0] == w0 - 0.5f - 0.5f);
  s.keep_versions({}, 2);  // served: the old rows go
  CHECK(s.pull({3}, 2, /*at=*/0)[0] == w0 - 0.5f - 0.5f);
}

TEST_CASE("rows: row_shard spreads keys evenly, and a fourth shard takes keys only from the other three") {
  std::vector<int> count(3, 0);
  int moved = 0;
  for (uint64_t key = 0; key < 30000; ++key) {
    auto k3 = row_shard(key << 40 | key, 3), k4 = row_shard(key << 40 | key, 4);
    REQUIRE(k3 < 3);
    ++count[k3];
    if (k4 != k3) {
      CHECK(k4 == 3);
      ++moved;
    }
  }
  for (int c : count)
    CHECK(std::abs(c - 10000) < 400);
  CHECK(std::abs(moved - 7500) < 400);  // a quarter of the keys move, to the new shard
}
