// The cluster with real processes on loopback: a head, nodes and submitters
// are `syncpoint` processes on random free ports; every wait has a deadline
// and every process is killed by pid when its test ends.
#include "runtime/records/model_file.hpp"
#include <syncpoint/model.hpp>
#include "tests/cluster_fixture.hpp"
#include "bench/process.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <memory>
#include <sstream>
#include <thread>
#include <tuple>

using namespace syncpoint;
using namespace syncpoint::testing;
using namespace std::chrono_literals;

TEST_CASE("cluster: a 4-worker BSP job on a head and two nodes ends with the model of the same job in one process") {
  cluster c;
  c.node("a", 2);
  c.node("b", 2);
  auto job = small_job("bsp", 4, 2);
  auto sub = c.submit(cat(job, {"--out", c.dir / "cluster", "--save-model", c.dir / "cluster.model"}),
                      "submit");
  REQUIRE_MESSAGE(sub->wait(hang_deadline) == 0, sub->err());
  CHECK(sub->err().find("4 workers started on a (2), b (2)") != std::string::npos);  // spread
  CHECK(sub->err().find("[bsp] eval") != std::string::npos);  // progress streamed here
  auto local = c.run("train", cat(job, {"--clock", "real", "--out", c.dir / "local", "--save-model",
                                        c.dir / "local.model"}),
                     "train");
  REQUIRE_MESSAGE(local->wait(hang_deadline) == 0, local->err());

  auto a = load_model_file(c.dir / "cluster.model");
  auto b = load_model_file(c.dir / "local.model");
  CHECK(a.version == b.version);
  REQUIRE(a.values.size() == b.values.size());
  double max_diff = 0;
  for (size_t i = 0; i < a.values.size(); ++i)
    max_diff = std::max(max_diff, std::abs(double(a.values.data()[i]) - double(b.values.data()[i])));
  CHECK(max_diff < 1e-4);  // only the summation order of a round's gradients differs
  auto sa = slurp(c.dir / "cluster/summary.json");
  auto sb = slurp(c.dir / "local/summary.json");
  CHECK(json_number(sa, "final_accuracy") == doctest::Approx(json_number(sb, "final_accuracy")).epsilon(0.003));
  CHECK(json_number(sa, "samples") == json_number(sb, "samples"));
  CHECK(sa.find("\"clock\": \"real\"") != std::string::npos);
  // Every worker's events came (a node's worker sends a round's at once), and
  // the processes' times agree (they share this machine: the head sends its
  // origin): no worker computes on a version before the PS made it.
  std::map<int64_t, double> made;                 // version -> its apply's time
  std::map<int64_t, int64_t> computes, pushes;    // per worker
  std::vector<std::pair<int64_t, double>> starts;  // (version computed on, t0)
  std::istringstream trace(slurp(c.dir / "cluster/trace.jsonl"));
  std::regex event(R"re("kind": "(\w+)", "worker": (-?\d+), "t0": ([0-9.e+-]+), .*"version": (\d+))re");
  for (std::string line; std::getline(trace, line);) {
    std::smatch m;
    REQUIRE_MESSAGE(std::regex_search(line, m, event), line);
    auto kind = m[1].str();
    auto worker = std::stoll(m[2].str()), version = std::stoll(m[4].str());
    double t0 = std::stod(m[3].str());
    if (kind == "apply")
      made.emplace(version, t0);
    else if (kind == "compute")
      ++computes[worker], starts.emplace_back(version, t0);
    else if (kind == "push")
      ++pushes[worker];
  }
  REQUIRE(computes.size() == 4);
  for (auto& [worker, n] : computes) {  // BSP: every worker pushed each round's gradient, 64 samples each
    CHECK(n >= pushes[worker]);
    CHECK(pushes[worker] == pushes[0]);
  }
  CHECK(std::abs(4 * 64 * pushes[0] - json_number(sa, "samples")) <= 4 * 64);
  size_t before = 0;
  for (auto& [version, t0] : starts)
    if (version > 0 && made.count(version) && t0 < made[version])
      ++before;
  CHECK(before == 0);
}

