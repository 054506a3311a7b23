// The sweep runner on a head, with scripted nodes in one process: which cell
// goes where, on which attempt, when a node is busy, dies, or keeps dying.
// The test plays each node's cell watch (the chunks and the end it sends).
#include "runtime/cluster/control/head.hpp"

#include <doctest/doctest.h>

#include <caf/all.hpp>

#include <deque>

using namespace syncpoint;
using namespace syncpoint::cluster;
using namespace std::chrono_literals;

namespace {

// What a scripted node tells the test: an order it took (with where its reports go) or refused.
struct seen_order {
  std::string node;
  cell_order order;
  cell_sink_actor sink;
  bool refused = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, seen_order& x) {
  return f(caf::meta::type_name("seen_order"), x.node, x.order, x.sink, x.refused);
}

// A node that refuses its first `busy` orders as a node with no free slot does, then takes each.
node_actor::behavior_type scripted_node(node_actor::pointer self, std::string name, int busy, head_actor head,
                                        caf::actor observer) {
  self->request(head, 10s, register_atom::value, node_hello{name, 1, schema_fingerprint(), "t-" + name, "", 0},
                node_actor{self})
    .then([](const std::string&, bool) {}, [](caf::error&) {});
  auto refusals = std::make_shared<int>(busy);
  return {
    [](prepare_atom, const credential&, const job_config&) -> caf::result<int64_t> {
      return caf::sec::unexpected_message;
    },
    [](spawn_atom, const credential&, worker_spec&) -> caf::result<worker_actor> { return caf::sec::unexpected_message; },
    [](spawn_atom, const credential&, shard_spec&) -> caf::result<ps_actor> { return caf::sec::unexpected_message; },
    [=](cell_atom, const credential&, const cell_order& order, const cell_sink_actor& sink) -> caf::result<int32_t> {
      bool refuse = *refusals > 0;
      caf::anon_send(observer, seen_order{name, order, sink, refuse});
      if (refuse) {
        --*refusals;
        return make_error(sp_error::not_now, "node " + name + " has no free slot (1 in use)");
      }
      return int32_t{4242};
    },
    [](stop_atom, const credential&, uint64_t) {},
    [=](leave_atom, const credential&, const std::string&, int32_t) { self->quit(); },
    [](heartbeat_atom) {},
  };
}

// The submitter's side: events and the outcome to the test, every chunk accepted. Like `syncpoint
// sweep --head`'s client it ends once it has the outcome, unless told to stay.
sweep_client_actor::behavior_type forwarding_client(sweep_client_actor::pointer self, caf::actor observer,
                                                    bool stays) {
  return {
    [=](progress_atom, const std::string& line) { caf::anon_send(observer, line); },
    [=](finished_atom, const job_result& r) {
      caf::anon_send(observer, r);
      if (!stays)
        self->quit();
    },
    [=](cell_atom, const cell_event& ev) { caf::anon_send(observer, ev); },
    [=](cell_atom, const cell_chunk&) { return true; },
  };
}

struct sweep_script {
  static constexpr const char* control = "control";  // the head's: its shutdown takes it
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  head_actor head;
  std::map<std::string, node_actor> nodes;
  std::vector<seen_order> orders;   // in the order the nodes saw them
  std::vector<cell_event> events;   // as the client got them
  std::optional<job_result> result;
  std::vector<std::string> lines;   // progress lines the client got

