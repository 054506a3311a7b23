#include "actors/parameter_server.hpp"

#include "actors/ps_admission.hpp"
#include "actors/ps_rows.hpp"
#include "actors/ps_state.hpp"
#include "actors/ps_update.hpp"
#include "core/float_buffers.hpp"
#include "core/index_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace syncpoint {

namespace {

void accept_push(ps_ptr self, gradient_push& g, caf::typed_response_promise<proceed>& rp, bool via_bulk);

void arrive(ps_ptr self, transit& t) {
  if (t.is_push)
    accept_push(self, t.push, t.push_reply, t.via_bulk);
  else
    t.pull_reply.deliver(std::move(t.out));
}

// `t` arrives once its bytes have crossed the PS link (at once without a link model).
void transfer(ps_ptr self, transit t) {
  auto& st = self->state;
  if (!st.link.active()) {
    arrive(self, t);
    return;
  }
  auto values = static_cast<double>(t.is_push ? t.push.grad.size() : t.charged > 0 ? t.charged : t.out.values.size());
  // A shard carries its slice: its share of a push's or pull's charged bytes.
  double bytes = st.cfg.wire_bytes <= 0 ? values * sizeof(float)
                 : st.cfg.shards > 1   ? st.cfg.wire_bytes * values / static_cast<double>(st.cfg.model_size)
                                       : st.cfg.wire_bytes;
  if (t.is_push && t.push.wire_bytes > 0)  // compressed (--compress), or a fragment: its encoding's bytes, rows included
    bytes = static_cast<double>(t.push.wire_bytes);
  else
    bytes += static_cast<double>(row_bytes(t.is_push ? t.push.rows : t.out.rows));  // keys and rows, as sent
  double now = to_seconds(since(self, st.cfg.origin));
  auto slot = st.link.reserve(now, bytes);
  double delay = slot.arrive - now;
  // The link's busy time, for its utilisation (value: bytes).
  auto ns = [](double t) { return static_cast<nanos>(std::llround(t * 1e9)); };
  trace(self, {"link", -1, ns(slot.start), ns(slot.end), st.cfg.shard, st.version, bytes});  // iter: the link's shard
  auto id = st.next_transfer++;
  st.in_transit.emplace(id, std::move(t));
  self->delayed_send(self, seconds(delay), link_atom::value, id);
}

// Transfer `id` has crossed the link.
void crossed(ps_ptr self, uint64_t id) {
  auto& st = self->state;
  auto i = st.in_transit.find(id);
  if (i == st.in_transit.end())
    return;
  auto t = std::move(i->second);
  st.in_transit.erase(i);
  arrive(self, t);
}

}  // namespace

void trace(ps_ptr self, trace_event ev) {
  if (self->state.cfg.tracer && self->state.serving)
    self->send(self->state.cfg.tracer, trace_atom::value, std::move(ev));
}

weights pullable_weights(const ps_state& st) {
  return st.mode == ps_mode::gated ? weights{st.visible_version, st.visible} : weights{st.version, published(st)};
}

void send_weights(ps_ptr self, pending_pull p, weights out) {
  if (!p.asked.empty())  // the rows of the version the weights are
    out.rows = read_rows(self->state, p.asked, out.version);
  transit t;
  t.worker = p.worker;
  t.out = std::move(out);
  t.pull_reply = std::move(p.reply);
  t.charged = p.charged;
  transfer(self, std::move(t));
}

void remember_samples(ps_state& st) {
  if (st.cfg.rule != momentum_rule::adjusted || st.cfg.optimizer.adaptive())
    return;
  st.samples_at_version.emplace_back(st.version, st.samples_applied);
  while (st.samples_at_version.size() > 4 * st.worker_weight.size() + 64)
    st.samples_at_version.pop_front();
}

void answer_pulls(ps_ptr self) {
  auto& st = self->state;
  if (sequenced(st)) {
    answer_sequenced_pulls(self);
    return;
  }
  auto last = st.waiting_pulls.upper_bound(pullable_version(st));
  for (auto i = st.waiting_pulls.begin(); i != last; ++i)
    send_weights(self, std::move(i->second), pullable_weights(st));
  st.waiting_pulls.erase(st.waiting_pulls.begin(), last);
}

