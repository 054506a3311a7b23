#include "runtime/records/run_files.hpp"

#include <syncpoint/model.hpp>
#include <syncpoint/job_config.hpp>
#include "core/job_schema.hpp"
#include "core/build_info.hpp"
#include "core/json.hpp"
#include "core/optimizer.hpp"
#include "core/rapidjson.hpp"

#include <caf/config.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace syncpoint {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw config_error("cannot read '" + path + "' (missing or unreadable)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

using rapidjson::Value;

// Reads typed fields of one JSON object and names the file and key on error.
class reader {
 public:
  reader(const Value& v, std::string where) : v_(v), where_(std::move(where)) {}

  const Value* find(const char* key) const {
    auto it = v_.FindMember(key);
    return it == v_.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
  }
  double number(const char* key, double absent = 0) const {
    auto* x = find(key);
    if (!x)
      return absent;
    if (!x->IsNumber())
      fail(key, "a number");
    return x->GetDouble();
  }
  uint64_t count(const char* key) const {
    auto* x = find(key);
    if (!x)
      return 0;
    if (!x->IsUint64())
      fail(key, "a count (an integer >= 0)");
    return x->GetUint64();
  }
  std::string text(const char* key) const {
    auto* x = find(key);
    if (!x)
      return "";
    if (!x->IsString())
      fail(key, "a string");
    return x->GetString();
  }
  const Value& array(const char* key) const {
    static const Value empty(rapidjson::kArrayType);
    auto* x = find(key);
    if (!x)
      return empty;
    if (!x->IsArray())
      fail(key, "an array");
    return *x;
  }
  reader item(const Value& x, const char* key, size_t i) const {
    if (!x.IsObject())
      fail(key, "an array of objects");
    return {x, where_ + ", " + key + "[" + std::to_string(i) + "]"};
  }
  [[noreturn]] void fail(const char* key, const char* want) const {
    throw config_error(where_ + ": '" + key + "' must be " + want);
  }

 private:
  const Value& v_;
  std::string where_;
};

rapidjson::Document parse_object(const std::string& text, const std::string& source) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseNoFlags>(text.c_str(), text.size());  // strict JSON: no NaN (cereal sets other defaults)
  if (d.HasParseError())
    throw config_error(source + ": not JSON (" + rapidjson::GetParseError_En(d.GetParseError()) +
                       " at byte " + std::to_string(d.GetErrorOffset()) + ")");
  if (!d.IsObject())
    throw config_error(source + ": not a JSON object");
  return d;
}

nanos to_nanos(double s) {
  return static_cast<nanos>(std::llround(s * 1e9));
}

std::vector<trace_event> trace_from_jsonl(const std::string& text, const std::string& source) {
  std::vector<trace_event> out;
  std::istringstream in(text);
  std::string line;
  for (size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty())
      continue;
    auto where = source + " line " + std::to_string(n);
    auto d = parse_object(line, where);
    reader r(d, where);
    trace_event ev;
    ev.kind = r.text("kind");
    if (ev.kind.empty())
      throw config_error(where + ": no 'kind'");
    ev.worker = static_cast<worker_id>(r.number("worker", -1));
    double t0 = r.number("t0"), t1 = r.number("t1", t0);
    if (!(t0 >= 0 && t0 <= t1 && t1 <= 1e9))  // also refuses NaN
      throw config_error(where + ": times must satisfy 0 <= t0 <= t1 <= 1e9 s");
    ev.t0 = to_nanos(t0);
    ev.t1 = to_nanos(t1);
    ev.iter = r.count("iter");
    ev.version = r.count("version");
    ev.value = r.number("value", std::nan(""));
    ev.note = r.text("note");
    out.push_back(std::move(ev));
  }
  return out;
}

std::map<std::string, std::string> strings(const reader& r, const char* key) {
  std::map<std::string, std::string> out;
  if (auto* x = r.find(key)) {
    if (!x->IsObject())
      r.fail(key, "an object");
    for (auto& m : x->GetObject())
      if (m.value.IsString())
        out[m.name.GetString()] = m.value.GetString();
  }
  return out;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown";
}

std::string memory() {
  auto pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || size <= 0)
    return "unknown";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(pages) * static_cast<double>(size) / (1 << 30));
  return buf;
}

}  // namespace

