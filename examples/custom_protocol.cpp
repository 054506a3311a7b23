// A new protocol in one file: K-sync SGD. The PS buffers pushes and commits
// as soon as any K workers have pushed in the round; those K are released
// to pull the new version, the others' pushes count towards the next round.
// Nothing in the PS, the workers or the CLI changes to add it.
#include <syncpoint/protocol.hpp>
#include <syncpoint/train.hpp>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace {

class k_sync : public syncpoint::protocol {
 public:
  // Its option: --k on the CLI, a line in `syncpoint protocols`, checked by the registry.
  static std::vector<syncpoint::option_spec> options() {
    return {{"k", syncpoint::option_spec::kind::integer, "2", "pushes that close a round", 1, 4096, {}, ""}};
  }

  explicit k_sync(const syncpoint::protocol_options& o) : k_(static_cast<int>(o.integer("k"))) {}

  void on_start(syncpoint::coordinator_api& c) override {
    c.set_mode(syncpoint::ps_mode::buffered);
    for (auto w : c.live_workers())
      c.release(w);
  }

  void on_push(syncpoint::coordinator_api& c, syncpoint::worker_id) override { commit_if_enough(c); }
  void on_lost(syncpoint::coordinator_api& c, syncpoint::worker_id) override { commit_if_enough(c); }

 private:
  void commit_if_enough(syncpoint::coordinator_api& c) {
    std::vector<syncpoint::worker_id> pushed;
    for (auto w : c.live_workers())
      if (c.waiting(w))
        pushed.push_back(w);
    auto live = static_cast<int>(c.live_workers().size());
    if (pushed.empty() || static_cast<int>(pushed.size()) < std::min(k_, live))
      return;
    c.commit();
    for (auto w : pushed)
      c.release(w);
  }

  int k_;
};

}  // namespace

SYNCPOINT_REGISTER_PROTOCOL("k-sync", "commit when any k workers have pushed", k_sync);

int main(int argc, char** argv) {
  syncpoint::job_config cfg;
  cfg.protocol = "k-sync";
  cfg.protocol_opts.set("k", 3);
  cfg.workers = 4;
  cfg.model = argc > 1 ? argv[1] : "mlp";
  cfg.epochs = 1;
  cfg.straggler = "3:x4";
  cfg.iter_cost_ms = 10;
  cfg.progress = false;
  if (argc > 2)
    cfg.out_dir = argv[2];  // trace.jsonl and summary.json (examples/python/k_sync.py's test compares them)
  auto s = syncpoint::train(cfg).summary;
  std::printf("k-sync(K=3): accuracy %.3f in %.2f virtual s, mean compute ratio %.2f\n",
              s.final_accuracy, s.run_time_s, s.mean_compute_ratio);
  return 0;
}
