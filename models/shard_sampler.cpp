#include "models/shard_sampler.hpp"

#include <stdexcept>

#include <algorithm>
#include <sstream>

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
  ++draws_;
  return shard_[cursor_++];
}

std::string shard_sampler::rng_state() const {
  std::ostringstream out;
  out << rng_;
  return out.str();
}

void shard_sampler::advance(uint64_t n) {
  // Whole passes reshuffle without walking them.
  while (n > 0) {
    if (cursor_ == shard_.size()) {
      std::shuffle(shard_.begin(), shard_.end(), rng_);
      cursor_ = 0;
    }
    auto step = std::min<uint64_t>(n, shard_.size() - cursor_);
    cursor_ += step;
    draws_ += step;
    n -= step;
  }
}

void shard_sampler::restore(const loop_state& s, int worker) {
  advance(s.position);
  if (rng_state() != s.bytes)
    throw std::invalid_argument("worker " + std::to_string(worker) +
                                ": the checkpoint's data position does not match its shard (another data set?)");
}

}  // namespace syncpoint
