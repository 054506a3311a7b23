#include "runtime/cluster/jobs/sweep_runner.hpp"

#include "runtime/cluster/wire/connect.hpp"

#include <algorithm>
#include <deque>
#include <map>

namespace syncpoint::cluster {

namespace {

struct sweep_node {
  node_actor handle;
  std::string name, token;
  int held = 0;  // slots this sweep holds there, each running a cell or being placed
};

struct placed_cell {
  caf::actor_addr node;
  uint32_t attempt = 0;
  std::string key;       // what the node's reports on this placement carry (no other node knows it)
  bool started = false;  // the node said it started the cell
};

struct sweep_state {
  sweep_setup setup;
  std::deque<uint32_t> waiting;             // cells to place, the next first
  std::map<uint32_t, placed_cell> running;  // placed cells, by index
  std::vector<uint32_t> attempts;           // by cell
  std::map<caf::actor_addr, sweep_node> nodes;
  size_t done = 0, failed = 0;
  bool ended = false;
  static inline const char* name = "sweep";
};

using sweep_ptr = sweep_actor::stateful_pointer<sweep_state>;

void tell_head(sweep_ptr self, job_stage state) {
  auto& st = self->state;
  auto total = std::max<size_t>(1, st.setup.cells.size());
  job_status s{st.setup.id, "", static_cast<int32_t>(st.running.size()),
               static_cast<double>(st.done + st.failed) / static_cast<double>(total), -1, state, {}, {}, job_kind::sweep};
  self->send(st.setup.head, job_atom::value, credential{st.setup.head_token}, st.setup.id, std::move(s));
}

void tell_client(sweep_ptr self, cell_event ev) {
  auto& st = self->state;
  ev.running = static_cast<int32_t>(st.running.size());
  ev.waiting = static_cast<int32_t>(st.waiting.size());
  self->send(st.setup.client, cell_atom::value, std::move(ev));
}

// How long a runner that handed its outcome over waits for its client to end.
constexpr auto receipt_wait = std::chrono::seconds(10);

// Every cell ended (or the sweep was stopped): the outcome to the client, the state to the head.
// The runner then ends when its client does, which it does once it has read the outcome (the
// receipt), or receipt_wait later. A head shutting down waits for its sweeps' runners to end, and
// CAF's middleman gives no receipt of its own: a runner that quit at once could let the head's
// process end with the outcome unsent (as a scancel's SIGTERM to head and submitter at once can).
void end_sweep(sweep_ptr self, job_stage state, const std::string& message) {
  auto& st = self->state;
  if (st.ended)
    return;
  st.ended = true;
  for (auto& [addr, n] : st.nodes)  // a cell placed but not yet confirmed is stopped too
    self->send(n.handle, stop_atom::value, credential{n.token}, st.setup.id);
  tell_head(self, state);  // first: once the client hears the end, `status` says it too
  self->send(st.setup.client, finished_atom::value, job_result{state, message, 0, {}, "", -1});
  self->delayed_send(self, receipt_wait, timeout_atom::value);
}

void maybe_end(sweep_ptr self) {
  auto& st = self->state;
  if (st.ended || !st.waiting.empty() || !st.running.empty())
    return;
  end_sweep(self, job_stage::done,
            st.failed ? std::to_string(st.failed) + " of " + std::to_string(st.setup.cells.size()) + " cells failed"
                      : std::string());
}

// The head offers a slot given back to the other jobs only: with a cell
// still waiting, the sweep asks for the free slots again (`slots` of 0).
void give_back(sweep_ptr self, sweep_node& n, int count) {
  n.held -= count;
  auto& st = self->state;
  self->send(st.setup.head, slots_atom::value, credential{st.setup.head_token}, st.setup.id, n.handle, static_cast<int32_t>(count));
  if (!st.waiting.empty() && !st.ended)
    self->send(st.setup.head, slots_atom::value, credential{st.setup.head_token}, st.setup.id, node_actor{}, int32_t{0});
}

void fail_cell(sweep_ptr self, uint32_t index, const std::string& node, const std::string& why) {
  ++self->state.failed;
  tell_client(self, {"failed", index, self->state.attempts[index], node, why, 0, 0, 0});
}

void place_next(sweep_ptr self, caf::actor_addr where);

// A slot of `where` is free again: the next waiting cell takes it, or it goes back to the head.
void slot_freed(sweep_ptr self, const caf::actor_addr& where) {
  auto& st = self->state;
  auto n = st.nodes.find(where);
  if (n == st.nodes.end())
    return;  // the node is gone, and its slots with it
  if (st.waiting.empty() || st.ended)
    give_back(self, n->second, 1);
  else
    place_next(self, where);
}

void place_next(sweep_ptr self, caf::actor_addr where) {
  auto& st = self->state;
  auto& n = st.nodes.at(where);
  auto index = st.waiting.front();
  st.waiting.pop_front();
  auto attempt = ++st.attempts[index];
  auto key = make_token();
  st.running[index] = {where, attempt, key, false};
  auto& cell = st.setup.cells[index];
  // No time limit: the node answers once its actor gets to it (it may be
  // loading a job's data), and its death is the runner's monitor's to see.
  self
    ->request(n.handle, caf::infinite, cell_atom::value, credential{n.token},
              cell_order{st.setup.id, index, attempt, cell.args, key}, cell_sink_actor{self})
    .then(
      [=](int32_t) {
        auto& st = self->state;
        auto r = st.running.find(index);
        if (r != st.running.end() && r->second.attempt == attempt && !st.ended) {
          r->second.started = true;
          tell_client(self, {"started", index, attempt, st.nodes.at(where).name, "", 0, 0, 0});
        }
      },
      [=](caf::error& err) {
        auto& st = self->state;
        auto r = st.running.find(index);
        if (r == st.running.end() || r->second.attempt != attempt || st.ended)
          return;  // lost with its node meanwhile
        st.running.erase(r);
        auto node = st.nodes.count(where) ? st.nodes.at(where).name : std::string("?");
        auto why = error_words(self->system(), err);
        // A node busier than the head knows (the workers of a job that
        // ended are still leaving it) refuses with not_now: no try, and its
        // slot goes back after a pause rather than at once in a loop. The
        // pause is a delayed send to the runner itself: one to the head
        // would pass CAF's clock thread, a hand-off TSan cannot see.
        bool busy = err.category() == caf::atom("syncpoint") && err.code() == static_cast<uint8_t>(sp_error::not_now);
        auto n = st.nodes.find(where);
        if (busy) {
          --st.attempts[index];
          st.waiting.push_back(index);
          if (n != st.nodes.end())
            self->delayed_send(self, std::chrono::milliseconds(200), slots_atom::value, n->second.handle);
        } else if (st.attempts[index] < static_cast<uint32_t>(st.setup.max_attempts)) {
          st.waiting.push_back(index);  // elsewhere, or here once a slot frees
          tell_client(self, {"lost", index, attempt, node, "not started: " + why, 0, 0, 0});
          if (n != st.nodes.end())
            give_back(self, n->second, 1);
        } else {
          fail_cell(self, index, node, "not started on " + std::to_string(attempt) + " tries, last: " + why);
          slot_freed(self, where);
        }
        maybe_end(self);
      });
}

int32_t grow(sweep_ptr self, node_actor node, const std::string& name, const std::string& token, int32_t free) {
  auto& st = self->state;
  if (st.ended || !node)
    return 0;
  auto taken = static_cast<int32_t>(std::min<size_t>(static_cast<size_t>(std::max(free, 0)), st.waiting.size()));
  if (taken == 0)
    return 0;
  auto where = node.address();
  auto [n, fresh] = st.nodes.try_emplace(where);
  if (fresh) {
    n->second = {node, name, token, 0};
    self->monitor(node);
  }
  n->second.held += taken;
  for (int32_t k = 0; k < taken; ++k)
    place_next(self, where);
  return taken;
}

// A report on a cell comes with the sweep's key, for the cell's current
// attempt, from the CAF node that runs it.
const placed_cell* reporter(sweep_ptr self, const std::string& key, uint32_t index, uint32_t attempt) {
  auto& st = self->state;
  auto r = st.running.find(index);
  auto sender = self->current_sender();
  if (st.ended || r == st.running.end() || !same_secret(key, r->second.key) || r->second.attempt != attempt || !sender ||
      sender->node() != r->second.node.node())
    return nullptr;
  return &r->second;
}

void on_node_down(sweep_ptr self, const caf::actor_addr& where, const caf::error& reason) {
  auto& st = self->state;
  auto n = st.nodes.find(where);
  if (n == st.nodes.end())
    return;
  auto name = n->second.name;
  st.nodes.erase(n);
  bool left = !reason || reason == caf::exit_reason::normal || reason == caf::exit_reason::user_shutdown;
  auto why = left ? std::string("it left") : self->system().render(reason);
  for (auto r = st.running.begin(); r != st.running.end();) {
    if (r->second.node != where) {
      ++r;
      continue;
    }
    auto index = r->first;
    auto attempt = r->second.attempt;
    if (!r->second.started)
      --st.attempts[index];  // the node died before it started the cell: no try
    r = st.running.erase(r);
    if (st.attempts[index] < static_cast<uint32_t>(st.setup.max_attempts)) {
      st.waiting.push_front(index);
      tell_client(self, {"lost", index, attempt, name, why, 0, 0, 0});
    } else {
      fail_cell(self, index, name, "lost with its node " + std::to_string(attempt) + " times, last '" + name + "'");
    }
  }
  if (!st.waiting.empty())  // free slots elsewhere, offered again
    self->send(st.setup.head, slots_atom::value, credential{st.setup.head_token}, st.setup.id, node_actor{}, int32_t{0});
  tell_head(self, job_stage::running);
  maybe_end(self);
}

sweep_actor::behavior_type sweep(sweep_ptr self, sweep_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  st.attempts.assign(st.setup.cells.size(), 0);
  for (uint32_t i = 0; i < st.setup.cells.size(); ++i)
    st.waiting.push_back(i);
  self->monitor(st.setup.client);
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.source == self->state.setup.client.address()) {
      end_sweep(self, job_stage::stopped, "the submitting process went away");  // (no-op once ended)
      self->quit();  // the receipt, or nobody left to hand the outcome to
    } else
      on_node_down(self, dm.source, dm.reason);
  });
  tell_head(self, job_stage::running);
  maybe_end(self);  // no cell at all
  return {
    [=](grow_atom, const credential& token, node_actor& node, const std::string& name,
        const credential& node_token, int32_t free) -> int32_t {
      if (!same_secret(token, self->state.setup.head_token))
        return 0;
      return grow(self, std::move(node), name, node_token.text, free);
    },
    [=](stop_atom, const credential& token, const std::string& reason) {
      if (same_secret(token, self->state.setup.head_token))
        end_sweep(self, job_stage::stopped, reason);
    },
    [=](timeout_atom) {
      if (self->current_sender() == self->ctrl() && self->state.ended)
        self->quit();  // no receipt came in time
    },
    [=](slots_atom, const node_actor& node) {
      auto& st = self->state;
      auto n = st.nodes.find(node.address());
      if (self->current_sender() == self->ctrl() && n != st.nodes.end())
        give_back(self, n->second, 1);
    },
    [=](cell_atom, const std::string& key, cell_chunk& chunk) -> caf::result<bool> {
      if (!reporter(self, key, chunk.index, chunk.attempt))
        return make_error(sp_error::not_a_member, "not a running cell of this sweep");
      // Relayed, and acknowledged once the client wrote it: at most one chunk per cell waits here.
      auto rp = self->make_response_promise<bool>();
      self->request(self->state.setup.client, self->state.setup.relay_timeout, cell_atom::value, std::move(chunk))
        .then([=](bool ok) mutable { rp.deliver(ok); }, [=](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
    [=](cell_atom, const std::string& key, cell_event& ev) {
      auto* placed = reporter(self, key, ev.index, ev.attempt);
      if (!placed || (ev.kind != "done" && ev.kind != "failed"))
        return;
      auto& st = self->state;
      auto where = placed->node;
      st.running.erase(ev.index);
      ++(ev.kind == "done" ? st.done : st.failed);
      if (auto n = st.nodes.find(where); n != st.nodes.end())
        ev.node = n->second.name;
      slot_freed(self, where);  // first, so that the event counts the cell placed in its slot
      tell_client(self, std::move(ev));
      tell_head(self, job_stage::running);
      maybe_end(self);
    },
  };
}

}  // namespace

sweep_actor spawn_sweep(caf::actor_system& sys, sweep_setup setup) {
  return sys.spawn(sweep, std::move(setup));
}

}  // namespace syncpoint::cluster
