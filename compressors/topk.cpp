// topk:R: the ceil(R n) values of largest magnitude go, each with its index
// (4 + 4 bytes); the others are zero (BytePS's topk; Aji and Heafield 2017).
// Error feedback makes up the rest over the next pushes. Ties go to the
// lower index, so a run repeats bit for bit.
#include <syncpoint/compressor.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace syncpoint {
namespace {

class topk : public compressor {
 public:
  explicit topk(double ratio) : ratio_(ratio) {}
  uint64_t compress(float* v, size_t n, uint64_t) const override {
    size_t k = kept(n);
    if (k < n) {
      std::vector<uint32_t> order(n);
      std::iota(order.begin(), order.end(), 0u);
      auto size = [v](uint32_t i) {  // NaN as the largest (a strict order; the PS refuses the push)
        return std::isnan(v[i]) ? std::numeric_limits<float>::infinity() : std::fabs(v[i]);
      };
      auto larger = [&](uint32_t a, uint32_t b) {
        float x = size(a), y = size(b);
        return x > y || (x == y && a < b);
      };
      std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), larger);
      for (size_t i = k; i < n; ++i)
        v[order[i]] = 0.0f;
    }
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override { return 8 * static_cast<uint64_t>(kept(n)); }

 private:
  size_t kept(size_t n) const { return values_kept(ratio_, n); }
  double ratio_;
};

SYNCPOINT_REGISTER_RATIO_COMPRESSOR("topk", "the share R of values of largest magnitude, with their indices: 8 bytes each",
                                    topk);

}  // namespace
}  // namespace syncpoint
