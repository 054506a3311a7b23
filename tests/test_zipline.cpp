// ZipLine against the brute-force oracle, and the three variants against each other.
#include "protocols/elastic_bsp/zipline.hpp"

#include <doctest/doctest.h>

#include <random>
#include <stdexcept>

using namespace syncpoint;

namespace {

const zipline_variant variants[] = {zipline_variant::plain, zipline_variant::opt,
                                    zipline_variant::opt_bs};

zipline_matrix from_rows(const std::vector<std::vector<double>>& rows) {
  zipline_matrix m(rows.size(), rows.front().size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t r = 0; r < rows[i].size(); ++r)
      m.at(i, r) = rows[i][r];
  return m;
}

// Small integer times make equal timestamps and identical rows common.
zipline_matrix random_matrix(std::mt19937_64& rng, size_t n, size_t R, int kind) {
  zipline_matrix m(n, R);
  std::uniform_int_distribution<int> start(0, 6), step(0, 3), fstep(1, 5);
  for (size_t i = 0; i < n; ++i) {
    if (kind == 1 && i > 0 && rng() % 2 == 0) {  // a copy of an earlier row
      auto j = rng() % i;
      for (size_t r = 0; r < R; ++r)
        m.at(i, r) = m.at(j, r);
      continue;
    }
    double t = start(rng);
    double delta = kind == 2 ? fstep(rng) * 0.37 : 0;  // kind 2: regular, as predictions are
    for (size_t r = 0; r < R; ++r) {
      m.at(i, r) = t;
      t += kind == 2 ? delta : step(rng);
    }
  }
  return m;
}

}  // namespace

TEST_CASE("zipline: a hand-checked instance") {
  auto m = from_rows({{0, 10, 20, 30}, {0, 3, 6, 9}, {0, 7, 14, 21}});
  // Spans: all at column 0 give span 0 at barrier 0: the trivial best.
  for (auto v : variants) {
    auto z = zipline(m, v);
    CHECK(z.span == 0);
    CHECK(z.barrier == 0);
    CHECK(z.stops == std::vector<uint32_t>{0, 0, 0});
  }
  auto m2 = from_rows({{5, 10, 20, 30}, {0, 3, 6, 9}, {1, 7, 14, 21}});
  // (5, 6, 7) has span 2; nothing has span 1 (5 and 21 have no neighbour
  // within 1 in every row; 10 has 9 but not 14 or 7; 20 has 21 but no 19..21 in row 1).
  for (auto v : variants) {
    auto z = zipline(m2, v);
    CHECK(z.span == 2);
    CHECK(z.barrier == 7);
    CHECK(z.stops == std::vector<uint32_t>{0, 2, 1});
  }
}

TEST_CASE("zipline: ties go to the earliest barrier, then the smallest columns") {
  // Two windows of span 1: [3,4] and [7,8]; the earlier one wins. Worker 1 has
  // two columns inside [3,4] (3 and 4): the smaller column is chosen.
  auto m = from_rows({{0, 4, 8}, {3, 4, 7}});
  for (auto v : variants) {
    auto z = zipline(m, v);
    CHECK(z.span == 0);  // 4 and 4
    CHECK(z.barrier == 4);
    CHECK(z.stops == std::vector<uint32_t>{1, 1});
  }
  auto ident = from_rows({{1, 2, 3}, {1, 2, 3}, {1, 2, 3}});
  for (auto v : variants)
    CHECK(zipline(ident, v).stops == std::vector<uint32_t>{0, 0, 0});
  auto flat = from_rows({{2, 2, 2}, {1, 2, 5}});
  for (auto v : variants) {
    auto z = zipline(flat, v);
    CHECK(z.span == 0);
    CHECK(z.barrier == 2);
    CHECK(z.stops == std::vector<uint32_t>{0, 1});
  }
}

TEST_CASE("zipline: all variants agree with the brute-force oracle on 6000 random instances") {
  std::mt19937_64 rng(2024);
  int checked = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    size_t n = 1 + rng() % 6, R = 1 + rng() % 6;
    auto m = random_matrix(rng, n, R, trial % 3);
    auto want = zipline_brute_force(m);
    for (auto v : variants) {
      auto got = zipline(m, v);
      if (got.stops != want.stops) {
        std::string text;
        for (size_t i = 0; i < m.n; ++i) {
          for (size_t r = 0; r < m.R; ++r)
            text += std::to_string(m.at(i, r)) + " ";
          text += "| got " + std::to_string(got.stops[i]) + " want " + std::to_string(want.stops[i]) + "\n";
        }
        FAIL(to_string(v) << " trial " << trial << "\n" << text);
      }
      REQUIRE(got.span == want.span);
      REQUIRE(got.barrier == want.barrier);
    }
    ++checked;
  }
  CHECK(checked == 6000);
}

TEST_CASE("zipline: the variants agree on large instances") {
  std::mt19937_64 rng(7);
  for (size_t n : {50, 300}) {
    for (int kind = 0; kind < 3; ++kind) {
      auto m = random_matrix(rng, n, 40, kind);
      auto a = zipline(m, zipline_variant::plain);
      CHECK(zipline(m, zipline_variant::opt).stops == a.stops);
      CHECK(zipline(m, zipline_variant::opt_bs).stops == a.stops);
      // Negative times, and zeros of both signs, which are equal times (opt-bs sorts by bits).
      for (size_t i = 0; i < m.n; ++i)
        for (size_t r = 0; r < m.R; ++r)
          m.at(i, r) = m.at(i, r) == 3 && i % 2 ? -0.0 : m.at(i, r) - 3;
      a = zipline(m, zipline_variant::plain);
      CHECK(zipline(m, zipline_variant::opt_bs).stops == a.stops);
      CHECK(zipline(m, zipline_variant::opt_bs).span == a.span);
    }
  }
}

TEST_CASE("zipline: malformed matrices and variant names are refused") {
  CHECK_THROWS_WITH_AS(check_zipline_matrix(from_rows({{1, 2}, {3, 1}})),
                       "row 1 is not ascending at column 1", std::invalid_argument);
  CHECK_THROWS_AS(check_zipline_matrix(zipline_matrix{}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_zipline_variant("fast"),
                       "unknown ZipLine variant 'fast' (valid: zipline, zipline-opt, zipline-opt-bs)",
                       std::invalid_argument);
}
