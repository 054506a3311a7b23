// Lossless packings of a push's floats (float_packing.hpp). Every test is on
// bits, not values: -0 stays -0, a NaN keeps its payload or is not packed.
#include "runtime/cluster/dataplane/float_packing.hpp"

#include "core/quantize.hpp"

#include <cstring>
#include <optional>

namespace syncpoint::cluster {

namespace {

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// The IEEE half whose value is exactly the float of bits `b`, if there is
// one: on bits, as a conversion library's rounding would hide an inexact one
// (and takes several times as long).
bool exact_half(uint32_t b, uint16_t& out) {
  const uint32_t sign = (b >> 16) & 0x8000u, exp = (b >> 23) & 0xffu, man = b & 0x7fffffu;
  if (exp == 0) {  // a zero; a float subnormal is below every half
    out = static_cast<uint16_t>(sign);
    return man == 0;
  }
  if (exp == 0xff) {  // an infinity; a NaN is not packed (its payload would not fit)
    out = static_cast<uint16_t>(sign | 0x7c00u);
    return man == 0;
  }
  const int e = static_cast<int>(exp) - 127;
  if (e >= -14 && e <= 15) {  // a normal half: 10 bits of mantissa
    out = static_cast<uint16_t>(sign | static_cast<uint32_t>(e + 15) << 10 | man >> 13);
    return (man & 0x1fffu) == 0;
  }
  if (e >= -24 && e < -14) {  // a subnormal half: the value is m * 2^-24, m < 1024
    const uint32_t m = 0x800000u | man;
    const int shift = -(e + 1);
    out = static_cast<uint16_t>(sign | m >> shift);
    return (m & ((1u << shift) - 1)) == 0;
  }
  return false;
}

uint32_t half_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f)
    return sign | 0x7f800000u | man << 13;
  if (exp != 0)
    return sign | (exp + 112) << 23 | man << 13;  // 112 = 127 - 15
  if (man == 0)
    return sign;
  int e = -14;  // subnormal: normalized into a float's exponent
  while ((man & 0x400u) == 0) {
    man <<= 1;
    --e;
  }
  return sign | static_cast<uint32_t>(e + 127) << 23 | (man & 0x3ffu) << 13;
}

constexpr uint32_t magnitude_mask = 0x7fffffffu;
constexpr uint32_t sign_bit = 0x80000000u;

size_t bytes_of(packing how, size_t n, size_t set) {
  switch (how) {
    case packing::high_halves:
    case packing::halves:
      return 2 * n;
    case packing::sparse:
      return 4 + 8 * set;
    case packing::signs:
      return 4 + (n + 7) / 8;
    case packing::e4m3:
      return n;
    case packing::blocks8:
      return 4 * ((n + quantize_block - 1) / quantize_block) + n;
    case packing::blocks4:
      return 4 * ((n + quantize_block - 1) / quantize_block) + n / quantize_block * (quantize_block / 2) +
             (n % quantize_block + 1) / 2;
    default:
      return 4 * n;
  }
}

// The bytes, written little by little into words.
class writer {
 public:
  explicit writer(size_t bytes) : words_((bytes + 3) / 4, 0.0f) {}
  template <class T>
  void put(T x) {
    std::memcpy(reinterpret_cast<char*>(words_.data()) + at_, &x, sizeof x);
    at_ += sizeof x;
  }
  void set_bit(size_t from_byte, size_t i) {
    reinterpret_cast<unsigned char*>(words_.data())[from_byte + i / 8] |= static_cast<unsigned char>(1u << (i % 8));
  }
  size_t at() const { return at_; }
  std::vector<float> done() { return std::move(words_); }

 private:
  std::vector<float> words_;
  size_t at_ = 0;
};

// The scale of a block whose values are all q * scale (|q| <= levels), if
// there is one: the compressor's is its largest magnitude over `levels`,
// which the packer finds back from the largest value, or an ulp or two off it.
bool block_of_integers(const float* v, size_t n, int levels, float& scale) {
  float largest = 0;
  for (size_t i = 0; i < n; ++i)
    largest = std::max(largest, std::fabs(v[i]));
  auto holds = [&](float s) {
    for (size_t i = 0; i < n; ++i) {
      int q = quantized(v[i], s, levels);
      if (bits_of(static_cast<float>(q) * s) != bits_of(v[i]))
        return false;
    }
    return true;
  };
  if (largest == 0) {
    scale = 0;
    return holds(0);
  }
  float guess = largest / static_cast<float>(levels);
  float down = guess, up = guess;
  for (int k = 0; k < 3; ++k) {
    for (float s : {down, up})
      if (holds(s)) {
        scale = s;
        return true;
      }
    down = std::nextafter(down, 0.0f);
    up = std::nextafter(up, largest);
  }
  return false;
}

