// The cluster's transport and a job across processes, real clock, loopback.
//
//   build/bench_cluster [--sizes 1,4,16] [--rounds K] [--repeat R] [--job-epochs E] [--no-job]
//                       [--only-replicas] [--replicas-epochs E]
//
// 1. Push+pull throughput between two processes: a worker-side process sends
//    a gradient of S MB to a parameter server in another process and pulls the
//    model back (2 x S MB per round trip), through the actors (CAF's middleman,
//    block serialization); against the same bytes echoed over a raw Boost.Asio
//    TCP socket in the same run; and against CAF 0.17's element-wise
//    std::vector<float> path, which the block format replaced; and through the
//    actors over TLS (--tls: CAF's OpenSSL module, certificates from a CA made
//    for the run with the openssl command), from a server process of its own
//    (CAF drops a second connection between the same two processes, so TLS
//    and plain cannot share one). Median of R runs of K round trips each.
//    And the bulk channel's transport (runtime/cluster/dataplane/bulk.hpp): the same
//    push+pull as frames on a connection of its own, the gradient sent from
//    the sender's vector and the model from the server's shared buffer.
// 2. Samples/s of a 4-worker BSP job (MLP, Fashion-MNIST) on a head and two
//    node processes (the PS on the head, or a shard on each node) against the
//    same job in one process.
// 3. The dashboard's cost (--dashboard-epochs E, default 2): that job on a head
//    without a dashboard, with one, and with one a browser and a scraper poll.
// 4. The cost of replicated shards (--ps-replicas 0, 1, 2): samples/s of a
//    2-worker BSP job with each shard on more hosts, side by side.
#include "bench/args.hpp"
#include "actors/parameter_server.hpp"
#include "runtime/cluster/dataplane/bulk.hpp"
#include "runtime/cluster/dataplane/data_plane.hpp"
#include "runtime/cluster/wire/connect.hpp"
#include "bench/cluster_job.hpp"
#include "bench/stats.hpp"
#include "bench/process.hpp"

#include <boost/asio.hpp>
#include <caf/io/middleman.hpp>
#include <caf/openssl/all.hpp>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace syncpoint;
using bench::median;
using boost::asio::ip::tcp;
using clk = std::chrono::steady_clock;

