// A sparse table's rows wherever they are (<syncpoint/table.hpp>): how a row
// starts, and which shard keeps it. Both are functions of the key alone, so
// the PS, the workers and a model holding a table densely agree on them.
#include <syncpoint/table.hpp>

#include <algorithm>
#include <cmath>

namespace syncpoint {

namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text)
    h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

double unit(uint64_t& state) {  // in (0, 1)
  return (static_cast<double>(splitmix64(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

}  // namespace

std::vector<float> initial_row(const table_spec& spec, uint64_t seed, uint64_t key) {
  std::vector<float> out(spec.width, 0.0f);
  if (spec.init == row_init::zeros)
    return out;
  uint64_t state = seed ^ fnv1a(spec.name) ^ (key * 0xd6e8feb86659fd93ULL);
  for (auto& x : out) {
    if (spec.init == row_init::uniform) {
      x = static_cast<float>((2 * unit(state) - 1) * spec.init_scale);
    } else {  // Box-Muller, one value a pair of draws: the same row whatever the width's parity
      double u1 = unit(state), u2 = unit(state);
      x = static_cast<float>(std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2) * spec.init_scale);
    }
  }
  return out;
}

// Lamping and Veach's jump consistent hash: a key's bucket moves only to the
// new one when buckets grow, and spreads evenly whatever the keys' pattern.
uint32_t row_shard(uint64_t key, uint32_t shards) {
  int64_t b = -1, j = 0;
  while (j < static_cast<int64_t>(shards)) {
    b = j;
    key = key * 2862933555777941757ULL + 1;
    j = static_cast<int64_t>(static_cast<double>(b + 1) * (static_cast<double>(1LL << 31) /
                                                          static_cast<double>((key >> 33) + 1)));
  }
  return static_cast<uint32_t>(std::max<int64_t>(b, 0));
}

}  // namespace syncpoint
