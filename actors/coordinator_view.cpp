// What the protocol sees of the run (protocol_view, actors/coordinator_state.hpp):
// each call answered from, or handed to, the coordinator's state.
#include "actors/coordinator_state.hpp"

namespace syncpoint {

int protocol_view::workers() const { return static_cast<int>(st_.workers.size()); }
bool protocol_view::live(worker_id w) const { return st_.live(w); }
std::vector<worker_id> protocol_view::live_workers() const { return st_.workers.live_workers(); }
int protocol_view::live_count() const { return st_.workers.live_count(); }
int protocol_view::waiting_count() const { return st_.workers.waiting_count(); }
uint64_t protocol_view::min_clock() const { return st_.workers.min_clock(); }
uint64_t protocol_view::clock(worker_id w) const {
  return st_.valid(w) ? st_.workers[coordinator_state::idx(w)].clock : 0;
}
double protocol_view::now() const { return st_.now(); }
bool protocol_view::waiting(worker_id w) const { return st_.waiting(w); }
void protocol_view::release(worker_id w, bool pull) { st_.release(w, pull); }
void protocol_view::commit() { st_.commit(); }
void protocol_view::set_mode(ps_mode mode) { st_.set_mode(mode); }
void protocol_view::publish() { st_.publish(); }
void protocol_view::set_worker_behavior(bool local_step, bool overlap) {
  local_work work;  // WBSP's: a plain SGD step at the PS's rate with each gradient, which is pushed
  if (local_step)
    work.inner.type = inner_kind::sgd;
  work.overlap = overlap ? 1 : 0;
  for (size_t i = 0; i < st_.workers.size(); ++i)
    st_.workers[i].work = work;
}
void protocol_view::set_local_work(worker_id w, const local_work& work) {
  if (st_.valid(w))
    st_.workers[coordinator_state::idx(w)].work = work;
}
local_work protocol_view::local_work_of(worker_id w) const {
  return st_.valid(w) ? st_.workers[coordinator_state::idx(w)].work : local_work{};
}
void protocol_view::release_at(worker_id w, double t, bool pull) { st_.release_at(w, t, pull); }
void protocol_view::set_timer(double t, uint64_t tag) { st_.set_timer(t, tag); }
void protocol_view::set_batch(worker_id w, uint32_t batch) { st_.set_batch(w, batch); }
uint32_t protocol_view::batch(worker_id w) const {
  return st_.valid(w) ? st_.workers[coordinator_state::idx(w)].batch : 0;
}
uint64_t protocol_view::samples() const { return st_.run.samples; }
uint64_t protocol_view::sample_budget() const { return st_.cfg->sample_budget; }
double protocol_view::time_budget() const { return st_.cfg->max_time_s; }
void protocol_view::set_momentum(double mu, bool clear, uint32_t ramp_steps) {
  st_.to_ps(momentum_atom::value, mu, clear, ramp_steps);
}
double protocol_view::base_momentum() const { return st_.cfg->momentum; }
void protocol_view::mark(const std::string& kind, const std::string& note, double value) {
  st_.mark(kind, note, value);
}
void protocol_view::evaluate() { st_.evaluate(); }

}  // namespace syncpoint
