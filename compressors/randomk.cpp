// randomk:R: ceil(R n) values chosen at random go (4 bytes each); the PS
// draws the same indices from the seed the push carries (8 bytes), so no
// index crosses the wire (BytePS's randomk). The others are zero; error
// feedback makes them up later. The draw is a partial Fisher-Yates shuffle
// over a generator seeded by (run seed, worker, iteration, slice).
#include <syncpoint/compressor.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

namespace syncpoint {
namespace {

class randomk : public compressor {
 public:
  explicit randomk(double ratio) : ratio_(ratio) {}
  uint64_t compress(float* v, size_t n, uint64_t seed) const override {
    size_t k = kept(n);
    if (k < n) {
      std::vector<uint32_t> order(n);
      std::iota(order.begin(), order.end(), 0u);
      std::mt19937_64 draw(seed);
      for (size_t i = 0; i < k; ++i)  // order[0..k): the chosen ones
        std::swap(order[i], order[i + draw() % (n - i)]);
      for (size_t i = k; i < n; ++i)
        v[order[i]] = 0.0f;
    }
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override { return 4 * static_cast<uint64_t>(kept(n)) + 8; }

 private:
  size_t kept(size_t n) const { return values_kept(ratio_, n); }
  double ratio_;
};

SYNCPOINT_REGISTER_RATIO_COMPRESSOR("randomk", "the share R of values at random, drawn again from a seed: 4 bytes each",
                                    randomk);

}  // namespace
}  // namespace syncpoint
