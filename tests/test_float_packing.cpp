// A push's floats packed for a socket (runtime/cluster/dataplane/float_packing.hpp):
// each compressor's output packs into its own shorter form and unpacks to the
// same bits; floats no form holds are not packed; words that are not such a
// packing are refused.
#include "runtime/cluster/dataplane/float_packing.hpp"
#include "core/quantize.hpp"

#include <syncpoint/compressor.hpp>

#include <Eigen/Core>
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace syncpoint;
using namespace syncpoint::cluster;

namespace {

std::vector<float> gradient(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, 0.01f);
  std::vector<float> g(n);
  for (auto& x : g)
    x = d(rng);
  return g;
}

std::vector<uint32_t> bits(const std::vector<float>& v) {
  std::vector<uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

// Packs `v`, checks the form and the size, unpacks: the same bits.
void round_trip(const std::vector<float>& v, packing want, size_t most_bytes) {
  auto p = pack(v.data(), v.size());
  REQUIRE(p.how == want);
  CHECK(p.words.size() * 4 <= most_bytes);
  std::vector<float> back(v.size(), 7.0f);
  REQUIRE(unpack(p.how, p.words.data(), p.words.size(), back.data(), back.size()));
  CHECK(bits(back) == bits(v));
}

std::vector<float> compressed(const std::string& spec, size_t n, uint32_t seed) {
  auto g = gradient(n, seed);
  std::vector<float> residual(n, 0.0f);
  compress_with_feedback(*make_compressor(spec), g.data(), residual.data(), n, seed);
  return g;
}

}  // namespace

TEST_CASE("float packing: each compressor's gradient packs into its own form, about its encoding's bytes, bit for bit") {
  const size_t n = 10001;  // not a multiple of 8 or of 2
  round_trip(compressed("bf16", n, 1), packing::high_halves, 2 * n + 2);
  round_trip(compressed("fp16", n, 2), packing::halves, 2 * n + 2);
  round_trip(compressed("topk:0.01", n, 3), packing::sparse, 4 + 8 * 101);
  round_trip(compressed("randomk:0.1", n, 4), packing::sparse, 4 + 8 * 1001);
  round_trip(compressed("onebit", n, 5), packing::signs, 4 + (n + 7) / 8 + 3);
  auto blocks = (n + 63) / 64;
  round_trip(compressed("fp8", n, 6), packing::e4m3, n + 3);
  round_trip(compressed("int8", n, 7), packing::blocks8, 4 * blocks + n + 3);
  round_trip(compressed("int4", n, 8), packing::blocks4, 4 * blocks + (n + 1) / 2 + 3);
  // A block of zeros, a block of one value, and a short last block.
  auto g = compressed("int4", 130, 9);
  std::fill(g.begin(), g.begin() + 64, 0.0f);
  round_trip(g, packing::blocks4, 4 * 3 + 65 + 3);
  std::vector<float> same(70, 0.125f);
  auto c = make_compressor("int8");
  c->compress(same.data(), same.size(), 1);
  CHECK(same[0] == 0.125f);
}

TEST_CASE("float packing: every e4m3 byte but its NaNs packs and comes back as the same float") {
  std::vector<float> all;
  for (int b = 0; b < 256; ++b)
    if ((b & 0x7f) != 0x7f)
      all.push_back(e4m3_value(static_cast<uint8_t>(b)));
  CHECK(all.size() == 254);
  for (auto x : all)
    CHECK(round_e4m3(x) == x);  // each is its own nearest
  round_trip(all, packing::e4m3, 254 + 2);
  CHECK(e4m3_value(0x7e) == 448.0f);
  CHECK(e4m3_value(0x01) == std::ldexp(1.0f, -9));
  CHECK(round_e4m3(1000.0f) == 448.0f);                    // saturates
  CHECK(round_e4m3(0.3f) == 0.3125f);                      // 1.010 x 2^-2
  CHECK(round_e4m3(std::ldexp(1.0f, -11)) == 0.0f);        // below half the smallest subnormal (ties to even: 0)
  CHECK(round_e4m3(std::ldexp(3.0f, -11)) == std::ldexp(1.0f, -9));
}

TEST_CASE("float packing: a gradient no form holds is not packed") {
  auto g = gradient(4096, 6);
  auto p = pack(g.data(), g.size());
  CHECK(p.how == packing::none);
  CHECK(p.words.empty());
  // Half of the values zero: sparse would save too little (8 bytes a value left).
  for (size_t i = 0; i < g.size(); i += 2)
    g[i] = 0.0f;
  CHECK(pack(g.data(), g.size()).how == packing::none);
  CHECK(pack(g.data(), 0).how == packing::none);
}

