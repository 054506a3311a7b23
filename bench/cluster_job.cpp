// A job across processes, and the dashboard's cost (bench/cluster_job.hpp).
#include "bench/cluster_job.hpp"
#include "bench/stats.hpp"

#include "tests/http_client.hpp"
#include "bench/process.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace syncpoint::bench {

namespace {

double samples_per_s(const std::string& summary_path) {
  std::ifstream in(summary_path);
  std::stringstream ss;
  ss << in.rdbuf();
  auto text = ss.str();
  auto at = text.find("\"samples_per_s\": ");
  return at == std::string::npos ? std::nan("") : std::atof(text.c_str() + at + 17);
}

// A head and its two nodes (2 slots each), with the dashboard `dashboard` ("off" or "any").
struct bench_cluster {
  std::unique_ptr<syncpoint::testing::process> head, a, b;
  std::string at;
  int dashboard = 0;
  bool up = false;
  bench_cluster(const syncpoint::testing::temp_dir& dir, const std::string& name, const std::string& dashboard_opt) {
    using namespace syncpoint::testing;
    using namespace std::chrono_literals;
    auto bin = syncpoint_binary();
    head = std::make_unique<process>(std::vector<std::string>{bin, "head", "--host", "127.0.0.1", "--port", "0",
                                                              "--dashboard", dashboard_opt, "--runs", dir / (name + "-runs")},
                                     dir.path(), name + "-head");
    if (!head->wait_for("listening on", 15s))
      return;
    at = "127.0.0.1:" + std::to_string(head_port(*head));
    if (dashboard_opt != "off") {
      if (!head->wait_for("dashboard: http", 15s))
        return;
      auto out = head->out();
      dashboard = std::atoi(out.c_str() + out.find("127.0.0.1:", out.find("dashboard: http")) + 10);
    }
    a = std::make_unique<process>(std::vector<std::string>{bin, "node", "--join", at, "--name", "a", "--slots", "2"},
                                  dir.path(), name + "-a");
    b = std::make_unique<process>(std::vector<std::string>{bin, "node", "--join", at, "--name", "b", "--slots", "2"},
                                  dir.path(), name + "-b");
    up = a->wait_for("joined", 15s) && b->wait_for("joined", 15s);
  }
};

}  // namespace

