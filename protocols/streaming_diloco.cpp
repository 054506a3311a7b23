// Streaming DiLoCo (PROTOCOLS.md, "Streaming DiLoCo"; Douillard et al. 2025,
// arXiv 2501.18512). DiLoCo with the model cut into F fragments on tensor
// boundaries (strided by default: tensor i in fragment i mod F), each
// synchronized every H inner steps, fragment p at steps p·offset + kH
// (offset H/F by default): the link carries one fragment at a time, about
// 1/F of DiLoCo's peak. A round is a BSP round of one fragment: every live
// worker pushes that fragment's outer gradient, the PS steps the outer
// optimizer on its mean over that fragment alone, and each worker merges
// the new fragment into its own copy by a lerp, θ ← α θ_local + (1 − α) θ_global,
// after going on for up to τ inner steps while its push waited for the round.
#include "protocols/local_update.hpp"

#include <syncpoint/protocol_archive.hpp>

#include <algorithm>
#include <stdexcept>

namespace syncpoint {

class streaming_diloco : public protocol {
 public:
  static std::vector<option_spec> options() {
    using k = option_spec::kind;
    auto o = local_update_options("adamw", "0.001", "50");
    o.push_back({"fragments", k::integer, "4", "streaming-diloco: fragments the model is cut into (F)", 1, 4096, {}, "F"});
    o.push_back({"fragment-offset", k::integer, "0", "streaming-diloco: inner steps between two fragments' syncs (0: H/F)",
                 0, 1e9});
    o.push_back({"overlap-steps", k::integer, "1", "streaming-diloco: the most inner steps taken while an exchange is in flight (τ)",
                 0, 1e9});
    o.push_back({"alpha", k::real, "0.5", "streaming-diloco: merge θ ← α θ_local + (1 − α) θ_global (0: replace)", 0, 1});
    o.push_back({"fragment-layout", k::text, "strided",
                 "streaming-diloco: strided (each tensor in turn to the smallest fragment) or contiguous", -1e300, 1e300,
                 {"strided", "contiguous"}});
    return o;
  }
  static std::map<std::string, std::string> job_defaults() {
    return {{"optimizer", "nesterov"}, {"lr", "0.7"}, {"momentum", "0.9"}};
  }

  explicit streaming_diloco(const protocol_options& o) : work_(local_update_work(o)) {
    auto f = o.integer("fragments");
    auto h = static_cast<long long>(work_.steps);
    if (o.has("job.tensors") && f > o.integer("job.tensors"))
      throw std::invalid_argument("--fragments " + std::to_string(f) + " is more than the model's " +
                                  std::to_string(o.integer("job.tensors")) + " tensors (" + o.text("job.model") +
                                  "): a fragment is one or more whole tensors");
    if (f > h)
      throw std::invalid_argument("--fragments " + std::to_string(f) + " is more than --local-steps " +
                                  std::to_string(h) + ": each fragment needs a step of its own to sync at");
    auto offset = o.integer("fragment-offset") > 0 ? o.integer("fragment-offset") : std::max(1LL, h / f);
    if (offset * (f - 1) >= h)
      throw std::invalid_argument("--fragment-offset " + std::to_string(offset) + " puts " + std::to_string(f) +
                                  " fragments' syncs past --local-steps " + std::to_string(h));
    work_.fragments = static_cast<uint32_t>(f);
    work_.alpha = o.real("alpha");
    work_.overlap = static_cast<uint32_t>(o.integer("overlap-steps"));
    work_.layout = o.text("fragment-layout") == "contiguous" ? fragment_layout::contiguous : fragment_layout::strided;
    // Fragment p syncs at phase p·offset of each period of H steps (fragment 0 at its end).
    std::vector<std::pair<long long, uint32_t>> phases;
    for (long long p = 0; p < f; ++p)
      phases.emplace_back(p == 0 ? h : p * offset, static_cast<uint32_t>(p));
    std::sort(phases.begin(), phases.end());
    long long at = 0;
    for (auto [phase, p] : phases) {
      schedule_.push_back({p, static_cast<uint32_t>(phase - at)});
      at = phase;
    }
    auto shortest = std::min_element(schedule_.begin(), schedule_.end(),
                                     [](auto& a, auto& b) { return a.steps < b.steps; })->steps;
    if (work_.overlap >= shortest)
      throw std::invalid_argument("--overlap-steps " + std::to_string(work_.overlap) +
                                  " is not below the fewest inner steps between two syncs (" + std::to_string(shortest) +
                                  "): an exchange must come back before the next begins");
  }

  void on_start(coordinator_api& c) override {
    c.set_mode(ps_mode::buffered);
    for (auto w : c.live_workers()) {
      c.set_local_work(w, work_now());
      c.release(w);
    }
  }

  void on_push(coordinator_api& c, worker_id) override { close_round_if_complete(c); }
  void on_lost(coordinator_api& c, worker_id) override { close_round_if_complete(c); }
  void on_joined(coordinator_api& c, worker_id w) override {
    c.set_local_work(w, work_now());
    close_round_if_complete(c);
  }

  void checkpoint(protocol_archive& ar) override { ar(position_); }

 private:
  struct sync {
    uint32_t fragment;
    uint32_t steps;  // inner steps since the previous sync
  };

  local_work work_now() const {
    auto s = schedule_[position_ % schedule_.size()];
    auto w = work_;
    w.fragment = s.fragment;
    w.steps = s.steps;
    return w;
  }

  // Every live worker pushed this fragment: the PS steps it, and everyone goes
  // on to the next fragment, merging this one when its pull comes.
  void close_round_if_complete(coordinator_api& c) {
    if (!everyone_waiting(c))
      return;
    c.commit();
    ++position_;
    for (auto w : c.live_workers()) {
      c.set_local_work(w, work_now());
      c.release(w);
    }
  }

  local_work work_;
  std::vector<sync> schedule_;  // one period of H steps
  uint64_t position_ = 0;       // syncs so far
};

SYNCPOINT_REGISTER_PROTOCOL("streaming-diloco",
                            "DiLoCo one fragment of the model at a time, overlapped with compute and merged by a lerp",
                            streaming_diloco);

}  // namespace syncpoint
