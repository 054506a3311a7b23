// Values as 8 or 4 bits (docs/compression.md): what the int8, int4 and fp8
// compressors round a gradient to (compressors/quantized.cpp) and the bulk
// channel's packings check and carry (runtime/cluster/dataplane/float_packing.cpp).
//  - int8, int4: blocks of 64 values, each value q * scale with q a whole
//    number in [-L, L] (L = 127 or 7) and one float scale a block,
//    max |v| / L;
//  - fp8: each value rounded to the nearest e4m3 number (OCP FP8 E4M3FN:
//    4 exponent bits, 3 of mantissa, ±448 at most, subnormals down to 2^-9).
//
//   float v[3] = {0.3f, -1.0f, 0.01f};
//   quantize_blocks(v, 3, 127);          // v[1] == -1; v[0] == 38 * (1 / 127.f)
//   float r = round_e4m3(0.3f);           // 0.3125
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace syncpoint {

/// Values a block of the int8 and int4 compressors.
inline constexpr size_t quantize_block = 64;

/// A block's scale: its largest magnitude over `levels` (0 for a block of
/// zeros); NaN when the block holds a value that is not finite.
inline float block_scale(const float* v, size_t n, int levels) {
  float largest = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i]))
      return std::numeric_limits<float>::quiet_NaN();
    largest = std::max(largest, std::fabs(v[i]));
  }
  return largest / static_cast<float>(levels);
}

/// v[i] as a whole number of `scale`s, in [-levels, levels], to nearest (even).
inline int quantized(float v, float scale, int levels) {
  if (scale == 0)
    return 0;
  auto q = std::nearbyint(v / scale);
  return static_cast<int>(std::clamp(q, static_cast<float>(-levels), static_cast<float>(levels)));
}

/// Rounds v[0, n) in place, block by block, to q * scale (int8: levels 127, int4: 7).
/// A block with a value that is not finite is left as it is, so that the PS
/// refuses the push rather than take a finite number made of it.
inline void quantize_blocks(float* v, size_t n, int levels) {
  for (size_t b = 0; b < n; b += quantize_block) {
    auto m = std::min(quantize_block, n - b);
    float scale = block_scale(v + b, m, levels);
    if (std::isnan(scale))
      continue;
    for (size_t i = b; i < b + m; ++i)
      v[i] = static_cast<float>(quantized(v[i], scale, levels)) * scale;
  }
}

/// The e4m3 number nearest to x (ties to even), saturating at ±448; NaN and
/// ±inf stay as they are (the PS refuses them).
inline float round_e4m3(float x) {
  if (!std::isfinite(x))
    return x;
  float a = std::min(std::fabs(x), 448.0f);
  if (a == 0)
    return x;  // ±0 as it was
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): a's exponent is e - 1
  int exponent = std::max(e - 1, -6);  // below 2^-6: subnormal, steps of 2^-9
  float step = std::ldexp(1.0f, exponent - 3);
  float r = std::min(std::nearbyint(a / step) * step, 448.0f);
  return std::signbit(x) ? -r : r;
}

/// The e4m3 byte of `x` if x is exactly an e4m3 number (round_e4m3(x) == x, bit for bit).
inline bool exact_e4m3(float x, uint8_t& out) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  uint8_t sign = static_cast<uint8_t>(bits >> 31 << 7);
  float a = std::fabs(x);
  if (std::isnan(x) || a > 448.0f)
    return false;
  if (a == 0) {
    out = sign;
    return true;
  }
  int e = 0;
  float f = std::frexp(a, &e);  // a = f * 2^e
  int exponent = e - 1;
  if (exponent >= -6) {  // normal: 1.mmm * 2^exponent
    float m = (f * 2 - 1) * 8;  // the mantissa's three bits, if exact
    if (m != std::floor(m))
      return false;
    out = static_cast<uint8_t>(sign | (exponent + 7) << 3 | static_cast<int>(m));
    return true;
  }
  float m = a / std::ldexp(1.0f, -9);  // subnormal: m * 2^-9, m in 1..7
  if (m != std::floor(m) || m >= 8)
    return false;
  out = static_cast<uint8_t>(sign | static_cast<int>(m));
  return true;
}

/// The float of an e4m3 byte (0x7f and 0xff, its NaNs, are not packed: never read).
inline float e4m3_value(uint8_t b) {
  int exponent = (b >> 3) & 0xf, m = b & 0x7;
  float a = exponent == 0 ? std::ldexp(static_cast<float>(m), -9)
                          : std::ldexp(1.0f + static_cast<float>(m) / 8, exponent - 7);
  return (b & 0x80) ? -a : a;
}

}  // namespace syncpoint