// Every protocol the CLI knows, so that one added later is covered too.
std::vector<std::string> registered_protocols(cluster& c) {
  auto p = c.run("protocols", {}, "protocols");
  REQUIRE(p->wait(hang_deadline) == 0);
  std::vector<std::string> names;
  std::istringstream lines(p->out());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] != ' ')  // indented lines are a protocol's options
      names.push_back(line.substr(0, line.find(' ')));
  return names;
}

// The offset past the lines saying that workers 1 and 3 (node b's, under
// spread placement) were lost, after byte `from` of the submitter's stderr.
size_t await_b_lost(process& sub, size_t from) {
  return std::max(await(sub, "worker 1 lost", from), await(sub, "worker 3 lost", from));
}

TEST_CASE("cluster: a node killed with SIGKILL mid-job: every protocol finishes with the other workers") {
  cluster c;
  c.node("a", 2);
  auto protocols = registered_protocols(c);
  for (auto must : {"bsp", "asp", "ssp", "elastic-bsp", "wbsp", "wbsp-overlap"})
    REQUIRE(std::find(protocols.begin(), protocols.end(), must) != protocols.end());
  bool first = true;
  for (auto& protocol : protocols) {
    CAPTURE(protocol);
    auto& b = c.node("b", 2);
    // An open job: it runs until the test ends it, so b is always killed mid-job.
    auto job = cat(open_job(protocol, 4), {"--straggler", "0:+25ms;1:+25ms;2:+25ms;3:+25ms",
                                           "--out", c.dir / protocol});
    auto sub = c.submit(job, "submit-" + protocol);
    auto at = await(*sub, "] eval ");  // every worker started and the job is training
    if (first) {  // status lists both nodes and the running job
      first = false;
      auto s = c.status();
      CHECK(s.find("nodes (2)") != std::string::npos);
      CHECK(s.find(" a ") != std::string::npos);
      CHECK(s.find(" b ") != std::string::npos);
      CHECK(s.find("running") != std::string::npos);
      CHECK(s.find("127.0.0.1:") != std::string::npos);
    }
    b.signal(SIGKILL);
    at = await_b_lost(*sub, at);
    // The other workers go on: the model reaches 0.8 after the loss, without b's workers.
    await_accuracy(*sub, 0.8, at);
    interrupt(*sub);
    auto summary = slurp(c.dir / protocol + "/summary.json");
    CHECK(json_number(summary, "lost_workers") == 2);  // spread put workers 1 and 3 on b
    CHECK(summary.find("\"worker\": 1, ") != std::string::npos);
    CHECK(summary.find("node b") != std::string::npos);
    CHECK(summary.find("unreachable") != std::string::npos);
    CHECK(json_number(summary, "final_accuracy") > 0.8);
    // A killed process's connections close at once: noticed within 5 s of the last
    // thing worker 1 did (typically tens of milliseconds).
    auto [lost, last] = loss_and_last_event(c.dir / protocol + "/trace.jsonl", 1);
    MESSAGE(protocol << ": the killed node was noticed " << lost - last << " s after worker 1's last event");
    CHECK(lost >= last);
    CHECK(lost - last < 5.0);
    c.nodes.erase("b");
  }
  auto s = c.status();
  CHECK(s.find("nodes (1)") != std::string::npos);  // b is gone from the table
}