run_summary summary_from_json(const std::string& text, const std::string& source) {
  auto d = parse_object(text, source);
  reader r(d, source);
  run_summary s;
  s.protocol = r.text("protocol");
  if (s.protocol.empty())
    throw config_error(source + ": no 'protocol' (not a syncpoint summary.json)");
  s.model = r.text("model");
  s.workers = static_cast<int>(r.count("workers"));
  s.clock = r.text("clock");
  s.seed = r.count("seed");
  s.straggler = r.text("straggler");
  s.lr = r.number("lr");
  s.momentum = r.number("momentum");
  s.momentum_rule = r.text("momentum_rule");
  s.iter_cost_ms = r.number("iter_cost_ms");
  s.iter_cost_source = r.text("iter_cost_source");
  s.run_time_s = r.number("run_time_s");
  s.samples = r.count("samples");
  s.samples_per_s = r.number("samples_per_s");
  s.final_accuracy = r.number("final_accuracy", -1);  // (null: the job's loop measures no accuracy)
  if (auto* m = r.find("final_metrics")) {
    if (!m->IsObject())
      r.fail("final_metrics", "an object of numbers");
    for (auto& x : m->GetObject()) {
      if (!x.value.IsNumber())
        r.fail("final_metrics", "an object of numbers");
      s.final_metrics.push_back({x.name.GetString(), x.value.GetDouble()});
    }
  }
  s.target_accuracy = r.number("target_accuracy");
  s.time_to_target_s = r.number("time_to_target_s", -1);
  s.mean_compute_ratio = r.number("mean_compute_ratio");
  s.staleness_mean = r.number("staleness_mean");
  s.staleness_max = r.count("staleness_max");
  s.barriers = r.count("barriers");
  s.rejected = r.count("rejected_pushes");
  s.lost = r.count("lost_workers");
  s.link_busy_s = r.number("link_busy_s", -1);
  s.compress = r.text("compress");
  if (s.compress.empty())
    s.compress = "none";  // (a summary from before --compress)
  s.pushed_bytes = r.count("pushed_bytes");
  s.pulled_bytes = r.count("pulled_bytes");
  s.resumed_from = r.text("resumed_from");
  s.resumed_at_s = r.number("resumed_at_s", -1);
  s.link_utilization = r.number("link_utilization", -1);
  auto& phases = r.array("phases");
  for (rapidjson::SizeType i = 0; i < phases.Size(); ++i) {
    auto p = r.item(phases[i], "phases", i);
    s.phases.push_back({p.text("protocol"), p.text("reason"), p.number("start_s"), p.number("time_s"),
                        p.count("samples"), p.number("accuracy_at_end", -1)});
  }
  // Losses and joins: a worker, a time and words (why, or where).
  auto worker_points = [&](const char* key, const char* words, std::vector<loss_point>& out) {
    auto& a = r.array(key);
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      auto l = r.item(a[i], key, i);
      out.push_back({static_cast<int>(l.number("worker")), l.number("t_s"), l.text(words)});
    }
  };
  worker_points("losses", "reason", s.losses);
  worker_points("joins", "where", s.joins);
  auto& workers = r.array("per_worker");
  for (rapidjson::SizeType i = 0; i < workers.Size(); ++i) {
    auto w = r.item(workers[i], "per_worker", i);
    s.per_worker.push_back({static_cast<int>(w.number("id")), w.count("iterations"), w.number("compute_s"),
                            w.number("comm_s"), w.number("wait_s"), w.number("compute_ratio")});
  }
  auto& evals = r.array("evals");
  for (rapidjson::SizeType i = 0; i < evals.Size(); ++i) {
    auto e = r.item(evals[i], "evals", i);
    s.evals.push_back({e.number("t_s"), e.count("samples"), e.number("accuracy")});
  }
  return s;
}

run_summary load_summary(const std::string& dir) {
  return summary_from_json(read_text(dir + "/summary.json"), dir + "/summary.json");
}

run_record load_run(const std::string& dir) {
  run_record r;
  r.dir = std::filesystem::path(dir).lexically_normal().string();
  if (r.dir.size() > 1 && r.dir.back() == '/')
    r.dir.pop_back();
  r.summary = load_summary(dir);
  r.trace = trace_from_jsonl(read_text(dir + "/trace.jsonl"), dir + "/trace.jsonl");
  auto source = dir + "/run.json";
  if (std::filesystem::exists(source)) {
    auto d = parse_object(read_text(source), source);
    reader p(d, source);
    r.provenance = {p.text("label"), p.text("command"), p.text("stopped_by"), p.text("rule"),
                    strings(p, "build"), strings(p, "machine"), strings(p, "settings"),
                    strings(p, "options")};
  }
  if (r.provenance.label.empty())
    r.provenance.label = r.summary.protocol;
  return r;
}

