#include "runtime/shard_sampler.hpp"

#include <algorithm>

namespace syncpoint {

shard_sampler::shard_sampler(int64_t examples, int workers, int id, uint64_t seed)
  : rng_(seed * 1000003u + static_cast<uint64_t>(id)) {
  for (int64_t i = id; i < examples; i += workers)
    shard_.push_back(i);
  std::shuffle(shard_.begin(), shard_.end(), rng_);
}

int64_t shard_sampler::next() {
  if (cursor_ == shard_.size()) {
    std::shuffle(shard_.begin(), shard_.end(), rng_);
    cursor_ = 0;
  }
  return shard_[cursor_++];
}

}  // namespace syncpoint
