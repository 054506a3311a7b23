#include "fuzz/fuzz_targets.hpp"

#include "runtime/studies/zipline_instances.hpp"
#include <syncpoint/protocol.hpp>
#include "runtime/records/checkpoint_file.hpp"
#include "runtime/cluster/wire/interfaces.hpp"
#include <syncpoint/job_config.hpp>
#include "core/straggler.hpp"

#include <caf/all.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace syncpoint::fuzz {

namespace {

// A finding that is not a crash: say what broke, then abort so that libFuzzer
// (or the test) stops with the input that did it.
void fuzz_check(bool ok, const std::string& what) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

std::string text_of(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// -- straggler SPEC ---------------------------------------------------------------

void run_straggler(const uint8_t* data, size_t size) {
  straggler_plan plan;
  try {
    plan = straggler_plan::parse(text_of(data, size));
  } catch (const straggler_error& e) {
    fuzz_check(std::string(e.what()).find("straggler") == 0, "an error that does not say what it is about");
    return;
  }
  for (auto& item : plan.items()) {
    fuzz_check(item.worker >= 0, "a negative worker");
    fuzz_check(std::isfinite(item.factor) && item.factor > 0 && item.factor <= 1e6, "a factor out of range");
    fuzz_check(std::isfinite(item.extra_s) && item.extra_s >= 0 && item.extra_s <= 1e6, "a delay out of range");
    fuzz_check(item.from_s >= 0 && (item.to_s < 0 || item.to_s > item.from_s), "a window out of order");
    auto f = plan.factor(item.worker, item.from_s);
    fuzz_check(std::isfinite(f) && f > 0, "a combined factor that is not a positive number");
    fuzz_check(std::isfinite(plan.extra_s(item.worker, item.from_s)), "a combined delay that is not finite");
  }
  try {
    plan.check_workers(4);
  } catch (const straggler_error&) {
  }
}

std::vector<std::string> straggler_seeds() {
  return {"3:x4", "1:x2;3:x3", "0:x3@10-20;2:+50ms", "1:+200us", "2:x0.5@0-1.5;2:+1s", ""};
}

// -- zipline CSV --------------------------------------------------------------------

bool same(const zipline_result& a, const zipline_result& b) {
  return a.stops == b.stops && a.span == b.span && a.barrier == b.barrier;
}

void run_zipline_csv(const uint8_t* data, size_t size) {
  std::istringstream in(text_of(data, size));
  zipline_matrix m;
  try {
    m = parse_zipline_csv(in, "fuzz.csv");
  } catch (const input_error& e) {
    fuzz_check(std::string(e.what()).find("fuzz.csv:") == 0, "an error that does not name the file");
    return;
  }
  fuzz_check(m.n >= 1 && m.R >= 1 && m.t.size() == m.n * m.R, "a matrix of the wrong shape");
  try {
    check_zipline_matrix(m);
  } catch (const std::invalid_argument& e) {
    fuzz_check(false, std::string("the reader accepted a matrix zipline refuses: ") + e.what());
  }
  if (m.n * m.R > 4096)
    return;
  // Differential: the three variants must agree, and with the exhaustive search when it is small.
  auto plain = zipline(m, zipline_variant::plain);
  fuzz_check(same(plain, zipline(m, zipline_variant::opt)), "zipline-opt differs from zipline");
  fuzz_check(same(plain, zipline(m, zipline_variant::opt_bs)), "zipline-opt-bs differs from zipline");
  if (std::pow(static_cast<double>(m.R), static_cast<double>(m.n)) <= 4096)
    fuzz_check(same(plain, zipline_brute_force(m)), "zipline differs from the exhaustive search");
}

std::vector<std::string> zipline_seeds() {
  return {"0.1,0.5,0.9\n0.2,0.4,1.1\n0.0,0.7,1.4\n", "1,2\n1,2\n", "3\n", "0,1,2,3\n0.5,1.5,2.5,3.5\n",
          "1e300,1e300\n-1e300,1e300\n"};
}

// -- sync-switch schedule ---------------------------------------------------------------

void run_schedule(const uint8_t* data, size_t size) {
  protocol_options o;
  o.set("schedule", text_of(data, size));
  try {
    auto p = make_protocol("sync-switch", o);
    fuzz_check(p != nullptr, "no protocol and no error");
  } catch (const std::invalid_argument& e) {
    fuzz_check(std::string(e.what()).find("sync-switch") != std::string::npos || e.what()[0] != '\0',
               "an empty error");
  }
}

std::vector<std::string> schedule_seeds() {
  return {"bsp:0.25,asp:0.75", "bsp:1", "bsp:0.2,r2sp:0.3,wbsp-overlap:0.5", "ssp:0.5,asp:0.5"};
}

// -- checkpoint file ----------------------------------------------------------------------

const checkpoint_header& fuzz_header() {
  static const checkpoint_header h{checkpoint_format, "softmax", 4, "bsp"};
  return h;
}

// The first byte chooses: 0, the bytes are a whole file; 1, they are the
// payload, put behind a valid header (so the CRC passes and the payload's
// decoder is what is fuzzed).
void run_checkpoint(const uint8_t* data, size_t size) {
  if (size == 0)
    return;
  auto rest = text_of(data + 1, size - 1);
  auto bytes = (data[0] & 1) ? checkpoint_file_header(fuzz_header(), rest) + rest : rest;
  try {
    auto c = parse_checkpoint(bytes, "fuzz.bin", fuzz_header());
    fuzz_check(c.state.ps.w.size() == 4 && c.state.ps.velocity.size() == 4, "a model of the wrong size read");
  } catch (const config_error& e) {
    fuzz_check(std::string(e.what()).find("checkpoint 'fuzz.bin': ") == 0, "an error that does not name the file");
  }
}

std::vector<std::string> checkpoint_seeds() {
  checkpoint c;
  c.head = fuzz_header();
  auto& s = c.state;
  s.time_ns = 1500000000;
  s.samples = 640;
  s.settings = {{"lr", "0.1"}, {"seed", "1"}};
  s.ps.w = {0.5f, -1, 2, 0.25f};
  s.ps.velocity = {0, 0.1f, 0, 0};
  s.ps.visible = s.ps.w;
  s.ps.version = 10;
  s.ps.in_transit.push_back({});
  s.ps.in_transit.back().values = s.ps.w;
  s.workers.resize(2);
  for (int i = 0; i < 2; ++i) {
    s.workers[i].id = i;
    s.workers[i].model = s.ps.w;
    s.workers[i].grad = {1, 2, 3, 4};
    s.workers[i].rng_state = "12345";
  }
  s.timers.push_back({saved_timer::coordinator, 2000000000, caf::atom("sp_eval"), false, 0});
  s.trace.push_back({"compute", 0, 0, 1000, 1, 0, 0, ""});
  auto dir = std::filesystem::temp_directory_path() / ("syncpoint-fuzz-seeds-" + std::to_string(::getpid()));
  auto file = write_checkpoint(dir.string(), c);
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::filesystem::remove_all(dir);
  auto whole = ss.str();
  auto header = checkpoint_file_header(c.head, "").size();
  return {std::string(1, '\0') + whole, std::string(1, '\1') + whole.substr(header)};
}

// -- messages that cross nodes ---------------------------------------------------------------

// An actor system that knows every message type a node may receive, as the
// middleman decodes them (without a network: a remote actor handle in a
// message is refused, as by a node that has no route to it).
caf::actor_system& message_system() {
  struct holder {
    caf::actor_system_config cfg;
    std::unique_ptr<caf::actor_system> sys;
    holder() {
      cluster::register_cluster_messages(cfg);
      cfg.set("scheduler.max-threads", 1);
      cfg.set("logger.verbosity", caf::atom("quiet"));
      sys = std::make_unique<caf::actor_system>(cfg);
    }
  };
  // Never destroyed: CAF 0.17.6's ~actor_system run from the exit handlers
  // reads memory it has just freed (seen under valgrind), so the system lives
  // as long as the process.
  static auto* h = new holder;
  return *h->sys;
}

// A handle of type H to a live local actor: encoded as its id and this node's
// id, as a node sends its own actors (a remote one needs the middleman's proxies).
struct idle_actor : caf::event_based_actor {
  using caf::event_based_actor::event_based_actor;
  caf::behavior make_behavior() override { return {[](int32_t) {}}; }
};

template <class H>
H local_handle() {
  // (A class, not a lambda: CAF 0.17's spawn of an argument-less function binds
  // a reference to a null tuple, which UBSan reports.)
  static auto* a = new caf::actor(message_system().spawn<idle_actor>());
  return caf::actor_cast<H>(*a);  // (never destroyed, as the system)
}

caf::error decode(const char* data, size_t size, caf::message& out) {
  caf::binary_deserializer source{message_system(), data, size};
  return source(out);
}

std::vector<char> encode(const caf::message& m) {
  std::vector<char> buf;
  caf::binary_serializer sink{message_system(), buf};
  auto err = sink(const_cast<caf::message&>(m));
  fuzz_check(!err, "a message cannot be encoded: " + message_system().render(err));
  return buf;
}

// CAF's own float types (a bare double, std::vector<float>) are packed by CAF,
// which never returns on an infinity. Our messages between nodes carry floats
// only through exact() and float_block; these types travel within a process.
bool carries_bare_nonfinite(const caf::message& m) {
  auto finite = [](auto x) { return std::isfinite(x); };
  for (size_t i = 0; i < m.size(); ++i) {
    if (m.match_element<double>(i) && !finite(m.get_as<double>(i)))
      return true;
    if (m.match_element<float>(i) && !finite(m.get_as<float>(i)))
      return true;
    if (m.match_element<std::vector<float>>(i))
      for (auto x : m.get_as<std::vector<float>>(i))
        if (!finite(x))
          return true;
  }
  return false;
}

void run_messages(const uint8_t* data, size_t size) {
  caf::message m;
  if (decode(reinterpret_cast<const char*>(data), size, m))
    return;  // refused: what the middleman does with it too
  if (carries_bare_nonfinite(m))
    return;  // CAF would hang encoding it; no node sends one (include/syncpoint/float_block.hpp: exact)
  // What decodes must encode, and decode again to the same thing.
  auto once = encode(m);
  caf::message again;
  fuzz_check(!decode(once.data(), once.size(), again), "a message's own encoding does not decode");
  fuzz_check(encode(again) == once, "a message changes when encoded and decoded again");
}

// A seed: the message as a node sends it; it must decode (or the seed is no start).
template <class... Ts>
std::string encoded(Ts&&... xs) {
  auto buf = encode(caf::make_message(std::forward<Ts>(xs)...));
  caf::message back;
  auto err = decode(buf.data(), buf.size(), back);
  fuzz_check(!err, "a seed does not decode: " + message_system().render(err));
  return std::string(buf.begin(), buf.end());
}

std::vector<std::string> message_seeds() {
  using namespace cluster;
  gradient_push push{2, 7, 6, 64, {0.5f, -0.25f, 1e-3f}, 12, {0, 2}};
  push_info info{2, 7, 64, 9, 123456};
  local_work work;
  work.steps = 10;
  work.inner.type = inner_kind::adamw;
  work.push = push_kind::outer;
  proceed go{false, true, 9, 32, 123456, work};
  weights w{9, shared_floats(std::vector<float>{1, 2, 3})};
  snapshot snap{9, 1000, 640, false, shared_floats(std::vector<float>{1, 2, 3})};
  trace_event ev{"compute", 1, 0, 1000, 3, 2, 0.5, "note"};
  eval_result eval{9, 1000, 640, true, 0.85};
  worker_loss loss{3, 5000, "node b lost"};
  progress_report progress{"[bsp] 50%", 640, 0.5, 0.8, true};
  run_outcome outcome{{ev}, {loss}, w, 0.5, 7, "target", {64, 0, 128}};
  job_config job;
  job.protocol = "ssp";
  job.workers = 4;
  node_hello hello{"b", 2, "fingerprint", "token", "secret"};
  worker_spec spec;
  spec.plan.cfg = job;
  spec.id = 1;
  spec.ps = ps_group{{local_handle<ps_actor>(), local_handle<ps_actor>()}, {0, 1, 2}};
  spec.tracer = local_handle<tracer_actor>();
  node_status node{"b", "127.0.0.1:4242", 2, 1, 1, 2};
  job_status js{1, "bsp", 4, 0.5, 0.8, job_stage::running};
  cluster_status cs{{node}, {js}};
  job_result result{job_stage::done, "", 1.5, outcome, "", -1};
  saved_worker sw;
  sw.model = {1, 2};
  saved_ps sp;
  sp.w = {1, 2};
  saved_coordinator sc;
  return {encoded(push_atom::value, push),
          encoded(pushed_atom::value, info),
          encoded(go),
          encoded(w),
          encoded(snap),
          encoded(trace_atom::value, ev),
          encoded(std::vector<trace_event>{ev, ev}),
          encoded(eval),
          encoded(std::vector<worker_loss>{loss}),
          encoded(progress),
          encoded(outcome),
          encoded(job_counts{192, 12, {128, 64}, 2, 3000}),
          encoded(job),
          encoded(register_atom::value, hello, local_handle<node_actor>()),
          encoded(register_atom::value, hello, node_actor{}),  // a null handle
          encoded(spawn_atom::value, spec),
          encoded(cluster_status{cs}),
          encoded(result),
          encoded(sw),
          encoded(sp),
          encoded(sc),
          encoded(mode_atom::value, uint8_t{1}),
          encoded(pull_atom::value, uint64_t{9}),
          encoded(std::vector<std::string>{"a", "b"}),
          encoded(std::vector<float>{1, 2, 3}),
          encoded(loss),
          encoded(node),
          encoded(js),
          encoded(std::vector<worker_actor>{local_handle<worker_actor>(), worker_actor{}}),
          encoded(local_handle<worker_actor>()),
          encoded(submit_atom::value, job, local_handle<client_actor>(), credential{"secret"}, follower_actor{}),
          encoded(mark_atom::value, uint64_t{3}, credential{"stop token"}, std::string("note"), 0.5),
          encoded(uint64_t{3}, credential{"stop token"}),
          encoded(uint64_t{3}, credential{"stop token"}, true),  // a journaling head's submit reply
          encoded(std::string("node-a"), false),                  // and its register reply
          encoded(reattach_atom::value, uint64_t{3}, credential{"stop token"}, local_handle<client_actor>()),
          encoded(stop_atom::value, uint64_t{3}, credential{"stop token"}, std::string("interrupted")),
          encoded(local_handle<evaluator_actor>(), local_handle<driver_actor>(), local_handle<coordinator_actor>(),
                  local_handle<job_actor>(), local_handle<head_actor>())};
}

}  // namespace

const std::vector<target>& targets() {
  static const std::vector<target> all{
    {"straggler", run_straggler, straggler_seeds},
    {"zipline-csv", run_zipline_csv, zipline_seeds},
    {"schedule", run_schedule, schedule_seeds},
    {"checkpoint", run_checkpoint, checkpoint_seeds},
    {"messages", run_messages, message_seeds},
  };
  return all;
}

const target& find_target(const std::string& name) {
  for (auto& t : targets())
    if (t.name == name)
      return t;
  throw std::invalid_argument("no fuzz target '" + name + "'");
}

}  // namespace syncpoint::fuzz
