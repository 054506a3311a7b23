// A peer that is not a proper syncpoint node, for the cluster tests:
//   impostor interface HOST:PORT   looks the head up as an actor with another
//                                  interface (an older head) through CAF's remote_actor<T>
//   impostor schema HOST:PORT      registers as a node with another schema fingerprint
//   impostor garbage HOST:PORT     sends bytes that are no CAF message at all
//   impostor stranger HOST:PORT    asks the head to shut down, without its secret
//   impostor stopper HOST:PORT     asks the head to stop job 1, with a guessed stop token
//   impostor node HOST:PORT        joins as node "evil" with 1 slot; its "worker" pulls
//                                  the model, then sends the PS a push of the wrong size,
//                                  one with NaN, one in another worker's name and a
//                                  commit, prints the answers and leaves the job
// Prints what the head or CAF answered; exit 2 when refused, 0 when accepted.
#include "runtime/cluster/wire/connect.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/worker_loop.hpp>

#include <caf/io/middleman.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <string>

using namespace syncpoint;
using namespace syncpoint::cluster;

namespace {

// The head as an older build declared it.
using old_head_actor = caf::typed_actor<
  caf::replies_to<register_atom, std::string, int32_t>::with<std::string>>;

// A worker that attacks the PS it was given instead of training.
worker_actor::behavior_type hostile_worker(worker_actor::pointer self, worker_spec spec) {
  auto ps = spec.ps.lead();  // a sharded PS: its lead shard refuses as every shard does
  auto tracer = spec.tracer;
  auto me = spec.id;
  auto n = spec.plan.cfg.workers;
  auto report = [=](const char* what, const caf::error& e) {
    std::printf("%s: %s\n", what, e ? self->system().render(e).c_str() : "accepted");
    std::fflush(stdout);
  };
  // The coordinator answers a push the PS refused with why.
  auto answer = [=](const char* what, const proceed& p) {
    std::printf("%s: %s\n", what, p.refused.empty() ? "accepted" : ("refused: " + p.refused).c_str());
    std::fflush(stdout);
  };
  return {
    [=](const proceed&) {
      self->request(ps, std::chrono::seconds(10), pull_atom::value, uint64_t{0})
        .then([=](weights& w) {
          auto size = w.values.size();
          std::printf("pulled %zu values\n", size);
          // Not ours to send: each is refused and logged, and changes nothing.
          // Nor are the PS's whole state and the job's trace ours to read.
          auto misbehave = [=] {
            self->send(ps, commit_atom::value);
            self->send(ps, publish_atom::value);
            self->send(ps, momentum_atom::value, 0.0, true, uint32_t{0});
            self->send(ps, weights_atom::value, std::vector<float>(static_cast<size_t>(n), 1.0f));
            self->send(ps, stop_atom::value);
            self->send(ps, flush_atom::value);
            self->send(ps, snapshot_atom::value, caf::actor_cast<evaluator_actor>(self), uint64_t{0}, false, uint64_t{1});
            auto read_ps = [=] {
              self->request(ps, std::chrono::seconds(10), save_atom::value)
                .then([=](const saved_ps&) { report("read the PS's state", caf::none); self->quit(); },
                      [=](caf::error& e) {
                        report("read the PS's state", e);
                        self->quit();  // leave the job: the others go on
                      });
            };
            self->request(tracer, std::chrono::seconds(10), collect_atom::value)
              .then([=](const std::vector<trace_event>&) { report("took the trace", caf::none); read_ps(); },
                    [=](caf::error& e) { report("took the trace", e); read_ps(); });
          };
          // The three pushes' answers come by different ways (the coordinator's
          // word, the PS's own refusal): the rest waits for all three, so that
          // its last line printed says every line above it is in.
          auto answers_left = std::make_shared<int>(3);
          auto after_answers = [=] {
            if (--*answers_left == 0)
              misbehave();
          };
          self->request(ps, std::chrono::seconds(10), push_atom::value,
                        gradient_push{me, 1, 0, 64, std::vector<float>(3, 1.0f)})
            .then([=](const proceed& p) { answer("wrong size", p); after_answers(); },
                  [=](caf::error& e) { report("wrong size", e); after_answers(); });
          std::vector<float> nan(size, 0.0f);
          nan[size / 2] = std::nanf("");
          self->request(ps, std::chrono::seconds(10), push_atom::value,
                        gradient_push{me, 1, 0, 64, std::move(nan)})
            .then([=](const proceed& p) { answer("nan", p); after_answers(); },
                  [=](caf::error& e) { report("nan", e); after_answers(); });
          self->request(ps, std::chrono::seconds(10), push_atom::value,
                        gradient_push{(me + 1) % n, 1, 0, 64, std::vector<float>(size, 100.0f)})
            .then([=](const proceed&) { report("as another worker", caf::none); after_answers(); },
                  [=](caf::error& e) { report("as another worker", e); after_answers(); });
        }, [=](caf::error& e) { report("pull", e); self->quit(); });
    },
    [](computed_atom) {},
    [](timeout_atom) {},
    [](trace_atom) {},
    [](save_atom) { return saved_worker{}; },
    [](resume_atom) {},
    [](replica_atom, uint32_t, uint32_t, caf::actor) {},
    [](copy_atom, uint32_t, uint32_t, caf::actor, const std::string&) { return true; },
  };
}

int hostile_node(caf::actor_system& sys, head_actor head) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  auto node = sys.spawn([=](node_actor::pointer self) -> node_actor::behavior_type {
    self->request(head, std::chrono::seconds(5), register_atom::value,
                  node_hello{"evil", 1, schema_fingerprint(), "evil-token", "", 0, {}, loop_names(), model_names()},
                  node_actor{self})
      .then([](const std::string&, bool) { std::printf("joined\n"); std::fflush(stdout); },
            [=](caf::error& e) { std::printf("refused: %s\n", self->system().render(e).c_str()); self->quit(); });
    return {
      [=](prepare_atom, const credential&, const job_config&) -> int64_t { return 4000; },
      [=](spawn_atom, const credential&, worker_spec& spec) -> caf::result<worker_actor> {
        return self->spawn(hostile_worker, std::move(spec));
      },
      [](spawn_atom, const credential&, shard_spec&) -> caf::result<ps_actor> {
        return caf::make_error(caf::sec::unexpected_message);  // hosts workers only
      },
      [](cell_atom, const credential&, const cell_order&, const cell_sink_actor&) -> caf::result<int32_t> {
        return caf::make_error(caf::sec::unexpected_message);  // runs no sweep cells
      },
      [](stop_atom, const credential&, uint64_t) {},
      [=](leave_atom, const credential&, const std::string&, int32_t) { self->quit(); },
      [](heartbeat_atom) {},
    };
  });
  caf::scoped_actor self{sys};
  self->monitor(node);
  self->receive([](caf::down_msg&) {}, caf::after(std::chrono::seconds(120)) >> [] {});
  return 0;
}