// Blocks of `levels` integers: each block's scale, then its values `bits` each.
bool write_blocks(const float* v, size_t n, int levels, int bits, writer* w) {
  for (size_t b = 0; b < n; b += quantize_block) {
    auto m = std::min(quantize_block, n - b);
    float scale = 0;
    if (!block_of_integers(v + b, m, levels, scale))
      return false;
    if (!w)
      continue;
    w->put(scale);
    if (bits == 8) {
      for (size_t i = b; i < b + m; ++i)
        w->put(static_cast<int8_t>(quantized(v[i], scale, levels)));
    } else {
      for (size_t i = b; i < b + m; i += 2) {
        auto lo = static_cast<uint8_t>(quantized(v[i], scale, levels) + levels);
        auto hi = i + 1 < b + m ? static_cast<uint8_t>(quantized(v[i + 1], scale, levels) + levels) : uint8_t{0};
        w->put(static_cast<uint8_t>(lo | hi << 4));
      }
    }
  }
  return true;
}

// What one pass over the values says: which forms could hold them.
struct survey {
  bool high = true, same_magnitude = true;  // low halves all zero; one magnitude, signs differ
  size_t set = 0;                           // values that are not +0
  uint32_t magnitude = 0;                   // the first value's
};

survey survey_of(const float* v, size_t n) {
  survey s;
  s.magnitude = bits_of(v[0]) & magnitude_mask;
  for (size_t i = 0; i < n; ++i) {
    auto b = bits_of(v[i]);
    s.high &= (b & 0xffffu) == 0;
    s.same_magnitude &= (b & magnitude_mask) == s.magnitude;
    s.set += b != 0;
  }
  return s;
}

// The shortest form that holds the values. Halves, the costly test, is made
// only where no cheaper form is as short (fp16's gradients): it writes the
// halves into `halves` as it goes and stops at the first value that is none.
packing best_packing(const float* v, size_t n, const survey& s, std::optional<writer>& halves) {
  bool half = !s.high && !s.same_magnitude && bytes_of(packing::sparse, n, s.set) >= 2 * n;
  if (half) {
    halves.emplace(2 * n);
    uint16_t h = 0;
    for (size_t i = 0; half && i < n; ++i) {
      half = exact_half(bits_of(v[i]), h);
      halves->put(h);
    }
  }
  packing best = packing::none;
  auto consider = [&](packing how, bool holds) {
    if (holds && bytes_of(how, n, s.set) < bytes_of(best, n, s.set))
      best = how;
  };
  consider(packing::high_halves, s.high);
  consider(packing::halves, half);
  consider(packing::sparse, n <= UINT32_MAX);  // indices of 4 bytes
  consider(packing::signs, s.same_magnitude);
  // Bytes and half bytes: a pass each, that stops at the first value (or block) they do not hold.
  if (!s.same_magnitude && bytes_of(best, n, s.set) > n) {
    uint8_t byte = 0;
    bool fp8 = true;
    for (size_t i = 0; fp8 && i < n; ++i)
      fp8 = exact_e4m3(v[i], byte);
    consider(packing::e4m3, fp8);
    if (!fp8) {
      consider(packing::blocks4, write_blocks(v, n, 7, 4, nullptr));
      if (best != packing::blocks4)
        consider(packing::blocks8, write_blocks(v, n, 127, 8, nullptr));
    }
  }
  return best;
}

// The values in form `how` (not halves, written while choosing).
void write_packed(writer& w, packing how, const float* v, size_t n, const survey& s) {
  switch (how) {
    case packing::high_halves:
      for (size_t i = 0; i < n; ++i)
        w.put(static_cast<uint16_t>(bits_of(v[i]) >> 16));
      break;
    case packing::sparse:
      w.put(static_cast<uint32_t>(s.set));
      for (size_t i = 0; i < n; ++i)
        if (auto b = bits_of(v[i]); b != 0) {
          w.put(static_cast<uint32_t>(i));
          w.put(b);
        }
      break;
    case packing::signs: {
      w.put(s.magnitude);
      auto from = w.at();
      for (size_t i = 0; i < n; ++i)
        if (bits_of(v[i]) & sign_bit)
          w.set_bit(from, i);
      break;
    }
    case packing::e4m3:
      for (size_t i = 0; i < n; ++i) {
        uint8_t byte = 0;
        exact_e4m3(v[i], byte);
        w.put(byte);
      }
      break;
    case packing::blocks8:
      write_blocks(v, n, 127, 8, &w);
      break;
    case packing::blocks4:
      write_blocks(v, n, 7, 4, &w);
      break;
    default:
      break;
  }
}

}  // namespace

