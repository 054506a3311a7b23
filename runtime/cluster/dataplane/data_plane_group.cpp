// A worker's PS group as it reaches it from a node: each copy of each shard
// behind a local proxy on the bulk channel where one can be had, on CAF
// where not (data_plane::proxied; the connections are data_plane.cpp's).
#include "runtime/cluster/dataplane/data_plane.hpp"

namespace syncpoint::cluster {

data_plane::proxied_group data_plane::proxied(const ps_group& ps, int32_t worker, uint64_t key,
                                              const std::string& head_host, bool even_here) {
  proxied_group out;
  out.ps = ps;
  // `copy` of a shard (its primary, or with --ps-replicas a replica) behind a local proxy on the
  // bulk channel at `endpoint`; an invalid handle when it stays on CAF (said in out.notes).
  auto proxy_of = [&](const ps_actor& copy, const std::string& endpoint, size_t floats, const std::string& what,
                      bool& in_memory) {
    auto p = proxy_for(copy, endpoint, floats, what, worker, key, head_host, even_here);
    if (!p.note.empty())
      out.notes.push_back(p.note);
    if (p.proxy)
      out.proxies.push_back(caf::actor_cast<caf::actor>(p.proxy));
    in_memory = p.in_memory;
    return p.proxy;
  };
  for (size_t k = 0; k < ps.size(); ++k) {
    auto floats = ps.end(k) - ps.begin(k);
    auto serving = [&](const ps_actor& p, bool in_memory) {  // the copy the worker pulls from
      out.ps.shards[k] = p;
      out.on_bulk.push_back(k);
      if (in_memory)
        out.in_memory.push_back(k);
    };
    bool in_memory = false;
    if (k >= ps.copies.size()) {
      if (auto p = proxy_of(ps.shards[k], k < ps.bulk.size() ? ps.bulk[k] : "", floats, "shard " + std::to_string(k),
                            in_memory))
        serving(p, in_memory);
      continue;
    }
    // Replicated: each copy its proxy (a worker sends each its slice), the one that serves now among them.
    for (size_t r = 0; r < ps.copies[k].size(); ++r) {
      auto endpoint = k < ps.copy_bulk.size() && r < ps.copy_bulk[k].size() ? ps.copy_bulk[k][r] : "";
      auto what = (r == 0 ? "shard " : "replica " + std::to_string(r) + " of shard ") + std::to_string(k);
      if (auto p = proxy_of(ps.copies[k][r], endpoint, floats, what, in_memory)) {
        out.ps.copies[k][r] = p;
        if (ps.copies[k][r] == ps.shards[k])
          serving(p, in_memory);
      }
    }
  }
  return out;
}

}  // namespace syncpoint::cluster