void write_run_list(const std::string& dir, const std::vector<std::string>& names) {
  auto file = dir + "/runs.json";
  std::ofstream out(file, std::ios::binary);
  out << json::object().raw("runs", json::array(names, [](auto& n) { return json::str(n); })).done() << "\n";
  if (!out)
    throw config_error("cannot write '" + file + "'");
}

std::vector<std::string> read_run_list(const std::string& dir) {
  auto file = dir + "/runs.json";
  rapidjson::Document d;
  d.Parse<rapidjson::kParseNoFlags>(read_text(file).c_str());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("runs") || !d["runs"].IsArray())
    throw config_error(file + ": not a list of runs ({\"runs\": [\"name\", ...]})");
  std::vector<std::string> names;
  for (auto& v : d["runs"].GetArray()) {
    if (!v.IsString())
      throw config_error(file + ": every run must be a folder name");
    names.push_back(v.GetString());
  }
  return names;
}

void write_run(const std::string& dir, const run_result& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw config_error("cannot create output directory '" + dir + "': " + ec.message());
  std::ofstream trace(dir + "/trace.jsonl", std::ios::binary);
  for (auto& ev : r.trace)
    trace << to_json(ev) << '\n';
  std::ofstream summary(dir + "/summary.json", std::ios::binary);
  summary << to_json(r.summary) << '\n';
  if (!trace || !summary)
    throw config_error("cannot write to output directory '" + dir + "'");
}

run_provenance current_provenance(const std::string& command, const job_config& job) {
  run_provenance p;
  p.command = command;
  auto limit = [](auto v) { return v > 0 ? json::num(static_cast<double>(v)) : std::string("none"); };
  p.settings = {{"dataset", job.dataset},
                {"batch", std::to_string(job.batch)},
                {"device", job.device},
                {"precision", job.precision},
                {"epochs", limit(job.epochs)},
                {"max time s", limit(job.max_time_s)},
                {"train limit", limit(job.train_limit)},
                {"test limit", limit(job.test_limit)},
                {"eval every (epochs)", json::num(job.eval_every)},
                {"weight decay", json::num(job.weight_decay)},
                {"optimizer", job.optimizer},
                {"lr schedule", describe_options(job)},
                {"clip norm", limit(job.clip_norm)},
                {"compress", job.compress},
                {"PS bandwidth B/s", limit(job.ps_bandwidth)},
                {"latency ms", json::num(job.latency_ms)},
                {"fail worker", job.internals.fail_worker < 0 ? std::string("none")
                                                    : std::to_string(job.internals.fail_worker) + "@" +
                                                        std::to_string(job.internals.fail_at_iter)}};
  if (!job.loss.empty())  // a loss of its own (--loss script:FILE.pt); cross-entropy otherwise
    p.settings["loss"] = job.loss;
  for (auto& f : job_fields())
    p.options[f.key] = field_text(job, f);
  p.build = {{"syncpoint", build_text()},
             {"caf", std::to_string(CAF_VERSION / 10000) + "." + std::to_string(CAF_VERSION / 100 % 100) +
                       "." + std::to_string(CAF_VERSION % 100)},
             {"libtorch", torch_version() + (torch_has_cuda() ? " (CUDA)" : " (CPU only)")},
             {"compiler", __VERSION__}};
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  p.machine = {{"host", host},
               {"cpu", cpu_model()},
               {"cores", std::to_string(std::thread::hardware_concurrency())},
               {"memory", memory()}};
  return p;
}

void write_provenance(const std::string& dir, const run_provenance& p) {
  auto map = [](const std::map<std::string, std::string>& m) {
    json::object o;
    for (auto& kv : m)
      o.add(kv.first, kv.second);
    return o.done();
  };
  std::ofstream out(dir + "/run.json", std::ios::binary);
  out << json::object()
           .add("label", p.label)
           .add("command", p.command)
           .add("stopped_by", p.stopped_by)
           .add("rule", p.rule)
           .raw("build", map(p.build))
           .raw("machine", map(p.machine))
           .raw("settings", map(p.settings))
           .raw("options", map(p.options))
           .done()
      << "\n";
  if (!out)
    throw config_error("cannot write '" + dir + "/run.json'");
}

}  // namespace syncpoint