TEST_CASE("cluster: refusals: a taken name, no head, a silent port, another schema, the head keeps running") {
  cluster c;
  c.node("a", 2);
  // Each refusal comes within the command's own 5 s connect and reply limits;
  // 20 s leaves a loaded machine room to start the process. The wait is a hang's deadline.
  auto timed = [&](std::unique_ptr<process> p, int want, const std::string& says) {
    auto t0 = std::chrono::steady_clock::now();
    int rc = p->wait(hang_deadline);
    auto took = std::chrono::steady_clock::now() - t0;
    CHECK_MESSAGE(rc == want, (p->out() + p->err()));
    CHECK_MESSAGE((p->out() + p->err()).find(says) != std::string::npos, (p->out() + p->err()));
    CHECK(took < 20s);
  };
  // The same name again.
  timed(c.run("node", {"--join", c.address(), "--name", "a"}, "dup"), 2, "already registered");
  // A port where nothing listens, and one that accepts connections but never speaks CAF.
  syncpoint::testing::loopback_socket closed(false), silent(true);
  REQUIRE((closed.ok() && silent.ok()));
  timed(c.run("node", {"--join", closed.address()}, "closed"), 2, "cannot connect");
  timed(c.run("node", {"--join", silent.address()}, "silent"), 2, "no syncpoint head answered");
  timed(c.run("status", {"--head", silent.address()}, "silent-status"), 2, "no syncpoint head answered");
  timed(c.run("submit", cat({"--head", silent.address()}, small_job("bsp", 1, 1)), "silent-submit"), 2,
        "no syncpoint head answered");
  // Another application identifier: CAF's handshake refuses it.
  timed(c.run("node", {"--join", c.address(), "--name", "other-app",
                       "--middleman.app-identifiers=[\"some-other-app\"]"}, "appid"),
        2, "refused");
  // Impostors (tests/impostor.cpp): another interface (CAF's check in remote_actor<T>); another
  // schema, a name with a terminal escape, no slots (the head's checks); a stranger's shutdown;
  // bytes that are no CAF message.
  auto impostor = [&](const std::string& mode) {
    return std::make_unique<process>(std::vector<std::string>{SYNCPOINT_IMPOSTOR, mode, c.address()},
                                      c.dir.path(), "imp-" + mode);
  };
  timed(impostor("interface"), 2, "unexpected_actor_messaging_interface");
  timed(impostor("schema"), 2, "another message schema");
  timed(impostor("badname"), 2, "a node's name must be 1 to 128 printable characters, not 'imp?[31mred'");
  timed(impostor("noslots"), 2, "node 'impostor' offers 0 slots (1..4096)");
  timed(impostor("badgpus"), 2, "node 'impostor' offers GPU 0 twice or out of 0..63");
  timed(impostor("stranger"), 2, "only the head's own process");
  auto junk = impostor("garbage");
  CHECK(junk->wait(hang_deadline) == 0);
  // Bad jobs.
  timed(c.submit(small_job("bsp", 3, 1), "too-many"), 2, "needs 3 worker slots but the cluster has 2 free");
  timed(c.submit(cat(small_job("bsp", 1, 1), {"--clock", "virtual"}), "virtual"), 2,
        "virtual time runs in one process");
  timed(c.submit(small_job("no-such-protocol", 1, 1), "unknown"), 2, "no-such-protocol");
  // GPU workers: placed only on nodes that offer GPUs, and none here does (docs/gpu.md).
  timed(c.submit(cat(small_job("bsp", 2, 1), {"--device", "cuda"}), "gpu-job"), 2,
        "--device cuda: the job needs 2 worker slots on nodes that offer GPUs (node --gpus), and the cluster has no "
        "node that offers any");
  if (!syncpoint::torch_has_cuda())
    timed(c.run("node", {"--join", c.address(), "--name", "gpu-node", "--gpus", "0"}, "gpu-node"), 2,
          "--gpus: this LibTorch was built without CUDA");
  // Through all of it the head kept running and still knows node a.
  REQUIRE(c.head->running());
  auto s = c.status();
  CHECK(s.find("nodes (1)") != std::string::npos);
  CHECK(s.find(" a ") != std::string::npos);
  auto ok = c.submit(small_job("asp", 2, 1), "after");
  CHECK_MESSAGE(ok->wait(hang_deadline) == 0, ok->err());
  // A node without the data set joins (a synthetic job needs none); a job that reads
  // Fashion-MNIST there fails, naming the node and the file.
  auto nodata = c.run("node", {"--join", c.address(), "--name", "nodata", "--slots", "1", "--data", "/nowhere"},
                      "node-nodata");
  REQUIRE_MESSAGE(nodata->wait_for("joined the head", hang_deadline), nodata->err());
  timed(c.submit({"--protocol", "bsp", "--workers", "3", "--model", "softmax", "--train-limit", "2000",
                  "--test-limit", "500", "--epochs", "0.1"}, "nodata-job"),
        1, "node nodata could not prepare the job: syncpoint.bad_input: node nodata: "
           "/nowhere/train-images-idx3-ubyte.gz: no such file");
}

