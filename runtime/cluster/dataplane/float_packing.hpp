// A push's floats in a shorter form that gives back the same bits, for the
// bulk channel between processes (runtime/cluster/dataplane/data_plane.cpp).
// A compressed gradient (--compress) holds what its encoding can say: bf16
// values (float's top 16 bits), fp16 values, mostly zeros (topk, randomk),
// one magnitude with signs (onebit), e4m3 numbers (fp8), or blocks of 64
// whole numbers times a scale (int8, int4). The worker's side finds the shortest
// such form in a pass over the values, the shard's side unpacks it, and the
// PS applies exactly the floats the worker computed. Over a socket the bytes
// on the wire are then about those the trace counts; through shared memory
// the floats go as they are (a copy costs less than packing).
//
//   auto p = pack(grad.data(), grad.size());           // p.how == packing::none: send the floats
//   std::vector<float> back(grad.size());
//   bool ok = unpack(p.how, p.words.data(), p.words.size(), back.data(), back.size());
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace syncpoint::cluster {

enum class packing : uint8_t {
  none = 0,     // the floats as they are
  high_halves,  // each value's top 16 bits (its low 16 are zero: bf16)
  halves,       // each value as an IEEE half, which holds it exactly (fp16)
  sparse,       // the count, then (index, bits) of each value whose bits are not all zero, by index
  signs,        // one magnitude's bits, then a bit a value: set for a negative sign
  e4m3,         // each value as an e4m3 byte, which holds it exactly (fp8)
  blocks8,      // blocks of 64: the scale's bits, then a byte a value, q in [-127, 127] (v = q * scale)
  blocks4,      // blocks of 64: the scale's bits, then 4 bits a value, q + 7 (q in [-7, 7])
};

struct packed {
  packing how = packing::none;
  std::vector<float> words;  // the packed bytes, in 4-byte words (a frame carries floats)
};

/// The shortest of the forms above that holds v[0, n) exactly, if it takes at
/// most three quarters of the floats' bytes; else packing::none and no words.
packed pack(const float* v, size_t n);

/// Unpacks `count` words packed `how` into out[0, n). False, with `out`
/// unspecified, if they are not such a packing of n values (a length that
/// does not fit, an index out of order or out of range).
bool unpack(packing how, const float* words, size_t count, float* out, size_t n);

}  // namespace syncpoint::cluster
