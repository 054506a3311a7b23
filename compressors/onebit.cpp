// onebit: each value's sign (1 bit), times one scale for the slice, the mean
// magnitude (4 bytes): what BytePS's onebit sends (Seide et al. 2014, with
// Bernstein et al.'s scaled sign). Error feedback carries what the sign lost.
#include <syncpoint/compressor.hpp>

#include <cmath>

namespace syncpoint {
namespace {

class onebit : public compressor {
 public:
  uint64_t compress(float* v, size_t n, uint64_t) const override {
    if (n == 0)
      return 0;
    double sum = 0;
    for (size_t i = 0; i < n; ++i)
      sum += std::fabs(static_cast<double>(v[i]));
    auto scale = static_cast<float>(sum / static_cast<double>(n));
    for (size_t i = 0; i < n; ++i)
      v[i] = v[i] < 0 ? -scale : scale;
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override { return n == 0 ? 0 : (static_cast<uint64_t>(n) + 7) / 8 + 4; }
};

SYNCPOINT_REGISTER_COMPRESSOR("onebit", "each value's sign and one scale for the slice: 1 bit a value", onebit);

}  // namespace
}  // namespace syncpoint