  sweep_script() {
    register_cluster_messages(cfg);
    cfg.add_message_type<seen_order>("seen_order");
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
    head_config hc;
    hc.control_token = control;
    head = spawn_head(*sys, hc);
  }
  ~sweep_script() {
    for (auto& [name, n] : nodes)
      caf::anon_send_exit(n, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(head, caf::exit_reason::user_shutdown);
  }

  void node(const std::string& name, int busy) {
    nodes[name] = sys->spawn(scripted_node, name, busy, head, caf::actor{*self});
    // Joined once the head lists it.
    for (int tries = 0; tries < 1000; ++tries) {
      cluster_status s;
      (*self)->request(head, 10s, status_atom::value, credential{}).receive(
        [&](cluster_status& st) { s = std::move(st); }, [](caf::error& e) { FAIL(to_string(e)); });
      for (auto& n : s.nodes)
        if (n.name == name)
          return;
      (*self)->receive(caf::after(10ms) >> [] {});  // the registration is under way: look again
    }
    FAIL("node " << name << " did not join");
  }

  // Submits a sweep of `cells` cells; its client (returned) stays once it has the outcome if told to.
  sweep_client_actor submit(size_t cells, bool client_stays = false) {
    std::vector<sweep_cell_order> orders;
    for (uint32_t i = 0; i < cells; ++i)
      orders.push_back({i, "cell " + std::to_string(i), {"--epochs=1"}});
    auto client = sys->spawn(forwarding_client, caf::actor{*self}, client_stays);
    (*self)->request(head, 10s, sweep_atom::value, orders, client, credential{})
      .receive([](uint64_t, const credential&) {}, [](caf::error& e) { FAIL(to_string(e)); });
    return client;
  }

  // Takes messages until `done` holds (a deadline for hangs only).
  void until(const std::function<bool()>& done) {
    while (!done()) {
      bool got = false;
      (*self)->receive([&](seen_order& o) { orders.push_back(std::move(o)); got = true; },
                       [&](cell_event& ev) { events.push_back(std::move(ev)); got = true; },
                       [&](job_result& r) { result = std::move(r); got = true; },
                       [&](std::string& line) { lines.push_back(std::move(line)); got = true; },
                       caf::after(60s) >> [] {});
      REQUIRE_MESSAGE(got, "nothing came within 60 s");
    }
  }

  size_t taken() const {
    return static_cast<size_t>(std::count_if(orders.begin(), orders.end(), [](auto& o) { return !o.refused; }));
  }

  // Plays the node's watch for a taken order: one chunk, acknowledged, then the end.
  void finish(const seen_order& o, const std::string& kind = "done") {
    bool ack = false;
    (*self)->request(o.sink, 10s, cell_atom::value, o.order.key,
                     cell_chunk{o.order.index, o.order.attempt, "summary.json", 0, "{}"})
      .receive([&](bool ok) { ack = ok; }, [](caf::error& e) { FAIL(to_string(e)); });
    CHECK(ack);
    (*self)->send(o.sink, cell_atom::value, o.order.key,
                  cell_event{kind, o.order.index, o.order.attempt, "", kind == "done" ? "" : "it broke", 0.5, 0, 0});
  }
};

}  // namespace

TEST_CASE("sweep runner: a busy node's refusal is no try, a node lost mid-cell has its cell placed again, "
          "and every cell ends") {
  sweep_script s;
  s.node("a", 1);  // refuses its first order: two offers of one slot crossed
  s.node("b", 0);
  s.submit(3);
  // The head offers a's slot, then b's: cell 0 to a (refused, back in the queue), cell 1 to b, and
  // a's slot, given back, offered again: cell 2 to a.
  s.until([&] { return s.taken() == 2; });
  REQUIRE(s.orders.size() == 3);
  std::vector<std::string> seen;  // a and b answer at once: their orders reach the test in either order
  for (auto& o : s.orders)
    seen.push_back(o.node + " " + std::to_string(o.order.index) + "@" + std::to_string(o.order.attempt) +
                   (o.refused ? " refused" : ""));
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"a 0@1 refused", "a 2@1", "b 1@1"});
  auto on = [&](const std::string& node, uint32_t index) {
    return *std::find_if(s.orders.begin(), s.orders.end(),
                         [&](auto& o) { return o.node == node && o.order.index == index && !o.refused; });
  };
  auto cell2 = on("a", 2);
  // b dies with cell 1, once it said it started it: the cell goes back to the front of the queue.
  s.until([&] {
    return std::any_of(s.events.begin(), s.events.end(), [](auto& e) { return e.kind == "started" && e.index == 1; });
  });
  caf::anon_send_exit(s.nodes["b"], caf::exit_reason::kill);
  s.until([&] {
    return std::any_of(s.events.begin(), s.events.end(), [](auto& e) { return e.kind == "lost" && e.index == 1; });
  });
  // a ends cell 2: its slot takes cell 1 (second try), then cell 0 (still its first).
  s.finish(cell2);
  s.until([&] { return s.taken() == 3; });
  CHECK((s.orders[3].node == "a" && s.orders[3].order.index == 1 && s.orders[3].order.attempt == 2));
  s.finish(s.orders[3]);
  s.until([&] { return s.taken() == 4; });
  CHECK((s.orders[4].node == "a" && s.orders[4].order.index == 0 && s.orders[4].order.attempt == 1));
  s.finish(s.orders[4], "failed");
  s.until([&] { return s.result.has_value(); });
  CHECK(s.result->state == job_stage::done);
  CHECK(s.result->message == "1 of 3 cells failed");
  std::vector<std::string> ends;
  for (auto& e : s.events)
    if (e.kind == "done" || e.kind == "failed")
      ends.push_back(std::to_string(e.index) + " " + e.kind + " on " + e.node);
  CHECK(ends == std::vector<std::string>{"2 done on a", "1 done on a", "0 failed on a"});
  // The sweep gave every slot back: the head lists it as done, and a's slot as free.
  cluster_status st;
  (*s.self)->request(s.head, 10s, status_atom::value, credential{})
    .receive([&](cluster_status& x) { st = std::move(x); }, [](caf::error& e) { FAIL(to_string(e)); });
  REQUIRE(st.jobs.size() == 1);
  CHECK(st.jobs[0].kind == job_kind::sweep);
  CHECK(shown_protocol(st.jobs[0]) == "sweep");
  CHECK(st.jobs[0].state == job_stage::done);
  REQUIRE(st.nodes.size() == 1);
  CHECK(st.nodes[0].used == 0);
}

