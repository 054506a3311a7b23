// The data plane of a cluster process (issue 24): gradients and weights
// between a worker and a PS shard of another process go on the bulk channel
// (runtime/cluster/dataplane/bulk.hpp); everything else, and every message within a
// process, stays on CAF. The actors do not change: a worker's shard handle
// is a local proxy that speaks the bulk channel, and on the shard's side a
// gateway actor hands each push and pull to the shard.
//
// Who may push: the head gives each worker of a job a random 64-bit key and
// every shard the keys of all; a bulk connection names its worker, and is
// refused at its hello, before anything is made for it, unless it carries
// that worker's key (compared in constant time); the shard checks the key
// again on every push and pull, from the gateway of its own process (PS
// handler `push, bulk, key, gradient_push`). A gateway answers at most
// `max_in_flight` requests at once: a proxy has one or two.
//
// Workers of one process that pull the same version from a shard of another
// fetch it once between them (runtime/cluster/dataplane/pull_share.hpp).
//
//   auto plane = std::make_shared<data_plane>(sys, bulk_security{token, tls}, log);
//   plane->serve(shard, slice_size, keys);                      // the shard's process
//   auto p = plane->proxied(spec.ps, id, spec.bulk_key, head_host);  // the worker's
//   spawn the worker with p.ps; end p.proxies with it.
#pragma once

#include "core/interfaces.hpp"
#include "core/ps_group.hpp"
#include "runtime/cluster/dataplane/bulk.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

namespace syncpoint::cluster {

class data_plane {
 public:
  data_plane(caf::actor_system& sys, bulk_security security, std::function<void(const std::string&)> log,
             const std::string& host = "127.0.0.1", bulk_limits limits = {});
  ~data_plane();

  /// The port this process's shards take bulk connections on.
  uint16_t port() const;

  /// `shard` (of this process, `floats` values long) takes bulk connections
  /// from now on, until it quits, from the workers whose keys it holds (by id).
  void serve(const ps_actor& shard, uint64_t floats, std::vector<uint64_t> keys);

  /// Pushes this process's proxies sent packed so far: compressed gradients
  /// (--compress) whose floats crossed a socket in a shorter form that gives
  /// back the same bits (runtime/cluster/dataplane/float_packing.hpp).
  /// SYNCPOINT_BULK_PACK=0 sends them as they are.
  uint64_t packed_pushes() const { return packed_->load(); }

  /// The requests a connection may have open at once (more: it is closed).
  static constexpr size_t max_in_flight = 16;

  struct proxied_group {
    ps_group ps;                       // `ps` with each reachable shard of another process proxied
    std::vector<caf::actor> proxies;   // to end with the worker
    std::vector<size_t> on_bulk;       // the shards proxied
    std::vector<size_t> in_memory;     // ... of them, those whose floats go through shared memory
    std::vector<std::string> notes;    // shards left on CAF, and why
  };
  /// The PS as worker `worker` of this process sees it: each shard of another
  /// process whose bulk endpoint (ps.bulk) answers becomes a local proxy;
  /// an endpoint ":PORT" is on `head_host`. `even_here`: shards of this
  /// process too (tests: one process plays both sides).
  proxied_group proxied(const ps_group& ps, int32_t worker, uint64_t key, const std::string& head_host,
                        bool even_here = false);

  struct copy_proxy {
    ps_actor proxy;          // invalid: the copy stays on CAF (`note` says why, if not just here)
    bool in_memory = false;  // its floats go through shared memory
    std::string note;
  };
  /// One copy of a shard of `floats` values (`what`: "shard 1", for notes), taking
  /// bulk connections at `endpoint` (as ps_group::bulk), as worker `worker`
  /// reaches it: a proxy the caller ends with the worker. A copy made in a lost
  /// one's place (--ps-rereplicate) is reached this way.
  copy_proxy proxy_for(const ps_actor& copy, const std::string& endpoint, uint64_t floats, const std::string& what,
                       int32_t worker, uint64_t key, const std::string& head_host, bool even_here = false);

 private:
  std::variant<bulk_handler, std::string> accept(const std::vector<char>& hello, std::shared_ptr<bulk_link> link);
  // A second proxy of this process for `shard`: its proxies pull through one share.
  void share_pulls(const ps_actor& shard, const caf::actor& proxy);

  caf::actor_system& sys_;
  bulk_security security_;
  std::function<void(const std::string&)> log_;
  bulk_limits limits_;
  bool pack_ = true;  // compressed gradients packed over sockets (float_packing.hpp)
  std::shared_ptr<std::atomic<uint64_t>> packed_ = std::make_shared<std::atomic<uint64_t>>(0);
  bulk_io io_;
  std::mutex mutex_;
  struct served {
    caf::actor_addr shard;
    uint64_t floats = 0;
    std::vector<uint64_t> keys;  // by worker
  };
  std::map<caf::actor_id, served> shards_;  // by id
  struct pulls {
    caf::actor share;                     // once two proxies pull from the shard
    std::vector<caf::actor_addr> proxies;
  };
  std::map<caf::actor_addr, pulls> shares_;  // by remote shard
  std::unique_ptr<bulk_server> server_;
};

/// "host:port" of a bulk endpoint ("[host]:port" for an IPv6 host).
std::string bulk_endpoint(const std::string& host, uint16_t port);

}  // namespace syncpoint::cluster
