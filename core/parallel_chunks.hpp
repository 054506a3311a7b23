// A pass over a large vector split across the machine's cores: the PS's
// optimizer pass over a model of millions of floats (actors/ps_passes.hpp)
// would otherwise run on one core while every worker waits for it.
//
//   parallel_chunks(n, [&](size_t begin, size_t end) {
//     for (size_t i = begin; i < end; ++i) out[i] = f(in[i]);   // each i on its own
//   });
//
// The body must treat each index on its own (no sums across them): chunks
// run at once, and the result is then the same, bit for bit, as one loop's.
#pragma once

#include <cstddef>
#include <functional>

namespace syncpoint {

/// Below this many elements a pass runs inline: a thread's start costs more than it saves.
inline constexpr size_t parallel_pass_min = size_t{1} << 20;

/// Calls body(begin, end) over consecutive chunks covering [0, n): on the
/// calling thread alone when n < parallel_pass_min, else on up to
/// min(cores, 8) threads, the caller among them. Returns when every chunk is done.
void parallel_chunks(size_t n, const std::function<void(size_t, size_t)>& body);

/// The most threads a pass takes from now on (0: the default, min(cores, 8));
/// 1 runs every pass inline. Returns the setting before.
size_t set_parallel_chunks_threads(size_t max);

}  // namespace syncpoint