TEST_CASE("sweep runner: a cell whose node dies three times fails, and reports from a stale attempt are dropped") {
  sweep_script s;
  s.submit(1);  // before any node: the submitter is told why nothing runs
  s.until([&] { return !s.lines.empty(); });
  CHECK(s.lines.front() == "no node has joined the cluster yet: the cells start as slots free up (a node joins, a job ends)");
  for (uint32_t attempt = 1; attempt <= 3; ++attempt) {
    auto name = "n" + std::to_string(attempt);
    s.node(name, 0);  // joining offers its slot: it takes the cell
    s.until([&] {  // it took the cell, and said so: a try
      return std::count_if(s.events.begin(), s.events.end(), [](auto& e) { return e.kind == "started"; }) == attempt;
    });
    CHECK(s.orders.back().order.attempt == attempt);
    if (attempt == 2) {  // the first attempt's node is gone: its reports must not count
      auto& stale = s.orders[0];
      bool refused = false;
      (*s.self)->request(stale.sink, 10s, cell_atom::value, stale.order.key,
                         cell_chunk{0, 1, "summary.json", 0, "{}"})
        .receive([](bool) {}, [&](caf::error&) { refused = true; });
      CHECK(refused);
      (*s.self)->send(stale.sink, cell_atom::value, stale.order.key, cell_event{"done", 0, 1, "", "", 0.5, 0, 0});
    }
    caf::anon_send_exit(s.nodes[name], caf::exit_reason::kill);
  }
  s.until([&] { return s.result.has_value(); });
  CHECK(s.result->message == "1 of 1 cells failed");
  auto failed = std::find_if(s.events.begin(), s.events.end(), [](auto& e) { return e.kind == "failed"; });
  REQUIRE(failed != s.events.end());
  CHECK(failed->message.find("lost with its node 3 times") != std::string::npos);
  CHECK(std::count_if(s.events.begin(), s.events.end(), [](auto& e) { return e.kind == "lost"; }) == 2);
  CHECK(std::none_of(s.events.begin(), s.events.end(), [](auto& e) { return e.kind == "done"; }));
}

TEST_CASE("sweep runner: having handed its outcome over, it lives until the submitter's client ends (the "
          "receipt), and a head shutting down waits for that") {
  sweep_script s;
  s.node("a", 0);
  auto client = s.submit(1, true);
  s.until([&] { return s.taken() == 1; });
  s.finish(s.orders[0]);
  s.until([&] { return s.result.has_value(); });
  CHECK(s.result->state == job_stage::done);
  // The head is told to shut down, then asked its status: once the status comes, the head has taken
  // the shutdown, and would have answered it before the status (in order, to the same actor) had it
  // not waited for the sweep's runner.
  auto& self = *s.self;
  self->send(s.head, shutdown_atom::value, credential{sweep_script::control}, int32_t{0});
  self->request(s.head, 10s, status_atom::value, credential{})
    .receive([](cluster_status&) {}, [](caf::error& e) { FAIL(to_string(e)); });
  bool shut = false;
  self->receive([&](bool done) { shut = done; }, caf::after(0s) >> [] {});
  CHECK_MESSAGE(!shut, "the head shut down while its sweep's client had yet to read the outcome");
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);  // the client ends, having read it
  self->receive([&](bool done) { shut = done; }, caf::after(60s) >> [] {});
  CHECK_MESSAGE(shut, "the head did not shut down once the sweep's client ended");
}
