// int8, int4 and fp8: each value in a byte or half a byte, as the outer
// gradients of Streaming DiLoCo go (docs/compression.md). int8 and int4 send
// blocks of 64 whole numbers in [-127, 127] or [-7, 7] with one float scale a
// block (its largest magnitude over 127 or 7); fp8 sends each value as the
// nearest e4m3 number. Error feedback carries what the rounding lost.
#include <syncpoint/compressor.hpp>

#include "core/quantize.hpp"

namespace syncpoint {
namespace {

template <int Levels, int Bits>
class block_integers : public compressor {
 public:
  uint64_t compress(float* v, size_t n, uint64_t) const override {
    quantize_blocks(v, n, Levels);
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override {
    auto blocks = (static_cast<uint64_t>(n) + quantize_block - 1) / quantize_block;
    return (static_cast<uint64_t>(n) * Bits + 7) / 8 + 4 * blocks;
  }
};

using int8 = block_integers<127, 8>;
using int4 = block_integers<7, 4>;

class fp8 : public compressor {
 public:
  uint64_t compress(float* v, size_t n, uint64_t) const override {
    for (size_t i = 0; i < n; ++i)
      v[i] = round_e4m3(v[i]);
    return bytes(n);
  }
  uint64_t bytes(size_t n) const override { return n; }
};

SYNCPOINT_REGISTER_COMPRESSOR("int8", "whole numbers in [-127, 127] and a float scale a block of 64: 1 byte a value",
                              int8);
SYNCPOINT_REGISTER_COMPRESSOR("int4", "whole numbers in [-7, 7] and a float scale a block of 64: half a byte a value",
                              int4);
SYNCPOINT_REGISTER_COMPRESSOR("fp8", "each value the nearest e4m3 float (±448 at most): 1 byte a value", fp8);

}  // namespace
}  // namespace syncpoint
