// The parameter server as K shards: each shard actor owns a contiguous range
// of the flat parameter vector (ps-lite's key ranges, MXNet's split arrays).
// Workers push each shard its slice of a gradient and pull one version from
// every shard; the coordinator sends its control messages to every shard.
// With one shard everything is as with a single parameter server.
//
//   ps_group ps{shards, ps_group::even_bounds(model_size, shards.size())};
//   for (size_t k = 0; k < ps.size(); ++k)
//     send(ps.shards[k], slice of g from ps.begin(k) to ps.end(k));
#pragma once

#include "core/interfaces.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace syncpoint {

struct ps_group {
  std::vector<ps_actor> shards;
  std::vector<uint64_t> bounds;  // shard k owns [bounds[k], bounds[k+1]); size() + 1 entries
  // Across processes, where shard k takes bulk connections ("host:port",
  // ":port" on the head's host, "" none: runtime/cluster/dataplane/data_plane.hpp).
  std::vector<std::string> bulk;
  // With replicated shards (--ps-replicas R), copies[k][r] is copy r of shard
  // k (r = 0: its first primary), invalid once lost; shards[k] is the one that
  // serves now. Every copy takes every push and the coordinator's sequence,
  // so each holds the same model, optimizer state and version
  // (docs/architecture.md, "Replicated shards"). Empty: no replicas.
  std::vector<std::vector<ps_actor>> copies;
  std::vector<std::vector<std::string>> copy_bulk;  // ... and where each copy takes bulk connections (as `bulk`)

  size_t size() const { return shards.size(); }
  /// R: how many replicas each shard has beside its primary.
  size_t replicas() const { return copies.empty() ? 0 : copies.front().size() - 1; }
  /// Whether pushes wait for the coordinator's sequence: several shards, or copies to keep in step.
  bool sequenced() const { return size() > 1 || replicas() > 0; }
  /// Shard k's copies that are still there, the primary among them (just the primary without replicas).
  std::vector<ps_actor> members(size_t k) const {
    if (copies.empty())
      return {shards[k]};
    std::vector<ps_actor> out;
    for (auto& c : copies[k])
      if (c)
        out.push_back(c);
    return out;
  }
  /// Every shard's live copies, shard by shard.
  std::vector<ps_actor> all_members() const {
    std::vector<ps_actor> out;
    for (size_t k = 0; k < size(); ++k)
      for (auto& c : members(k))
        out.push_back(c);
    return out;
  }
  uint64_t begin(size_t k) const { return bounds[k]; }
  uint64_t end(size_t k) const { return bounds[k + 1]; }
  uint64_t model_size() const { return bounds.empty() ? 0 : bounds.back(); }
  explicit operator bool() const { return !shards.empty() && shards.front(); }
  const ps_actor& lead() const { return shards.front(); }  // reports every push with its reply

  /// Whether `who` is one of the shards (a primary).
  bool has(const caf::actor_addr& who) const {
    for (auto& s : shards)
      if (caf::actor_cast<caf::actor_addr>(s) == who)
        return true;
    return false;
  }

  /// Where `who` is among the copies: {shard, copy}; {-1, -1} if not one.
  std::pair<int, int> copy_of(const caf::actor_addr& who) const {
    for (size_t k = 0; k < copies.size(); ++k)
      for (size_t r = 0; r < copies[k].size(); ++r)
        if (copies[k][r] && caf::actor_cast<caf::actor_addr>(copies[k][r]) == who)
          return {static_cast<int>(k), static_cast<int>(r)};
    return {-1, -1};
  }

  /// A PS of one shard (the model's size matters only to a sharded PS).
  static ps_group one(ps_actor ps, uint64_t model_size = 0) { return {{std::move(ps)}, {0, model_size}}; }

  /// `n` values over `k` shards: contiguous ranges of equal size, each
  /// starting on a 64-byte boundary (16 floats), the last taking the rest.
  static std::vector<uint64_t> even_bounds(uint64_t n, size_t k) {
    std::vector<uint64_t> b(k + 1, n);
    b[0] = 0;
    uint64_t per = (n / k + 15) / 16 * 16;
    for (size_t i = 1; i < k; ++i)
      b[i] = std::min(n, per * i);
    return b;
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ps_group& x) {
  return f(caf::meta::type_name("ps_group"), x.shards, x.bounds, x.bulk, x.copies, x.copy_bulk);
}

}  // namespace syncpoint