void take_in(ps_ptr self, gradient_push& g) {
  auto& st = self->state;
  if (st.mode == ps_mode::buffered) {
    add_to_round(st, g);
    return;
  }
  auto tau = static_cast<double>(st.version - std::min(st.version, g.base_version));
  st.only = g.ranges;  // a fragment's push steps its ranges alone
  apply_now(st, g, tau);
  st.only.clear();
  apply_rows(st, g, push_weight(st, g, tau));
  trace_rate(self);
  g.grad.give_back();  // applied: its buffer can take the next frame or gradient
  auto now = since(self, st.cfg.origin);
  if (is_lead(st))
    trace(self, {"apply", g.worker, now, now, g.iter, st.version + 1, tau});
  ++st.version;
  remember_samples(st);
  answer_pulls(self);
}

std::string who(const ps_state& st) {
  return st.cfg.shards > 1 ? "shard " + std::to_string(st.cfg.shard) + " of the parameter server"
                           : std::string("the parameter server");
}

namespace {

// A sparse pull's keys: of tables the model has, and a shard within --ps-memory.
caf::error check_asked(const ps_state& st, const std::vector<row_block>& asked) {
  if (auto err = over_memory(st))
    return err;
  for (auto& a : asked)
    if (a.table >= st.tables.size())
      return make_error(sp_error::bad_input, "a pull from " + who(st) + " asks for rows of table " +
                                               std::to_string(a.table) + ", the model has " +
                                               std::to_string(st.tables.size()));
  return caf::none;
}

caf::error validate(const ps_state& st, const gradient_push& g) {
  if (g.worker < 0 || static_cast<size_t>(g.worker) >= st.worker_weight.size())
    return make_error(sp_error::unknown_worker,
                      "worker " + std::to_string(g.worker) + " is not one of 0.." +
                        std::to_string(st.worker_weight.size() - 1));
  if (g.grad.size() != st.w->size())
    return make_error(sp_error::wrong_size,
                      st.cfg.shards > 1
                        ? "gradient slice from worker " + std::to_string(g.worker) + " to " + who(st) + " has " +
                            std::to_string(g.grad.size()) + " values, the shard holds " + std::to_string(st.w->size()) +
                            " (values " + std::to_string(st.cfg.offset) + ".." +
                            std::to_string(st.cfg.offset + st.w->size() - 1) + " of the model)"
                        : "gradient from worker " + std::to_string(g.worker) + " has " +
                            std::to_string(g.grad.size()) + " values, the model has " + std::to_string(st.w->size()));
  std::string why;
  if (!valid_ranges(g.ranges, g.grad.size(), &why))
    return make_error(sp_error::bad_input, "the fragment of a push from worker " + std::to_string(g.worker) + " to " +
                                             who(st) + ": " + why);
  if (!all_finite(g.grad.data(), g.grad.size()))
    return make_error(sp_error::non_finite, std::string(st.cfg.shards > 1 ? "gradient slice" : "gradient") +
                                              " from worker " + std::to_string(g.worker) + " (iteration " +
                                              std::to_string(g.iter) + ") contains NaN or Inf" +
                                              (st.cfg.shards > 1 ? " (" + who(st) + ")" : std::string()));
  return check_rows(st, g);
}

// A push whose bytes have arrived: checked, then taken in (one PS) or staged
// (a shard of several, until every shard has its slice), and reported to the
// coordinator, whose `proceed` answers the worker, refused or not. A PS on its
// own refuses with an error reply.
void accept_push(ps_ptr self, gradient_push& g, caf::typed_response_promise<proceed>& rp, bool via_bulk) {
  auto& st = self->state;
  auto err = validate(st, g);
  if (err && !st.coordinator) {
    auto now = since(self, st.cfg.origin);
    trace(self, {"rejected", g.worker, now, now, g.iter, st.version, 0});
    rp.deliver(std::move(err));
    return;
  }
  push_info info{g.worker, g.iter, g.samples, 0, 0, err ? self->system().render(err) : std::string()};
  if (err) {
    // Refused: nothing of it is taken in; the coordinator counts and answers it.
  } else if (sequenced(st)) {
    st.staged[{g.worker, g.iter}] = std::move(g);
  } else {
    take_in(self, g);
  }
  info.version = st.version;
  info.accepted = since(self, st.cfg.origin);
  if (!st.coordinator) {  // no coordinator: behave as ASP
    rp.deliver(proceed{false, true, st.version, 0, info.accepted});
  } else if (is_lead(st) && !via_bulk && st.cfg.copy > 0) {  // a replica of the lead: the same, as copy r
    rp.delegate(st.coordinator, pushed_atom::value, info, replica_atom::value, st.cfg.copy);
  } else if (is_lead(st) && !via_bulk) {
    rp.delegate(st.coordinator, pushed_atom::value, info);  // the coordinator sees the worker ask
  } else if (is_lead(st)) {
    // The requester is the bulk gateway, not the worker: the lead, which
    // checked the worker's key, asks in its name and relays the answer.
    auto relay = [rp](const proceed& p) mutable { rp.deliver(p); };
    auto fail = [rp](caf::error& err) mutable { rp.deliver(std::move(err)); };
    if (st.cfg.copy > 0)
      self->request(st.coordinator, caf::infinite, pushed_atom::value, info, replica_atom::value, st.cfg.copy)
        .then(relay, fail);
    else
      self->request(st.coordinator, caf::infinite, pushed_atom::value, info).then(relay, fail);
  } else {  // the lead's reply carries the coordinator's word; this shard only says what it did with its slice
    if (st.cfg.copy > 0)
      self->send(st.coordinator, pushed_atom::value, info, st.cfg.shard, st.cfg.copy);
    else
      self->send(st.coordinator, pushed_atom::value, info, st.cfg.shard);
    rp.deliver(proceed{});
  }
}

caf::result<proceed> take_push(ps_ptr self, gradient_push&& g, bool via_bulk = false) {
  transit t;
  t.worker = g.worker;
  t.is_push = true;
  t.via_bulk = via_bulk;
  t.push = std::move(g);
  t.push_reply = self->make_response_promise<proceed>();
  auto rp = t.push_reply;
  transfer(self, std::move(t));
  return rp;
}

// A pull of `worker` (-1: not a member's): a shard of several serves the
// version the worker was released to; otherwise any version >= min_version.
caf::result<weights> take_pull(ps_ptr self, worker_id worker, uint64_t min_version, uint64_t charged = 0,
                               std::vector<row_block> asked = {}) {
  auto& st = self->state;
  if (sequenced(st) && worker >= 0)
    return take_sequenced_pull(self, worker, min_version, charged, std::move(asked));
  pending_pull p{worker, self->make_response_promise<weights>(), charged, std::move(asked)};
  auto rp = p.reply;
  if (pullable_version(st) >= min_version)
    send_weights(self, std::move(p), pullable_weights(st));
  else
    st.waiting_pulls.emplace(min_version, std::move(p));
  return rp;
}

ps_actor::behavior_type parameter_server(ps_ptr self, ps_config cfg) {
  start_state(self->state, std::move(cfg));
  return {
    [=](push_atom, gradient_push& g) -> caf::result<proceed> {
      if (auto err = check_member(self, g.worker))
        return err;
      return take_push(self, std::move(g));
    },
    [=](pull_atom, uint64_t min_version) -> caf::result<weights> {
      if (auto err = check_member(self, -1))
        return err;
      return take_pull(self, member_index(self), min_version);
    },
    [=](pull_atom, uint64_t min_version, std::vector<row_block>& asked) -> caf::result<weights> {
      if (auto err = check_member(self, -1))
        return err;
      if (auto err = check_asked(self->state, asked))
        return err;
      return take_pull(self, member_index(self), min_version, 0, std::move(asked));
    },
    [=](pull_atom, uint64_t min_version, const std::vector<uint64_t>& ranges) -> caf::result<weights> {
      // A fragment's pull: the whole slice comes back, the link charges the fragment.
      if (auto err = check_member(self, -1))
        return err;
      std::string why;
      if (!valid_ranges(ranges, self->state.w->size(), &why))
        return make_error(sp_error::bad_input, "a fragment's pull from " + who(self->state) + ": " + why);
      return take_pull(self, member_index(self), min_version, std::max<uint64_t>(1, ranges_size(ranges)));
    },
    [=](push_atom, bulk_atom, uint64_t key, gradient_push& g) -> caf::result<proceed> {
      if (auto err = check_bulk_key(self, key, g.worker))
        return err;
      return take_push(self, std::move(g), true);
    },
    [=](pull_atom, bulk_atom, uint64_t key, int32_t worker, uint64_t min_version) -> caf::result<weights> {
      if (auto err = check_bulk_key(self, key, worker))
        return err;
      return take_pull(self, worker, min_version);
    },
    [=](pull_atom, bulk_atom, uint64_t key, int32_t worker, uint64_t min_version,
        std::vector<row_block>& asked) -> caf::result<weights> {
      if (auto err = check_bulk_key(self, key, worker))
        return err;
      if (auto err = check_asked(self->state, asked))
        return err;
      return take_pull(self, worker, min_version, 0, std::move(asked));
    },
    [=](push_atom, resume_atom, uint64_t iter) -> caf::result<proceed> {
      return resume_push(self, member_index(self), iter);
    },
    [=](pull_atom, resume_atom, uint64_t) -> caf::result<weights> {
      return resume_pull(self, member_index(self));
    },
    [=](save_atom, uint32_t table, uint64_t from) -> saved_rows { return save_rows_chunk(self->state, table, from); },
    [=](resume_atom, const saved_rows& chunk) { return take_resumed_rows(self->state, chunk); },
    [=](save_atom) -> caf::result<saved_ps> {
      if (auto err = may_read_state(self))
        return err;
      return save(self->state);
    },
    [=](replica_atom) {
      if (from_coordinator(self, "promote"))
        self->state.serving = true;
    },
    [=](link_atom, uint64_t id) {
      if (self->current_sender() == self->ctrl())  // only the PS's own timers move transfers along
        crossed(self, id);
    },
    [=](attach_atom, coordinator_actor coordinator, std::vector<worker_actor> workers) {
      if (from_coordinator(self, "attach"))
        attach(self->state, std::move(coordinator), workers);
    },
    [=](mode_atom, uint8_t mode) {
      if (from_coordinator(self, "mode") && mode <= static_cast<uint8_t>(ps_mode::delayed))  // else: not a mode
        change_mode(self, static_cast<ps_mode>(mode));
    },
    [=](publish_atom) {
      if (from_coordinator(self, "publish"))
        publish(self);
    },
    [=](sync_atom) { return true; },
    [=](commit_atom) {
      if (!from_coordinator(self, "commit"))
        return;
      if (self->state.mode == ps_mode::delayed)
        close_round(self->state);  // the momentum step of the pushes since the last commit
      commit(self, true);
    },
    [=](sequence_atom, std::vector<shard_op>& ops) {
      if (from_coordinator(self, "sequence"))
        run_sequence(self, ops);
    },
    [=](flush_atom) {
      if (from_coordinator(self, "flush"))
        commit(self, false);
    },
    [=](stop_atom) {
      if (from_coordinator(self, "stop"))
        release_waiting_pulls(self);
    },
    [=](momentum_atom, double mu, bool clear, uint32_t ramp_steps) {
      if (from_coordinator(self, "momentum") && mu >= 0 && mu < 1)
        set_momentum(self->state, mu, clear, ramp_steps);
    },
    [=](weights_atom, std::vector<float>& per_worker) {
      if (from_coordinator(self, "weights") && per_worker.size() == self->state.worker_weight.size())
        self->state.worker_weight = std::move(per_worker);
    },
    [=](snapshot_atom, evaluator_actor evaluator, uint64_t samples, bool final, uint64_t id) {
      if (from_coordinator(self, "snapshot"))
        send_snapshot(self, evaluator, samples, final, id);
    },
    [=](final_atom) -> caf::result<weights> {
      if (!from_coordinator(self, "final"))
        return make_error(sp_error::not_a_member, "only the job's coordinator reads the final model");
      return weights{self->state.version, published(self->state)};
    },
    [=](counts_atom) { return self->state.version; },  // a dashboard's: reading it changes nothing
    [=](counts_atom, tables_atom) { return table_figures(self->state); },
  };
}

}  // namespace

ps_actor spawn_parameter_server(caf::actor_system& sys, ps_config cfg) {
  return sys.spawn(parameter_server, std::move(cfg));
}

}  // namespace syncpoint