TEST_CASE("cluster: the head stops a job whose submitter died and frees its slots") {
  cluster c;
  c.node("a", 2);
  auto sub = c.submit(open_job("bsp", 2), "submit");
  await(*sub, "] eval ");
  sub->signal(SIGKILL);
  sub->wait(hang_deadline);
  // The head learns of it from the dropped connection; status shows it once it has.
  std::string s;
  auto deadline = std::chrono::steady_clock::now() + hang_deadline;
  while (std::chrono::steady_clock::now() < deadline) {
    s = c.status();
    if (s.find("stopped") != std::string::npos && s.find("    2     0     2") != std::string::npos)
      break;
    std::this_thread::sleep_for(100ms);
  }
  CHECK_MESSAGE(s.find("stopped") != std::string::npos, s);
  CHECK_MESSAGE(s.find("    2     0     2") != std::string::npos, s);  // slots, used, free
  auto again = c.submit(small_job("bsp", 2, 1), "again");  // the slots can be used again
  CHECK_MESSAGE(again->wait(hang_deadline) == 0, again->err());
}

TEST_CASE("cluster: SIGINT to submit stops its job, the outcome and files come back, and the slots are free") {
  cluster c;
  c.node("a", 2);
  auto sub = c.submit(cat(open_job("asp", 2), {"--out", c.dir / "run", "--save-model", c.dir / "run.model"}),
                      "submit");
  auto at = await(*sub, "] eval ");
  // Only its submitter stops a job: a guessed stop token is refused, and the job trains on.
  process stopper({SYNCPOINT_IMPOSTOR, "stopper", c.address()}, c.dir.path(), "stopper");
  CHECK(stopper.wait(hang_deadline) == 2);
  CHECK_MESSAGE(stopper.out().find("only the job's submitter stops it") != std::string::npos, stopper.out());
  CHECK_MESSAGE(c.head->err().find("refused to stop job 1") != std::string::npos, c.head->err());
  await_accuracy(*sub, 0.5, at);
  interrupt(*sub);
  CHECK(sub->err().find("stopping job 1 (its outcome and files follow") != std::string::npos);
  auto summary = slurp(c.dir / "run/summary.json");
  CHECK(json_number(summary, "final_accuracy") > 0.5);
  CHECK(json_number(summary, "samples") > 0);
  CHECK(json_number(summary, "lost_workers") == 0);
  CHECK(load_model_file(c.dir / "run.model").values.size() > 0);
  CHECK_MESSAGE(c.head->err().find("job 1 stopping: its submitter was interrupted (SIGINT)") != std::string::npos,
                c.head->err());
  auto s = c.status();
  CHECK_MESSAGE(s.find("stopped") != std::string::npos, s);
  CHECK_MESSAGE(s.find("    2     0     2") != std::string::npos, s);  // slots, used, free
  auto other = c.submit(small_job("bsp", 2, 1), "after");  // the slots can be used again
  CHECK_MESSAGE(other->wait(hang_deadline) == 0, other->err());
}

TEST_CASE("cluster: SIGTERM to the head ends the running job with a clear status and tells the nodes") {
  cluster c;
  auto& a = c.node("a", 1);
  auto& b = c.node("b", 1);
  auto sub = c.submit(open_job("ssp", 2), "submit");
  await(*sub, "] eval ");
  c.head->signal(SIGTERM);
  CHECK(c.head->wait(hang_deadline) == 0);
  CHECK(sub->wait(hang_deadline) == 1);
  CHECK_MESSAGE(sub->err().find("stopped early: the head is shutting down") != std::string::npos,
                sub->err());
  CHECK(a.wait(hang_deadline) == 0);
  CHECK(b.wait(hang_deadline) == 0);
  CHECK(a.err().find("the head is shutting down") != std::string::npos);
}