TEST_CASE("float packing: signed zeros, infinities, NaN payloads and half subnormals keep their bits") {
  const float inf = std::numeric_limits<float>::infinity();
  float nan_payload;
  uint32_t nan_bits = 0x7fc01234u;
  std::memcpy(&nan_payload, &nan_bits, 4);
  // bf16 values, a -0 and an infinity among them.
  std::vector<float> high(64, 0.5f);
  high[3] = -0.0f;
  high[7] = -inf;
  round_trip(high, packing::high_halves, 128);
  // Halves: the smallest subnormal half, the largest half, a -0.
  std::vector<float> halves(64, 0.25f);
  halves[1] = std::ldexp(1.0f, -24);
  halves[2] = -65504.0f;
  halves[3] = -0.0f;
  halves[4] = 0.1f;  // not a half: the form is not halves ...
  CHECK(pack(halves.data(), halves.size()).how != packing::halves);
  halves[4] = 0.125f;  // ... and now it is (every value a half, and not all a bf16)
  halves[5] = 1.0f + std::ldexp(1.0f, -10);
  round_trip(halves, packing::halves, 128);
  // Sparse keeps a -0 (its sign bit is set) and a NaN's payload.
  std::vector<float> sparse(1000, 0.0f);
  sparse[0] = -0.0f;
  sparse[500] = nan_payload;
  sparse[999] = 3.0f;
  round_trip(sparse, packing::sparse, 4 + 8 * 3);
  // One magnitude with signs (here also bf16 values: the shorter form wins).
  std::vector<float> signs(100, 0.5f);
  for (size_t i = 0; i < signs.size(); i += 3)
    signs[i] = -0.5f;
  round_trip(signs, packing::signs, 4 + 13 + 3);
}

TEST_CASE("float packing: every half there is, as a float, packs into halves and back to its bits") {
  std::vector<float> all;  // each of the 63490 halves that is not a NaN, as Eigen converts it
  for (uint32_t h = 0; h <= 0xffffu; ++h)
    if ((h & 0x7c00u) != 0x7c00u || (h & 0x3ffu) == 0)
      all.push_back(static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(h))));
  REQUIRE(all.size() == 63490);
  round_trip(all, packing::halves, 2 * all.size());
  // One float past each kind of half is none: a mantissa bit below a normal's, below a subnormal's.
  for (float off : {1.0f + std::ldexp(1.0f, -11), std::ldexp(1.0f, -24) * 1.5f, std::ldexp(1.0f, -25), 65536.0f}) {
    std::vector<float> v(all.begin(), all.begin() + 1000);
    v.push_back(off);
    CHECK_MESSAGE(pack(v.data(), v.size()).how != packing::halves, off);
  }
}

TEST_CASE("float packing: words that are not a packing of n values are refused") {
  auto v = compressed("topk:0.01", 1000, 7);
  auto p = pack(v.data(), v.size());
  REQUIRE(p.how == packing::sparse);
  std::vector<float> out(1000);
  CHECK(!unpack(p.how, p.words.data(), p.words.size() - 1, out.data(), out.size()));  // cut short
  CHECK(!unpack(p.how, p.words.data(), p.words.size(), out.data(), 5));                // an index past n
  auto swapped = p.words;  // two entries out of order
  std::swap(swapped[1], swapped[3]);
  std::swap(swapped[2], swapped[4]);
  CHECK(!unpack(p.how, swapped.data(), swapped.size(), out.data(), out.size()));
  auto counted = p.words;  // a count the words do not hold
  uint32_t many = 1000;
  std::memcpy(counted.data(), &many, 4);
  CHECK(!unpack(p.how, counted.data(), counted.size(), out.data(), out.size()));
  std::vector<float> halves(10, 0.5f);
  CHECK(!unpack(packing::high_halves, halves.data(), halves.size(), out.data(), 100));  // 10 words are not 100 halves
  CHECK(!unpack(packing::none, halves.data(), halves.size(), out.data(), 10));          // not a packing
  CHECK(!unpack(static_cast<packing>(9), halves.data(), halves.size(), out.data(), 10));
  std::vector<float> signed_magnitude(2, 0.0f);
  uint32_t negative = 0x80000001u;
  std::memcpy(signed_magnitude.data(), &negative, 4);
  CHECK(!unpack(packing::signs, signed_magnitude.data(), 2, out.data(), 8));  // a magnitude with its sign set
}