packed pack(const float* v, size_t n) {
  packed out;
  if (n == 0)
    return out;
  auto s = survey_of(v, n);
  std::optional<writer> halves;
  auto best = best_packing(v, n, s, halves);
  if (best == packing::none || bytes_of(best, n, s.set) * 4 > bytes_of(packing::none, n, s.set) * 3)
    return out;
  out.how = best;
  if (best == packing::halves) {
    out.words = halves->done();
    return out;
  }
  writer w(bytes_of(best, n, s.set));
  write_packed(w, best, v, n, s);
  out.words = w.done();
  return out;
}

namespace {

uint32_t load32(const unsigned char* bytes, size_t at) {
  uint32_t x;
  std::memcpy(&x, bytes + at, sizeof x);
  return x;
}

uint16_t load16(const unsigned char* bytes, size_t at) {
  uint16_t x;
  std::memcpy(&x, bytes + at, sizeof x);
  return x;
}

// Exactly the words the packer writes for `need` bytes: no more, no less.
bool fits(size_t need, size_t count) {
  return (need + 3) / 4 == count;
}

// The set count, then each (index, bits), indices rising: each value once.
bool unpack_sparse(const unsigned char* bytes, size_t count, float* out, size_t n) {
  if (count * 4 < 4)
    return false;
  size_t set = load32(bytes, 0);
  if (set > n || !fits(4 + 8 * set, count))
    return false;
  std::memset(out, 0, n * sizeof(float));
  size_t next = 0;
  for (size_t k = 0; k < set; ++k) {
    size_t i = load32(bytes, 4 + 8 * k);
    if (i < next || i >= n)
      return false;
    out[i] = from_bits(load32(bytes, 8 + 8 * k));
    next = i + 1;
  }
  return true;
}

// Per block, its scale, then a byte (or half byte) per value.
bool unpack_blocks(packing how, const unsigned char* bytes, size_t count, float* out, size_t n) {
  const bool eight = how == packing::blocks8;
  const int levels = eight ? 127 : 7;
  if (!fits(bytes_of(how, n, 0), count))
    return false;
  size_t at = 0;
  for (size_t b = 0; b < n; b += quantize_block) {
    auto m = std::min(quantize_block, n - b);
    float scale = from_bits(load32(bytes, at));
    at += 4;
    if (!std::isfinite(scale) || scale < 0)
      return false;
    for (size_t i = 0; i < m; ++i) {
      int q = eight ? static_cast<int8_t>(bytes[at + i]) : ((bytes[at + i / 2] >> (i % 2 * 4)) & 0xf) - levels;
      if (q < -levels || q > levels)
        return false;
      out[b + i] = static_cast<float>(q) * scale;
    }
    at += eight ? m : (m + 1) / 2;
  }
  return true;
}

}  // namespace

bool unpack(packing how, const float* words, size_t count, float* out, size_t n) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(words);
  switch (how) {
    case packing::high_halves:
      if (!fits(2 * n, count))
        return false;
      for (size_t i = 0; i < n; ++i)
        out[i] = from_bits(static_cast<uint32_t>(load16(bytes, 2 * i)) << 16);
      return true;
    case packing::halves:
      if (!fits(2 * n, count))
        return false;
      for (size_t i = 0; i < n; ++i)
        out[i] = from_bits(half_bits(load16(bytes, 2 * i)));
      return true;
    case packing::sparse:
      return unpack_sparse(bytes, count, out, n);
    case packing::signs: {
      if (!fits(4 + (n + 7) / 8, count))
        return false;
      const uint32_t magnitude = load32(bytes, 0);
      if (magnitude & sign_bit)
        return false;
      for (size_t i = 0; i < n; ++i)
        out[i] = from_bits(magnitude | ((bytes[4 + i / 8] >> (i % 8)) & 1u ? sign_bit : 0u));
      return true;
    }
    case packing::e4m3:
      if (!fits(n, count))
        return false;
      for (size_t i = 0; i < n; ++i) {
        if ((bytes[i] & 0x7f) == 0x7f)  // e4m3's NaN: never packed
          return false;
        out[i] = e4m3_value(bytes[i]);
      }
      return true;
    case packing::blocks8:
    case packing::blocks4:
      return unpack_blocks(how, bytes, count, out, n);
    default:
      return false;
  }
}

}  // namespace syncpoint::cluster
