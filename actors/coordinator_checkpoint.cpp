#include "actors/coordinator_state.hpp"

#include "protocols/protocol_state.hpp"

#include <stdexcept>

namespace syncpoint {

saved_coordinator save(coordinator_state& st) {
  saved_coordinator s;
  s.live = st.live_;
  s.gone = st.gone_;
  s.waiting = st.waiting_;
  for (auto& p : st.promise_)
    s.held.push_back(p.pending());
  s.clock = st.clock_;
  s.waiting_since = st.waiting_since_;
  s.pending_release = st.pending_release_;
  s.accepted = st.accepted_;
  s.batch = st.batch_;
  for (auto& [id, e] : st.timers_)
    s.timers.push_back({id, e.is_release, e.worker, e.pull, e.tag});
  s.next_timer = st.next_timer_;
  s.version = st.version_;
  s.published_version = st.published_version_;
  s.samples = st.samples_;
  s.next_eval = st.next_eval;
  s.event = st.event;
  s.mode = static_cast<uint8_t>(st.mode_);
  s.local_step = st.local_step_;
  s.overlap = st.overlap_;
  s.target_reached = st.target_reached;
  s.last_accuracy = st.last_accuracy;
  s.next_tick = st.next_tick;
  s.max_time_s = st.cfg->max_time_s;
  s.losses = st.losses;
  s.protocol_state = save_protocol_state(*st.cfg->proto, st.cfg->protocol_name);
  return s;
}

void restore(coordinator_state& st, const saved_coordinator& s) {
  auto n = st.live_.size();
  for (auto size : {s.live.size(), s.gone.size(), s.waiting.size(), s.held.size(), s.clock.size(),
                    s.waiting_since.size(), s.pending_release.size(), s.accepted.size(), s.batch.size()})
    if (size != n)
      throw std::invalid_argument("the checkpoint's coordinator has " + std::to_string(size) +
                                  " workers, the job " + std::to_string(n));
  st.live_ = s.live;
  st.gone_ = s.gone;
  st.waiting_ = s.waiting;
  st.clock_ = s.clock;
  st.waiting_since_ = s.waiting_since;
  st.pending_release_ = s.pending_release;
  st.accepted_ = s.accepted;
  st.batch_ = s.batch;
  st.timers_.clear();
  for (auto& t : s.timers)
    st.timers_[t.id] = {t.is_release, t.worker, t.pull, t.tag};
  st.next_timer_ = s.next_timer;
  st.version_ = s.version;
  st.published_version_ = s.published_version;
  st.samples_ = s.samples;
  st.next_eval = s.next_eval;
  st.event = s.event;
  st.mode_ = static_cast<ps_mode>(s.mode);
  st.local_step_ = s.local_step;
  st.overlap_ = s.overlap;
  st.target_reached = s.target_reached;
  st.last_accuracy = s.last_accuracy;
  st.next_tick = s.next_tick;
  st.losses = s.losses;
  load_protocol_state(*st.cfg->proto, st.cfg->protocol_name, s.protocol_state);
  st.resumed = true;
}

}  // namespace syncpoint
