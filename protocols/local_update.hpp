// What the local-update protocols share (docs/protocols.md, "Local updates"):
// their options for H and the inner optimizer, and the work they give each
// worker. Each protocol is a file of its own (local_sgd.cpp, diloco.cpp,
// streaming_diloco.cpp, async_diloco.cpp).
//
//   static std::vector<option_spec> options() { return local_update_options("adamw", "0.0004"); }
//   explicit diloco(const protocol_options& o) : work_(local_update_work(o)) {}
#pragma once

#include <syncpoint/protocol.hpp>

#include <map>
#include <string>
#include <vector>

namespace syncpoint {

/// --local-steps (-H) and the inner optimizer's options, with these defaults.
std::vector<option_spec> local_update_options(const std::string& inner_optimizer, const std::string& inner_lr,
                                              const std::string& local_steps = "50");

/// The work the options describe: H steps of the inner optimizer, an outer push, the pulled model replacing.
local_work local_update_work(const protocol_options& o);

/// A BSP round of local work: buffered pushes, committed when every live
/// worker pushed, everyone released to pull (Local SGD and DiLoCo).
class synchronous_local_update : public protocol {
 public:
  explicit synchronous_local_update(local_work work) : work_(std::move(work)) {}
  void on_start(coordinator_api& c) override;
  void on_push(coordinator_api& c, worker_id) override { close_round_if_complete(c); }
  void on_lost(coordinator_api& c, worker_id) override { close_round_if_complete(c); }
  void on_joined(coordinator_api& c, worker_id w) override;
  void checkpoint(protocol_archive&) override {}  // the round is the coordinator's waiting set

 private:
  void close_round_if_complete(coordinator_api& c);
  local_work work_;
};

}  // namespace syncpoint