TEST_CASE("cluster: a head killed with SIGKILL mid-job: its nodes and the submitter say so and exit 1 at once") {
  cluster c;
  auto& a = c.node("a", 2);
  auto sub = c.submit(open_job("bsp", 2), "submit");
  await(*sub, "] eval ");
  c.head->signal(SIGKILL);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(a.wait(hang_deadline) == 1);
  CHECK(sub->wait(hang_deadline) == 1);
  // The connection drops at once: typically well under a second, where a
  // silent head would take the 3 s of middleman.connection-timeout and more.
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("the node and the submitter ended " << took << " s after the head was killed");
  CHECK(took < 10);
  CHECK_MESSAGE(a.err().find("syncpoint node: lost the connection to the head") != std::string::npos, a.err());
  CHECK_MESSAGE(sub->err().find("syncpoint submit: lost the connection to the head") != std::string::npos,
                sub->err());
}

TEST_CASE("cluster: a job whose only node is killed loses every worker and fails with exit 1, saying so") {
  cluster c;
  auto& a = c.node("a", 2);
  auto sub = c.submit(open_job("bsp", 2), "submit");
  await(*sub, "] eval ");
  a.signal(SIGKILL);
  CHECK(sub->wait(hang_deadline) == 1);
  CHECK_MESSAGE(sub->err().find("syncpoint submit: worker 1 lost: its node became unreachable") != std::string::npos,
                sub->err());
  CHECK_MESSAGE(sub->err().find("syncpoint submit: every worker was lost; the job failed") != std::string::npos,
                sub->err());
  CHECK(c.head->running());
}

TEST_CASE("cluster: the head can host workers itself (--slots), and pack placement fills one node first") {
  cluster c({"--slots", "2"});
  c.node("a", 2);
  auto sub = c.submit(cat(small_job("asp", 2, 1), {"--placement", "pack"}), "pack");
  REQUIRE_MESSAGE(sub->wait(hang_deadline) == 0, sub->err());
  bool on_one = sub->err().find("started on a (2)") != std::string::npos ||
                sub->err().find("started on head (2)") != std::string::npos;
  CHECK_MESSAGE(on_one, sub->err());
  auto spread = c.submit(small_job("asp", 2, 1), "spread");
  REQUIRE_MESSAGE(spread->wait(hang_deadline) == 0, spread->err());
  CHECK_MESSAGE(spread->err().find("started on a (1), head (1)") != std::string::npos, spread->err());
}

TEST_CASE("cluster: hostile pushes from a remote worker are refused, the model and the head unharmed") {
  cluster c;
  c.node("a", 1);
  auto evil = std::make_unique<process>(
    std::vector<std::string>{SYNCPOINT_IMPOSTOR, "node", c.address()}, c.dir.path(), "evil");
  REQUIRE_MESSAGE(evil->wait_for("joined", hang_deadline), evil->out());
  // BSP holds round 1 until the impostor's worker leaves (it never pushes a valid
  // gradient), so the job cannot end before everything below was tried.
  auto sub = c.submit(cat(small_job("bsp", 2, 2), {"--out", c.dir / "run"}), "submit");
  REQUIRE_MESSAGE(sub->wait(hang_deadline) == 0, sub->err());
  CHECK_MESSAGE(evil->wait_for("read the PS's state", hang_deadline), evil->out());
  auto said = evil->out();
  CHECK_MESSAGE(said.find("pulled ") != std::string::npos, said);  // a member may pull
  CHECK_MESSAGE(said.find("wrong size: refused: syncpoint.wrong_size") != std::string::npos, said);
  CHECK_MESSAGE(said.find("nan: refused: syncpoint.non_finite") != std::string::npos, said);
  CHECK_MESSAGE(said.find("as another worker: syncpoint.not_a_member") != std::string::npos, said);
  CHECK_MESSAGE(said.find("read the PS's state: syncpoint.not_a_member") != std::string::npos, said);
  CHECK_MESSAGE(said.find("took the trace: syncpoint.not_a_member") != std::string::npos, said);
  for (auto what : {"commit", "publish", "momentum", "weights", "stop", "flush", "snapshot", "save"})
    CHECK_MESSAGE(c.head->err().find(std::string("refused '") + what + "'") != std::string::npos, c.head->err());
  auto summary = slurp(c.dir / "run/summary.json");
  CHECK(json_number(summary, "rejected_pushes") == 2);
  CHECK(json_number(summary, "lost_workers") == 1);         // the impostor left the job
  CHECK(json_number(summary, "final_accuracy") > 0.8);      // nothing it sent reached the model
  CHECK(c.head->running());
}