namespace {

using vector_echo = caf::typed_actor<
  caf::replies_to<std::vector<float>>::with<std::vector<float>>>;

size_t floats_of(double mb) {
  return static_cast<size_t>(mb * 1e6 / sizeof(float));
}

// -- the server process -----------------------------------------------------------

struct ports {
  uint16_t ps[8];
  uint16_t echo;
  uint16_t raw;
  uint16_t bulk;
  uint16_t plane;  // the PSs' data plane (runtime/cluster/dataplane/data_plane.hpp)
};

// The benchmark's worker 0 on the data plane.
constexpr uint64_t bench_key = 0x5eed5eed5eed5eedULL;

// The bulk channel's frames in this benchmark: a push (floats in), its
// acknowledgement, a pull, and the model (floats out).
enum bench_frame : uint32_t { push_frame = 1, pushed_frame, pull_frame, model_frame };

// The PS's side of push+pull on the bulk channel: a push is taken into a
// vector of its own, a pull answered from the model's shared buffer. The
// hello names the size (its index in --sizes).
cluster::bulk_accept bulk_ps(const std::vector<double>& sizes) {
  auto models = std::make_shared<std::vector<std::shared_ptr<const std::vector<float>>>>();
  for (auto mb : sizes)
    models->push_back(std::make_shared<const std::vector<float>>(floats_of(mb), 0.5f));
  return [models](const std::vector<char>& hello, std::shared_ptr<cluster::bulk_link> link)
           -> std::variant<cluster::bulk_handler, std::string> {
    if (hello.size() != 1 || static_cast<size_t>(hello[0]) >= models->size())
      return "no such size";
    auto model = (*models)[static_cast<size_t>(hello[0])];
    std::weak_ptr<cluster::bulk_link> weak = link;
    return cluster::bulk_handler{[weak, model](cluster::bulk_frame&& f) {
                                   auto l = weak.lock();
                                   if (!l)
                                     return;
                                   if (f.kind == push_frame)
                                     l->send(pushed_frame, {}, nullptr, 0, nullptr);
                                   else if (f.kind == pull_frame)
                                     l->send(model_frame, {}, model->data(), model->size(), model);
                                 },
                                 {}};
  };
}

void raw_echo_server(tcp::acceptor& acceptor) {
  for (;;) {
    tcp::socket s(acceptor.get_executor());
    boost::system::error_code ec;
    acceptor.accept(s, ec);
    if (ec)
      return;
    s.set_option(tcp::no_delay(true));
    std::vector<char> buf;
    for (;;) {
      uint64_t n = 0;
      boost::asio::read(s, boost::asio::buffer(&n, sizeof n), ec);
      if (ec)
        break;
      buf.resize(n);
      boost::asio::read(s, boost::asio::buffer(buf), ec);
      if (ec)
        break;
      boost::asio::write(s, boost::asio::buffer(buf), ec);
      if (ec)
        break;
    }
  }
}

// Over TLS only the PSs are published (with caf::openssl::publish).
[[noreturn]] void serve(const std::vector<double>& sizes, int pipe_fd, const cluster::tls_files& tls = {}) {
  caf::actor_system_config cfg;
  cluster::configure_cluster(cfg, tls);
  cfg.add_message_type<std::vector<float>>("std::vector<float>");
  caf::actor_system sys{cfg};
  ports p{};
  std::vector<ps_actor> servers;
  for (size_t i = 0; i < sizes.size(); ++i) {
    ps_config c{std::vector<float>(floats_of(sizes[i]), 0.5f), 1e-6, 0.9, 0, 1, tracer_actor{}, sys.clock().now()};
    c.bulk_keys = {bench_key};
    auto ps = spawn_parameter_server(sys, std::move(c));
    servers.push_back(ps);
    p.ps[i] = tls.enabled() ? *caf::openssl::publish(ps, 0, "127.0.0.1") : *sys.middleman().publish(ps, 0, "127.0.0.1");
  }
  if (tls.enabled()) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the benchmark
    if (write(pipe_fd, &p, sizeof p) != sizeof p)
      _exit(1);
    for (;;)
      pause();  // until the parent kills this process
  }
  cluster::bulk_io bulk_thread;
  cluster::bulk_server bulk(bulk_thread, {}, bulk_ps(sizes), floats_of(*std::max_element(sizes.begin(), sizes.end())));
  cluster::data_plane plane(sys, {}, {});
  for (size_t i = 0; i < sizes.size(); ++i)
    plane.serve(servers[i], floats_of(sizes[i]), {bench_key});
  p.plane = plane.port();
  p.bulk = bulk.port();
  auto echo = sys.spawn([]() -> vector_echo::behavior_type {
    return {[](std::vector<float>& v) { return std::move(v); }};
  });
  p.echo = *sys.middleman().publish(echo, 0, "127.0.0.1");
  boost::asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  p.raw = acceptor.local_endpoint().port();
  if (write(pipe_fd, &p, sizeof p) != sizeof p)
    _exit(1);
  raw_echo_server(acceptor);  // until the parent kills this process
  _exit(0);
}

// -- the client side -----------------------------------------------------------

// Seconds for `rounds` push+pull round trips to the PS.
double actor_rounds(caf::actor_system& sys, ps_actor ps, size_t n, int rounds) {
  caf::scoped_actor self{sys};
  // Each round's gradient is made before the clock starts, as raw TCP's
  // buffer is: a worker's compute writes its gradient, not the exchange.
  std::vector<std::vector<float>> gradients(static_cast<size_t>(rounds), std::vector<float>(n, 1e-3f));
  auto t0 = clk::now();
  for (int r = 0; r < rounds; ++r) {
    self->request(ps, std::chrono::seconds(60), push_atom::value,
                  gradient_push{0, uint64_t(r) + 1, 0, 64, std::move(gradients[static_cast<size_t>(r)])})
      .receive([](const proceed&) {}, [&](caf::error& e) { std::fprintf(stderr, "push: %s\n", sys.render(e).c_str()); });
    self->request(ps, std::chrono::seconds(60), pull_atom::value, uint64_t{0})
      .receive([&](weights& w) {
        if (w.values.size() != n)
          std::fprintf(stderr, "pull: wrong size\n");
      }, [&](caf::error& e) { std::fprintf(stderr, "pull: %s\n", sys.render(e).c_str()); });
  }
  return std::chrono::duration<double>(clk::now() - t0).count();
}

