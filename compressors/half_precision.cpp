// fp16 and bf16: each value rounded to a 2-byte float, as Horovod and BytePS
// send halves. Eigen's types do the rounding (to nearest even). fp16 is IEEE
// half: a value beyond ±65504 goes as ±65504 (the largest half), and error
// feedback carries the rest. bf16 keeps float's exponent (its range) and 8
// bits of mantissa.
#include <syncpoint/compressor.hpp>

#include <Eigen/Core>

#include <algorithm>

namespace syncpoint {
namespace {

template <class Half>
class rounded : public compressor {
 public:
  uint64_t compress(float* v, size_t n, uint64_t) const override {
    const float largest = static_cast<float>(Eigen::NumTraits<Half>::highest());
    for (size_t i = 0; i < n; ++i)  // (NaN stays NaN: the PS refuses it)
      v[i] = static_cast<float>(Half(std::clamp(v[i], -largest, largest)));
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override { return 2 * static_cast<uint64_t>(n); }
};

using fp16 = rounded<Eigen::half>;
using bf16 = rounded<Eigen::bfloat16>;

SYNCPOINT_REGISTER_COMPRESSOR("fp16", "IEEE half precision: 2 bytes a value", fp16);
SYNCPOINT_REGISTER_COMPRESSOR("bf16", "bfloat16: 2 bytes a value, float's range", bf16);

}  // namespace
}  // namespace syncpoint
