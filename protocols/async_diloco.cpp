// Asynchronous DiLoCo (PROTOCOLS.md, "Asynchronous DiLoCo"; Liu et al. 2024,
// arXiv 2401.09135). No barrier: each worker pushes its outer gradient after
// its inner steps and is released at once to pull the newest model.
//  - Delayed Nesterov: each push moves the model by the outer rate alone, and
//    every N pushes the PS adds the momentum step of those N (ps_mode::delayed),
//    so stale outer gradients do not each get momentum's acceleration.
//  - Dynamic Local Updates: a worker's H_w follows its measured speed,
//    H × (its steps per second) / (the fastest's), so that a slow worker
//    takes fewer inner steps and all push at about the same pace.
#include "protocols/local_update.hpp"

#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <cmath>

namespace syncpoint {

class async_diloco : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    auto o = local_update_options("adamw", "0.001", "50");
    o.push_back({"delay", k::integer, "0", "async-diloco: pushes per momentum step of Delayed Nesterov (0: the workers, "
                 "-1: momentum with every push)", -1, 1e9});
    o.push_back({"dynamic-steps", k::text, "on", "async-diloco: H_w by each worker's measured speed (Dynamic Local "
                 "Updates)", -1e300, 1e300, {"on", "off"}});
    return o;
  }
  // The plain momentum rule: an outer gradient is not discounted for its
  // staleness (the adjusted rule's ASP heuristic); Delayed Nesterov is what
  // handles staleness here.
  static std::map<std::string, std::string> job_defaults() {
    return {{"optimizer", "nesterov"}, {"lr", "0.7"}, {"momentum", "0.9"}, {"momentum-rule", "plain"}};
  }

  explicit async_diloco(const protocol_options& o)
    : work_(local_update_work(o)), delay_(o.integer("delay")), dynamic_(o.text("dynamic-steps") == "on") {}

  void on_start(coordinator_api& c) override {
    auto n = static_cast<size_t>(c.workers());
    released_at_.assign(n, 0.0);
    step_time_.assign(n, 0.0);
    steps_.assign(n, work_.steps);
    if (delay_ == 0)
      delay_ = c.workers();
    c.set_mode(delay_ > 0 ? ps_mode::delayed : ps_mode::immediate);
    for (auto w : c.live_workers())
      go_on(c, w);
  }

  void on_push(coordinator_api& c, worker_id w) override {
    auto i = static_cast<size_t>(w);
    step_time_[i] = (c.now() - released_at_[i]) / static_cast<double>(steps_[i]);
    if (delay_ > 0 && ++pushes_ % static_cast<uint64_t>(delay_) == 0)
      c.commit();  // the momentum step of the last N pushes
    go_on(c, w);
  }

  void on_joined(coordinator_api& c, worker_id w) override { go_on(c, w); }

  void checkpoint(protocol_archive& ar) override { ar(delay_, pushes_, released_at_, step_time_, steps_); }

 private:
  // Worker w's next H_w, by the speed it showed against the fastest's, and off it goes.
  void go_on(coordinator_api& c, worker_id w) {
    auto i = static_cast<size_t>(w);
    if (dynamic_ && step_time_[i] > 0) {
      double fastest = step_time_[i];
      for (auto v : c.live_workers())
        if (step_time_[static_cast<size_t>(v)] > 0)
          fastest = std::min(fastest, step_time_[static_cast<size_t>(v)]);
      auto h = std::llround(static_cast<double>(work_.steps) * fastest / step_time_[i]);
      steps_[i] = static_cast<uint32_t>(std::clamp<long long>(h, 1, work_.steps));
    }
    auto work = work_;
    work.steps = steps_[i];
    c.set_local_work(w, work);
    released_at_[i] = c.now();
    c.release(w);
  }

  local_work work_;
  long long delay_;
  bool dynamic_;
  uint64_t pushes_ = 0;
  std::vector<double> released_at_;  // per worker: when its inner steps began
  std::vector<double> step_time_;    // ... the seconds one took, last measured (0: not yet)
  std::vector<uint32_t> steps_;      // ... its H_w
};

SYNCPOINT_REGISTER_PROTOCOL("async-diloco",
                            "DiLoCo without a barrier: Delayed Nesterov, and fewer inner steps for slower workers",
                            async_diloco);

}  // namespace syncpoint