double vector_rounds(caf::actor_system& sys, vector_echo echo, size_t n, int rounds) {
  caf::scoped_actor self{sys};
  std::vector<float> v(n, 1e-3f);
  auto t0 = clk::now();
  for (int r = 0; r < rounds; ++r)
    self->request(echo, std::chrono::seconds(120), v)
      .receive([](std::vector<float>&) {}, [&](caf::error& e) { std::fprintf(stderr, "echo: %s\n", sys.render(e).c_str()); });
  return std::chrono::duration<double>(clk::now() - t0).count();
}

// Seconds for `rounds` push+pull round trips on the bulk channel.
double bulk_rounds(cluster::bulk_io& io, uint16_t port, size_t size_index, size_t n, int rounds) {
  std::mutex m;
  std::condition_variable cv;
  int replies = 0;
  size_t pulled = 0;
  cluster::bulk_handler h{[&](cluster::bulk_frame&& f) {
                            std::lock_guard<std::mutex> g(m);
                            ++replies;
                            if (f.kind == model_frame)
                              pulled = f.values.size();
                            cv.notify_all();
                          },
                          {}};
  auto c = cluster::bulk_connect(io, {}, "127.0.0.1", port, {static_cast<char>(size_index)}, h, n);
  if (!c.link) {
    std::fprintf(stderr, "bench_cluster: bulk channel: %s\n", c.error.c_str());
    return std::nan("");
  }
  auto gradient = std::make_shared<std::vector<float>>(n, 1e-3f);
  auto t0 = clk::now();
  for (int r = 0; r < rounds; ++r) {
    c.link->send(push_frame, {}, gradient->data(), n, gradient);
    c.link->send(pull_frame, {}, nullptr, 0, nullptr);
    std::unique_lock<std::mutex> g(m);
    cv.wait(g, [&] { return replies == 2 * (r + 1); });
    if (pulled != n)
      std::fprintf(stderr, "bulk pull: wrong size\n");
  }
  double s = std::chrono::duration<double>(clk::now() - t0).count();
  c.link->close();
  return s;
}

double raw_rounds(uint16_t port, size_t n, int rounds) {
  boost::asio::io_context io;
  tcp::socket s(io);
  s.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  s.set_option(tcp::no_delay(true));
  std::vector<char> out(n * sizeof(float), 1), in(n * sizeof(float));
  uint64_t len = out.size();
  auto t0 = clk::now();
  for (int r = 0; r < rounds; ++r) {
    boost::asio::write(s, boost::asio::buffer(&len, sizeof len));
    boost::asio::write(s, boost::asio::buffer(out));
    boost::asio::read(s, boost::asio::buffer(in));
  }
  return std::chrono::duration<double>(clk::now() - t0).count();
}

// A CA and a certificate for each side, made with the openssl command in `dir`.
cluster::tls_files make_certificates(const std::string& dir, const std::string& who) {
  auto run = [&](const std::string& cmd) {
    return std::system(("cd " + dir + " && { " + cmd + "; } > /dev/null 2>&1").c_str()) == 0;
  };
  if (!run("test -f ca.pem || openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=bench-ca -keyout "
           "ca.key -out ca.pem") ||
      !run("openssl req -newkey rsa:2048 -nodes -subj /CN=" + who + " -keyout " + who + ".key -out " + who +
           ".csr && openssl x509 -req -days 2 -in " + who + ".csr -CA ca.pem -CAkey ca.key -CAcreateserial -out " +
           who + ".pem"))
    return {};
  return {dir + "/" + who + ".pem", dir + "/" + who + ".key", dir + "/ca.pem"};
}