namespace {

// Three hosts in network namespaces joined by veth pairs to the head's:
// head 10.213.1.1 <-> a 10.213.1.2, head 10.213.2.1 <-> b 10.213.2.2. Made and
// removed by the test; traffic stays inside them.
struct netns_hosts {
  std::string tag = std::to_string(getpid() % 100000);
  std::string h = "sph" + tag, a = "spa" + tag, b = "spb" + tag;
  bool ok = false;

  static bool sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

  netns_hosts() {
    ok = sh("ip netns add " + h) && sh("ip netns add " + a) && sh("ip netns add " + b);
    for (auto& [ns, peer, net] : {std::tuple{a, std::string("a"), std::string("1")},
                                  std::tuple{b, std::string("b"), std::string("2")}}) {
      auto hv = "h" + peer + tag, pv = peer + "h" + tag;
      ok = ok && sh("ip link add " + hv + " netns " + h + " type veth peer name " + pv + " netns " + ns)
           && sh("ip -n " + h + " addr add 10.213." + net + ".1/24 dev " + hv)
           && sh("ip -n " + ns + " addr add 10.213." + net + ".2/24 dev " + pv)
           && sh("ip -n " + h + " link set " + hv + " up") && sh("ip -n " + ns + " link set " + pv + " up")
           && sh("ip -n " + ns + " link set lo up");
    }
    ok = ok && sh("ip -n " + h + " link set lo up");
  }
  ~netns_hosts() {
    for (auto& ns : {h, a, b})
      sh("ip netns del " + ns);
  }
  std::vector<std::string> in(const std::string& ns, std::vector<std::string> argv) const {
    return cat({"/usr/sbin/ip", "netns", "exec", ns}, argv);
  }
};

}  // namespace

