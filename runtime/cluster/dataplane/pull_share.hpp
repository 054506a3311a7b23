// One pull per version for the workers of a process (issue 24, the data
// plane): when two or more workers of one process pull the same version
// from a shard of another process, one of their proxies fetches it and the
// others take the same weights, so the version crosses the wire once per
// process and not once per worker (BytePS and Horovod's hierarchical
// all-reduce save a machine's bytes the same way). Within a process the
// workers share the weights as they share a local PS's.
//
// A proxy asks its share before it pulls (pull, min_version). The first to
// ask for a version is told to fetch it (share_reply{fetch = true}) and
// hands the weights back (fetched, min_version, weights); those who ask
// while it is on its way wait and get them. Only a proxy whose worker's key
// the shard has accepted once may wait: the first pull of each goes to the
// shard. If the fetch fails or its proxy goes, a waiter fetches instead.
//
//   auto share = spawn_pull_share(sys, shard);   // data_plane: one per remote shard
//   proxy: request(share, pull_atom, v) -> share_reply; if fetch: pull, then send (fetched_atom, v, w)
#pragma once

#include "core/interfaces.hpp"

namespace syncpoint::cluster {

using fetched_atom = caf::atom_constant<caf::atom("bk_fetchd")>;
using fetch_failed_atom = caf::atom_constant<caf::atom("bk_fetchx")>;

/// The share's answer to a pull: fetch it yourself, or these weights.
struct share_reply {
  bool fetch = false;
  weights w;
};

/// The share for pulls from `shard` in this process; it ends with the shard.
caf::actor spawn_pull_share(caf::actor_system& sys, const ps_actor& shard);

}  // namespace syncpoint::cluster

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(syncpoint::cluster::share_reply)