// MB/s of push+pull through the actors over TLS, per size (NaN where it could not run).
std::vector<double> tls_transport(const std::vector<double>& sizes, int rounds, int repeat) {
  std::vector<double> out(sizes.size(), std::nan(""));
  syncpoint::testing::temp_dir pki;
  auto server_tls = make_certificates(pki.path(), "server");
  auto client_tls = make_certificates(pki.path(), "client");
  if (!server_tls.enabled() || !client_tls.enabled()) {
    std::fprintf(stderr, "bench_cluster: the openssl command failed; no TLS figures\n");
    return out;
  }
  int fds[2];
  if (pipe(fds) != 0)
    return out;
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    serve(sizes, fds[1], server_tls);
  }
  close(fds[1]);
  ports p{};
  if (read(fds[0], &p, sizeof p) == sizeof p) {
    caf::actor_system_config cfg;
    cluster::configure_cluster(cfg, client_tls);
    caf::actor_system sys{cfg};
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto ps = caf::openssl::remote_actor<ps_actor>(sys, "127.0.0.1", p.ps[i]);
      if (!ps) {
        std::fprintf(stderr, "bench_cluster: TLS connect failed: %s\n", sys.render(ps.error()).c_str());
        break;
      }
      auto n = floats_of(sizes[i]);
      double bytes = 2.0 * static_cast<double>(n * sizeof(float)) * rounds;
      actor_rounds(sys, *ps, n, 2);  // warm-up
      std::vector<double> a;
      for (int k = 0; k < repeat; ++k)
        a.push_back(bytes / actor_rounds(sys, *ps, n, rounds) / 1e6);
      out[i] = median(a);
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return out;
}