TEST_CASE("cluster: three hosts in network namespaces, a cut link is noticed by heartbeats") {
  if (getuid() != 0 || !netns_hosts::sh("ip netns add spprobe" + std::to_string(getpid()))) {
    MESSAGE("skipped: creating network namespaces is not permitted here (needs root and CAP_SYS_ADMIN)");
    return;
  }
  netns_hosts::sh("ip netns del spprobe" + std::to_string(getpid()));
  netns_hosts net;
  REQUIRE_MESSAGE(net.ok, "could not set up the namespaces and veth pairs");
  temp_dir dir;
  auto bin = syncpoint_binary();
  process head(net.in(net.h, {bin, "head", "--host", "0.0.0.0", "--port", "0", "--dashboard", "any"}), dir.path(), "head");
  REQUIRE_MESSAGE(head.wait_for("listening on", hang_deadline), head.err());
  auto port = std::to_string(head_port(head));
  process a(net.in(net.a, {bin, "node", "--join", "10.213.1.1:" + port, "--name", "a", "--slots", "2"}),
            dir.path(), "a");
  REQUIRE_MESSAGE(a.wait_for("joined", hang_deadline), a.err());  // a first: spread puts workers 1 and 3 on b
  process b(net.in(net.b, {bin, "node", "--join", "10.213.2.1:" + port, "--name", "b", "--slots", "2"}),
            dir.path(), "b");
  REQUIRE_MESSAGE(b.wait_for("joined", hang_deadline), b.err());
  process status(net.in(net.h, {bin, "status", "--head", "127.0.0.1:" + port}), dir.path(), "status");
  REQUIRE(status.wait(hang_deadline) == 0);
  CHECK_MESSAGE(status.out().find("10.213.1.2:") != std::string::npos, status.out());
  CHECK_MESSAGE(status.out().find("10.213.2.2:") != std::string::npos, status.out());
  auto job = cat(open_job("bsp", 4), {"--straggler", "0:+25ms;1:+25ms;2:+25ms;3:+25ms",
                                      "--out", dir / "run"});
  process sub(net.in(net.h, cat({bin, "submit", "--head", "127.0.0.1:" + port}, job)), dir.path(), "submit");
  auto at = await(sub, "] eval ");
  // Pull b's cable: no reset reaches anyone, only silence.
  REQUIRE(netns_hosts::sh("ip -n " + net.b + " link set bh" + net.tag + " down"));
  at = std::max(await(sub, "worker 1 lost", at), await(sub, "worker 3 lost", at));
  await(sub, "] eval ", at);  // the others go on
  interrupt(sub);
  auto summary = slurp(dir / "run/summary.json");
  CHECK(json_number(summary, "lost_workers") == 2);
  CHECK(summary.find("node b") != std::string::npos);
  auto [lost, last] = loss_and_last_event(dir / "run/trace.jsonl", 1);
  REQUIRE_MESSAGE(lost > last, "worker 1 was not lost, or went on after its loss");
  MESSAGE("the cut link was noticed " << lost - last << " s after worker 1's last event");
  // Silence is noticed by middleman.connection-timeout (3 s), checked at each
  // heartbeat (1 s): 3 to 4 s, and 4 s more for a loaded machine.
  CHECK(lost - last < 8.0);
}

TEST_CASE("cluster: the head's and the node's logs carry each line's time and level, and --log-level hides the "
          "lines below it") {
  cluster c;  // the default level: info
  c.node("a", 1);
  REQUIRE_MESSAGE(c.head->wait_for("[head] node 'a' joined with 1 slot", hang_deadline, true), c.head->err());
  // "2026-11-27 10:04:05.123 info  [head] node 'a' joined with 1 slot"
  std::regex stamped(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} info +\[head\] node 'a' joined with 1 slot)");
  CHECK_MESSAGE(std::regex_search(c.head->err(), stamped), c.head->err());
  // At warn, the head logs no node joining, and the node no bulk-channel event; both still run the job.
  temp_dir dir;
  process quiet_head({syncpoint_binary(), "head", "--port", "0", "--dashboard", "off", "--log-level", "warn"},
                     dir.path(), "quiet-head");
  REQUIRE_MESSAGE(quiet_head.wait_for("listening on", hang_deadline), quiet_head.err());
  auto address = "127.0.0.1:" + std::to_string(head_port(quiet_head));
  process quiet_node({syncpoint_binary(), "node", "--join", address, "--name", "q", "--slots", "2", "--log-level",
                      "error"},
                     dir.path(), "quiet-node");
  REQUIRE_MESSAGE(quiet_node.wait_for("joined the head", hang_deadline), quiet_node.err());
  process sub({syncpoint_binary(), "submit", "--head", address, "-p", "bsp", "--workers", "2", "--model", "softmax",
               "--dataset", "synthetic", "--train-limit", "2000", "--test-limit", "200", "--epochs", "1",
               "--out", dir / "run"},
              dir.path(), "quiet-submit");
  REQUIRE_MESSAGE(sub.wait(hang_deadline) == 0, sub.err());
  CHECK_MESSAGE(quiet_head.err().find("joined") == std::string::npos, quiet_head.err());
  CHECK_MESSAGE(quiet_head.err().find("submitted") == std::string::npos, quiet_head.err());
  CHECK_MESSAGE(quiet_node.err().find(" info ") == std::string::npos, quiet_node.err());
}
