// Float vectors to receive into, handed back when done with.
//
// std::vector<float>::resize writes zeros into what it adds, a pass over a
// model-sized buffer (and the first touch of each of its pages) that a buffer
// about to be overwritten does not need: a gradient the model writes, a
// frame's floats the socket fills. The messages carry std::vector<float>, so
// a vector cannot skip that pass; one handed back can, being the right size
// already. The bulk channel takes its frames' buffers here, the PS gives a
// push's back when applied, a worker takes its gradient's, and weights read
// off the wire come back when their last reader lets go.
//
//   auto g = float_buffers::take(n);     // n floats, contents unspecified
//   fill(g);  send(std::move(g));        // ... where it ends:
//   float_buffers::give(std::move(g));   // kept for the next take(n)
#pragma once

#include <cstddef>
#include <vector>

namespace syncpoint::float_buffers {

/// A vector of `n` floats whose values are unspecified: one given back with
/// that size if there is one, else a new one.
std::vector<float> take(size_t n);

/// Keeps `v` for a later take of its size. Small vectors are let go (for them
/// the pass is cheap), and a few buffers at most are kept: the oldest goes.
void give(std::vector<float>&& v);

/// Buffers kept now (tests).
size_t kept();

}  // namespace syncpoint::float_buffers