void transport(const std::vector<double>& sizes, int rounds, int repeat) {
  auto tls = tls_transport(sizes, rounds, repeat);
  int fds[2];
  if (pipe(fds) != 0)
    return;
  pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    serve(sizes, fds[1]);
  }
  close(fds[1]);
  ports p{};
  if (read(fds[0], &p, sizeof p) != sizeof p) {
    std::fprintf(stderr, "bench_cluster: the server process did not start\n");
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return;
  }
  {
    caf::actor_system_config cfg;
    cluster::configure_cluster(cfg);
    cfg.add_message_type<std::vector<float>>("std::vector<float>");
    caf::actor_system sys{cfg};
    auto echo = sys.middleman().remote_actor<vector_echo>("127.0.0.1", p.echo);
    std::printf("push+pull between two processes on loopback (median of %d runs of %d round trips;\n"
                "MB/s counts both directions)\n\n", repeat, rounds);
    std::printf("| model | PS push+pull, CAF | PS push+pull, data plane | bulk transport alone | raw Boost.Asio TCP | CAF / raw | **data plane / raw** | transport / raw | element-wise vector<float> / raw | CAF over TLS | TLS / plain CAF |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    cluster::bulk_io bulk_thread;
    cluster::data_plane plane(sys, {}, {});
    for (size_t i = 0; i < sizes.size(); ++i) {
      auto n = floats_of(sizes[i]);
      auto ps = sys.middleman().remote_actor<ps_actor>("127.0.0.1", p.ps[i]);
      if (!ps || !echo) {
        std::fprintf(stderr, "bench_cluster: cannot reach the server\n");
        break;
      }
      double bytes = 2.0 * static_cast<double>(n * sizeof(float)) * rounds;
      // The worker's view of the PS on the data plane: a local proxy on the bulk channel.
      auto group = ps_group::one(*ps, n);
      group.bulk = {":" + std::to_string(p.plane)};
      auto proxied = plane.proxied(group, 0, bench_key, "127.0.0.1");
      if (proxied.on_bulk.empty()) {
        std::fprintf(stderr, "bench_cluster: the data plane did not connect: %s\n",
                     proxied.notes.empty() ? "?" : proxied.notes.front().c_str());
        break;
      }
      auto via_plane = proxied.ps.shards[0];
      std::vector<double> a, d, b, v, r;
      actor_rounds(sys, *ps, n, 2);  // warm-up: connections, buffers
      actor_rounds(sys, via_plane, n, 2);
      raw_rounds(p.raw, n, 2);
      bulk_rounds(bulk_thread, p.bulk, i, n, 2);
      int vrounds = std::max(1, rounds / 8);  // the element-wise path is slow
      for (int k = 0; k < repeat; ++k) {
        a.push_back(bytes / actor_rounds(sys, *ps, n, rounds) / 1e6);
        d.push_back(bytes / actor_rounds(sys, via_plane, n, rounds) / 1e6);
        b.push_back(bytes / bulk_rounds(bulk_thread, p.bulk, i, n, rounds) / 1e6);
        v.push_back(bytes / rounds * vrounds / vector_rounds(sys, *echo, n, vrounds) / 1e6);
        r.push_back(bytes / raw_rounds(p.raw, n, rounds) / 1e6);
      }
      double ma = median(a), md = median(d), mb = median(b), mv = median(v), mr = median(r);
      std::printf("| %g MB | %.0f MB/s | %.0f MB/s | %.0f MB/s | %.0f MB/s | %.2f | **%.2f** | %.2f | %.3f | %.0f MB/s | %.2f |\n",
                  sizes[i], ma, md, mb, mr, ma / mr, md / mr, mb / mr, mv / mr, tls[i], tls[i] / ma);
      for (auto& proxy : proxied.proxies)
        caf::anon_send_exit(proxy, caf::exit_reason::user_shutdown);
      std::fflush(stdout);
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes{1, 4, 16};
  int rounds = 40, repeat = 3;
  double job_epochs = 0.5, dashboard_epochs = 2, replicas_epochs = 0.5;
  bool no_job = false, no_dashboard = false, only_dashboard = false, no_replicas = false, only_replicas = false;
  CLI::App app{"the bulk channel against raw TCP, a cluster job against one process, the dashboard's cost",
               "bench_cluster"};
  app.add_option("--sizes", sizes, "message sizes in MB, comma-separated")->delimiter(',')->capture_default_str()
    ->check(syncpoint::bench::positive());
  app.add_option("--rounds", rounds, "round trips per size")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--repeat", repeat, "interleaved runs of each")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_option("--job-epochs", job_epochs, "epochs of the cluster job")->capture_default_str()->check(syncpoint::bench::positive());
  app.add_flag("--no-job", no_job, "leave out the cluster job");
  app.add_option("--dashboard-epochs", dashboard_epochs, "epochs of the dashboard's job")
    ->capture_default_str()
    ->check(syncpoint::bench::positive());
  app.add_flag("--no-dashboard", no_dashboard, "leave out the dashboard's cost");
  app.add_flag("--only-dashboard", only_dashboard, "only the dashboard's cost");
  app.add_option("--replicas-epochs", replicas_epochs, "epochs of the replicated shards' job")
    ->capture_default_str()
    ->check(syncpoint::bench::positive());
  app.add_flag("--no-replicas", no_replicas, "leave out the cost of replicated shards");
  app.add_flag("--only-replicas", only_replicas, "only the cost of replicated shards (--ps-replicas 0, 1, 2)");
  if (int rc = syncpoint::bench::parse(app, argc, argv); rc >= 0)
    return rc;
  bool run_job = !no_job && !only_dashboard && !only_replicas;
  bool run_dashboard = !no_dashboard && !only_replicas, run_replicas = !no_replicas && !only_dashboard;
  if (only_dashboard || only_replicas)
    sizes = {};
  if (sizes.size() > 8 || (sizes.empty() && (run_job || (!run_dashboard && !run_replicas)))) {
    std::fprintf(stderr, "bench_cluster: --sizes takes 1 to 8 sizes in MB\n");
    return 2;
  }
  if (!sizes.empty())
    transport(sizes, rounds, repeat);
  if (run_job)
    syncpoint::bench::job(job_epochs, repeat);
  if (run_dashboard)
    syncpoint::bench::dashboard_cost(dashboard_epochs, repeat);
  if (run_replicas)
    syncpoint::bench::replication_cost(replicas_epochs, repeat);
  return 0;
}