void job(double epochs, int repeat) {
  using namespace syncpoint::testing;
  using namespace std::chrono_literals;
  temp_dir dir;
  auto bin = syncpoint_binary();
  std::vector<std::string> args{"--protocol", "bsp", "--workers", "4", "--model", "mlp", "--epochs",
                                std::to_string(epochs), "--eval-every", "0", "--progress=false",
                                "--seed", "1"};
  auto with = [&](std::vector<std::string> head, std::vector<std::string> tail) {
    head.insert(head.end(), args.begin(), args.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  bench_cluster cluster(dir, "job", "any");
  if (!cluster.up) {
    std::fprintf(stderr, "bench_cluster: the job's cluster did not start\n");
    return;
  }
  auto& at = cluster.at;
  std::vector<double> one, on_head, on_nodes;
  for (int k = 0; k < repeat; ++k) {
    auto o1 = dir / ("one" + std::to_string(k));
    process t(with({bin, "train"}, {"--clock", "real", "--out", o1}), dir.path(), "train");
    if (t.wait(600s) != 0)
      return;
    one.push_back(samples_per_s(o1 + "/summary.json"));
    for (auto placement : {"head", "nodes"}) {
      auto o2 = dir / (std::string(placement) + std::to_string(k));
      process s(with({bin, "submit", "--head", at}, {"--ps-placement", placement, "--out", o2}), dir.path(),
                "submit");
      if (s.wait(600s) != 0) {
        std::fprintf(stderr, "bench_cluster: the cluster job failed: %s\n", s.err().c_str());
        return;
      }
      (placement == std::string("head") ? on_head : on_nodes).push_back(samples_per_s(o2 + "/summary.json"));
    }
  }
  double m1 = median(one), mh = median(on_head), mn = median(on_nodes);
  std::printf("\n4-worker BSP, MLP on Fashion-MNIST, %g epochs, real clock (median of %d runs)\n\n", epochs,
              repeat);
  std::printf("| configuration | samples/s | vs one process |\n|---|---|---|\n");
  std::printf("| one process (4 workers) | %.0f | 1.00 |\n", m1);
  std::printf("| head + 2 node processes (2 workers each), PS on the head | %.0f | %.2f |\n", mh, mh / m1);
  std::printf("| head + 2 node processes (2 workers each), a PS shard on each node | %.0f | %.2f |\n", mn,
              mn / m1);
}

void replication_cost(double epochs, int repeat) {
  using namespace syncpoint::testing;
  using namespace std::chrono_literals;
  temp_dir dir;
  auto bin = syncpoint_binary();
  bench_cluster cluster(dir, "replicas", "off");
  if (!cluster.up) {
    std::fprintf(stderr, "bench_cluster: the replicas' cluster did not start\n");
    return;
  }
  struct config {
    std::string placement;
    int replicas;
    std::vector<double> runs;
  };
  std::vector<config> configs{{"nodes", 0, {}}, {"nodes", 1, {}}, {"head", 0, {}}, {"head", 1, {}}, {"head", 2, {}}};
  for (int k = 0; k < repeat; ++k)
    for (auto& c : configs) {
      auto out = dir / (c.placement + std::to_string(c.replicas) + "-" + std::to_string(k));
      process s({bin, "submit", "--head", cluster.at, "--protocol", "bsp", "--workers", "2", "--model", "mlp",
                 "--epochs", std::to_string(epochs), "--eval-every", "0", "--progress=false", "--seed", "1",
                 "--ps-placement", c.placement, "--ps-replicas", std::to_string(c.replicas), "--out", out},
                dir.path(), "submit");
      if (s.wait(600s) != 0) {
        std::fprintf(stderr, "bench_cluster: the replicated job failed: %s\n", s.err().c_str());
        return;
      }
      c.runs.push_back(samples_per_s(out + "/summary.json"));
    }
  std::printf("\n2-worker BSP, MLP on Fashion-MNIST, %g epochs, head + 2 nodes (a worker each), real clock, "
              "loopback (median of %d alternated runs)\n\n",
              epochs, repeat);
  std::printf("| PS shards | replicas R | samples/s | vs R = 0 |\n|---|---|---|---|\n");
  double base = 0;
  for (auto& c : configs) {
    double m = median(c.runs);
    if (c.replicas == 0)
      base = m;
    std::printf("| %s | %d | %.0f | %.2f |\n", c.placement == "nodes" ? "one on each node" : "on the head",
                c.replicas, m, m / base);
  }
}

namespace {

// What a browser on the job's page and a Prometheus scraper ask, every second,
// until `done`: the job page's data, the cluster's, and /metrics.
void watch_like_a_browser(int port, int job, const std::atomic<bool>& done, int& requests) {
  using namespace syncpoint::testing;
  while (!done) {
    for (auto path : {"/api/jobs/" + std::to_string(job), std::string("/api/cluster"), std::string("/metrics")})
      if (http_get(port, path).status == 200)
        ++requests;
    for (int i = 0; i < 10 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

// The cost of the dashboard: the job row's job (4-worker BSP, MLP, PS on the
// head) on a head without a dashboard, with one nobody looks at, and with one
// a browser and a scraper poll every second. Runs alternate between the
// three, `repeat` times.
void dashboard_cost(double epochs, int repeat) {
  using namespace syncpoint::testing;
  using namespace std::chrono_literals;
  temp_dir dir;
  bench_cluster off(dir, "off", "off"), on(dir, "on", "any"), watched(dir, "watched", "any");
  if (!off.up || !on.up || !watched.up) {
    std::fprintf(stderr, "bench_cluster: the dashboard clusters did not start\n");
    return;
  }
  std::vector<std::string> args{"--protocol", "bsp", "--workers", "4", "--model", "mlp", "--epochs",
                                std::to_string(epochs), "--eval-every", "0.5", "--progress=false", "--seed", "1"};
  std::vector<double> rates[3];
  int jobs[3] = {0, 0, 0}, requests = 0;
  bench_cluster* clusters[3] = {&off, &on, &watched};
  for (int k = 0; k < repeat; ++k)
    for (int c = 0; c < 3; ++c) {
      auto out = dir / ("dash" + std::to_string(c) + "-" + std::to_string(k));
      auto argv = std::vector<std::string>{syncpoint_binary(), "submit", "--head", clusters[c]->at};
      argv.insert(argv.end(), args.begin(), args.end());
      argv.insert(argv.end(), {"--out", out});
      std::atomic<bool> done{false};
      ++jobs[c];
      std::thread browser;
      if (c == 2)
        browser = std::thread(watch_like_a_browser, watched.dashboard, jobs[c], std::cref(done), std::ref(requests));
      process s(argv, dir.path(), "dash-submit");
      int rc = s.wait(600s);
      done = true;
      if (browser.joinable())
        browser.join();
      if (rc != 0) {
        std::fprintf(stderr, "bench_cluster: a dashboard job failed: %s\n", s.err().c_str());
        return;
      }
      rates[c].push_back(samples_per_s(out + "/summary.json"));
    }
  double r0 = median(rates[0]), r1 = median(rates[1]), r2 = median(rates[2]);
  auto spread = [](std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.0f-%.0f", xs.front(), xs.back());
    return std::string(buf);
  };
  std::printf("\nThe dashboard's cost: 4-worker BSP, MLP on Fashion-MNIST, %g epochs, PS on the head, head + 2 "
              "nodes (median of %d runs, alternated; min-max)\n\n", epochs, repeat);
  std::printf("| head | samples/s | min-max | vs no dashboard |\n|---|---|---|---|\n");
  std::printf("| --dashboard off | %.0f | %s | 1.00 |\n", r0, spread(rates[0]).c_str());
  std::printf("| dashboard on, nobody looking | %.0f | %s | %.3f |\n", r1, spread(rates[1]).c_str(), r1 / r0);
  std::printf("| dashboard on, a browser and a scraper polling every second (%d requests) | %.0f | %s | %.3f |\n",
              requests, r2, spread(rates[2]).c_str(), r2 / r0);
}

}  // namespace syncpoint::bench