int garbage(const endpoint& at) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(at.port);
  inet_pton(AF_INET, at.host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::printf("cannot connect\n");
    return 1;
  }
  std::string junk(4096, '\0');
  for (size_t i = 0; i < junk.size(); ++i)
    junk[i] = static_cast<char>((i * 7919 + 13) & 0xff);
  auto sent = write(fd, junk.data(), junk.size());
  usleep(300000);
  close(fd);
  std::printf("sent %zd bytes of garbage\n", sent);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: impostor interface|schema|badname|noslots|badgpus|garbage|stranger|stopper|node HOST:PORT\n");
    return 64;
  }
  std::string mode = argv[1];
  auto at = parse_endpoint(argv[2]);
  if (!at)
    return 64;
  if (mode == "garbage")
    return garbage(*at);
  caf::actor_system_config cfg;
  configure_cluster(cfg);
  caf::actor_system sys{cfg};
  if (mode == "interface") {
    auto h = sys.middleman().remote_actor<old_head_actor>(at->host, at->port);
    if (!h) {
      std::printf("refused: %s\n", sys.render(h.error()).c_str());
      return 2;
    }
    std::printf("accepted\n");
    return 0;
  }
  auto head = connect_head(sys, *at, std::chrono::seconds(5));
  if (!head) {
    std::printf("cannot connect: %s\n", sys.render(head.error()).c_str());
    return 1;
  }
  if (mode == "node")
    return hostile_node(sys, *head);
  caf::scoped_actor self{sys};
  int rc = 0;
  // Registrations a syncpoint node would not send: another schema, a name with
  // a terminal escape in it, no slots, a GPU offered twice.
  auto hello = mode == "schema"    ? node_hello{"impostor", 1, "0123456789abcdef", "", ""}
               : mode == "badname" ? node_hello{"imp\x1b[31mred", 1, schema_fingerprint(), "", ""}
               : mode == "badgpus" ? node_hello{"impostor", 1, schema_fingerprint(), "", "", 0, {0, 0}}
                                   : node_hello{"impostor", 0, schema_fingerprint(), "", ""};
  if (mode == "schema" || mode == "badname" || mode == "noslots" || mode == "badgpus") {
    self->request(*head, std::chrono::seconds(5), register_atom::value, hello,
                  caf::actor_cast<node_actor>(self.ptr()))
      .receive([&](const std::string&, bool) { std::printf("accepted\n"); },
               [&](caf::error& e) {
                 std::printf("refused: %s\n", sys.render(e).c_str());
                 rc = 2;
               });
    return rc;
  }
  if (mode == "stranger") {
    self->request(*head, std::chrono::seconds(5), shutdown_atom::value, credential{"a guess"}, int32_t{0})
      .receive([&](bool) { std::printf("accepted\n"); },
               [&](caf::error& e) {
                 std::printf("refused: %s\n", sys.render(e).c_str());
                 rc = 2;
               });
    return rc;
  }
  if (mode == "stopper") {
    self->request(*head, std::chrono::seconds(5), stop_atom::value, uint64_t{1}, credential{"a guess"},
                  std::string("a stranger wants it stopped"))
      .receive([&](bool) { std::printf("accepted\n"); },
               [&](caf::error& e) {
                 std::printf("refused: %s\n", sys.render(e).c_str());
                 rc = 2;
               });
    return rc;
  }
  return 64;
}
