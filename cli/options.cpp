#include "cli/options.hpp"

#include "core/job_schema.hpp"
#include "core/link_model.hpp"
#include "core/text.hpp"
#include "runtime/job/job_parts.hpp"
#include "models/data_paths.hpp"
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>
#include <syncpoint/worker_loop.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace syncpoint::cli {

namespace {

// The registered models a user may name (not simulate's own timing-only).
std::string model_list() {
  std::string out;
  for (auto& name : model_names())
    if (name != "timing-only")
      out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::string loop_list() {
  std::string out;
  for (auto& name : loop_names())
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

namespace {

const char* command_name(options::command c) {
  switch (c) {
    case options::command::train:
      return "train";
    case options::command::compare:
      return "compare";
    case options::command::submit:
      return "submit";
    case options::command::tune:
      return "tune-switch";
    case options::command::simulate:
      return "simulate";
  }
  return "train";
}

uint8_t command_bit(options::command c) {
  switch (c) {
    case options::command::train:
      return on_train;
    case options::command::compare:
      return on_compare;
    case options::command::submit:
      return on_submit;
    case options::command::tune:
      return on_tune;
    case options::command::simulate:
      return on_simulate;
  }
  return on_train;
}

}  // namespace

options::options(command c) : table_(command_name(c)), command_(c) {
  auto& t = table_;
  bool compare = c == command::compare, sim = c == command::simulate, submit = c == command::submit;
  if (submit)
    cfg_.clock = clock_kind::real;  // a cluster runs on the real clock
  parsed_["clock"] = to_string(cfg_.clock);
  t.group("job");
  if (compare)
    t.add(protocol_list_, "protocols", "comma-separated protocols to compare (default bsp,asp,ssp)")
      .add(seeds_, "seeds", "run every protocol once per seed (e.g. 1,2,3); the tables and the page show mean and min–max")
      .add(tune_lr_, "tune-lr", "run each protocol at each of these learning rates (e.g. 0.02,0.05,0.1) and report it at its best")
      .add(run_to_cap, "run-to-cap", "the target does not stop a run; every run goes on to the time cap")
      .add(jobs, "jobs", "virtual clock: runs at once after the reference, each in its own process (default: the number of cores)");
  if (c == command::tune)
    t.add(tolerance, "tolerance", "accept a BSP share whose accuracy is within this of pure BSP (default 0.005)")
      .add(budget, "budget", "runs of the binary search after the reference run (default 5)");
  if (sim)
    t.add(iterations, "iterations,k", "iterations per worker: the run stops after workers x K pushes' samples (default 100)");
  for (auto group : {"job", "protocol", "data", "optimizer"})
    add_job_fields(group);
  if (submit)
    add_cluster_access(t.group("cluster").add(head, "head", "HOST:PORT of the head to submit to (required)"), token,
                       token_file, tls, tls_paths)
      .add(head_wait, "head-wait", "seconds to wait for a lost head that keeps a journal (head --state) to come "
                                   "back, then follow the job again (default 120; 0: fail at once)");
  add_job_fields("cluster");
  if (submit)
    t.actor_system(actor_system);
  add_job_fields("output");
  if (c == command::train || submit)
    t.add(save_model, "save-model", "write the final model to FILE (cereal portable binary)");
  if (c == command::tune)
    t.add(policy_out, "policy-out", "where to write the policy (default sync-switch-policy.json)");
}

// The table's fields of GROUP that this command offers, each with its default
// (job_config{}'s, or this command's: submit's clock is real).
void options::add_job_fields(const std::string& group) {
  table_.group(group);
  for (auto& f : job_fields()) {
    if (f.group != group || !(f.commands & command_bit(command_)) || f.binding == cli_binding::by_other ||
        f.binding == cli_binding::none)
      continue;
    if (f.key == "protocol_opts")
      add_protocol_options();
    auto names = f.option + (f.short_name ? std::string(",") + f.short_name : "");
    auto help = command_ == command::simulate && !f.help_simulate.empty() ? f.help_simulate
                : command_ == command::submit && !f.help_submit.empty() ? f.help_submit
                                                                          : f.help;
    if (f.key == "model" || f.key == "loop")
      help = f.option + ": " + (f.key == "model" ? model_list() : loop_list()) + "; " + help;
    if (f.key == "data_dir")
      help += std::string(" (fashion-mnist's here: ") + default_fashion_mnist_dir + "; text's: " + default_text_path + ")";
    if (auto d = default_text(f, cfg_); !d.empty())
      help += " (default " + d + ")";
    if (f.binding == cli_binding::parsed)
      table_.add(parsed_[f.option], names, help);
    else
      std::visit(
        [&](auto m) {
          using T = typename decltype(m)::type;
          if constexpr (std::is_arithmetic_v<T> || std::is_same_v<T, std::string>)
            table_.add(m.of(cfg_), names, help);
          else
            throw std::logic_error("job field '" + f.key + "' takes its option's value but the CLI must parse it");
        },
        f.member);
    if (!f.choices.empty())
      table_.expects(f.option, or_list(f.choices));
  }
}

// Every option a registered protocol declares, typed as declared.
void options::add_protocol_options() {
  auto& t = table_;
  for (auto& [name, decl] : all_protocol_options()) {
    auto& spec = decl.first;
    std::string who;
    for (auto& p : decl.second)
      who += (who.empty() ? "" : ",") + p;
    auto flag = spec.short_name.empty() ? name : name + "," + spec.short_name;
    auto help = who + ": " + spec.help + " (default " + spec.default_value + ")";
    switch (spec.type) {
      case option_spec::kind::integer:
        t.add(int_opts_[name], flag, help);
        break;
      case option_spec::kind::real:
        t.add(real_opts_[name], flag, help);
        break;
      case option_spec::kind::text:
        t.add(text_opts_[name], flag, help);
        break;
    }
    if (!spec.choices.empty())
      t.expects(name, or_list(spec.choices));
    auto on_off = spec.choices;
    std::sort(on_off.begin(), on_off.end());
    if (on_off == std::vector<std::string>{"off", "on"})
      t.bare_means(name, "on");  // a switch: "--online" is "--online=on"
  }
}

namespace {

// --fail-worker W@K.
std::string parse_fail_worker(const std::string& text, job_config& cfg) {
  if (text.empty())
    return {};
  auto at = text.find('@');
  char* e1 = nullptr;
  char* e2 = nullptr;
  long w = at == std::string::npos ? -1 : std::strtol(text.c_str(), &e1, 10);
  long k = at == std::string::npos ? -1 : std::strtol(text.c_str() + at + 1, &e2, 10);
  if (at == std::string::npos || at == 0 || e1 != text.c_str() + at || *e2 != '\0' || w < 0 || k < 1)
    return "invalid value in '--fail-worker=" + text + "' (expected W@K, e.g. 2@10)";
  cfg.internals.fail_worker = static_cast<int>(w);
  cfg.internals.fail_at_iter = static_cast<uint64_t>(k);
  return {};
}

// --iter-cost MS or measure.
std::string parse_iter_cost(const std::string& text, job_config& cfg) {
  if (text == "measure") {
    cfg.internals.measure_iter_cost = true;
  } else if (!text.empty()) {
    char* end = nullptr;
    cfg.iter_cost_ms = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0')
      return "invalid value in '--iter-cost=" + text + "' (expected ms per iteration or 'measure')";
  }
  return {};
}

// --ps-memory 2GB and --ps-bandwidth 1Gbit/s.
std::string parse_sizes(const std::string& memory, const std::string& bandwidth, job_config& cfg) {
  if (!memory.empty()) {
    auto bytes = parse_bandwidth(memory);  // the same units, without "/s"
    if (!bytes || memory.find('/') != std::string::npos)
      return "invalid value in '--ps-memory=" + memory + "' (expected a size such as 2GB, 512MiB or 1e9 bytes)";
    cfg.ps_memory = *bytes;
  }
  if (!bandwidth.empty()) {
    auto bw = parse_bandwidth(bandwidth);
    if (!bw)
      return "invalid value in '--ps-bandwidth=" + bandwidth +
             "' (expected a rate such as 25MB/s, 1Gbit/s, 100Mbps or 400e6 bytes/s)";
    cfg.ps_bandwidth = *bw;
  }
  return {};
}

// --lr-milestones 30,60.
std::string parse_milestones(const std::string& text, job_config& cfg) {
  cfg.lr_milestones.clear();
  std::stringstream marks(text);
  for (std::string item; std::getline(marks, item, ',');) {
    char* end = nullptr;
    double epoch = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(epoch) || epoch <= 0)
      return "--lr-milestones: '" + item + "' is not a positive number of epochs (expected a list like 30,60)";
    cfg.lr_milestones.push_back(epoch);
  }
  return {};
}

// compare's --tune-lr 0.02,0.05 (each rate once).
std::string parse_rates(const std::string& text, std::vector<double>& rates) {
  rates.clear();
  std::stringstream lrs(text);
  for (std::string item; std::getline(lrs, item, ',');) {
    char* end = nullptr;
    double lr = std::strtod(item.c_str(), &end);
    if (item.empty() || *end != '\0' || !std::isfinite(lr) || lr <= 0)
      return "--tune-lr: '" + item + "' is not a positive learning rate (expected a list like 0.02,0.05,0.1)";
    if (std::find(rates.begin(), rates.end(), lr) == rates.end())
      rates.push_back(lr);
  }
  return {};
}

// compare's --seeds 1,2,3.
std::string parse_seeds(const std::string& text, std::vector<uint64_t>& seeds) {
  seeds.clear();
  std::stringstream seed_list(text);
  for (std::string item; std::getline(seed_list, item, ',');) {
    if (item.empty())
      continue;
    char* end = nullptr;
    errno = 0;
    unsigned long long seed = std::strtoull(item.c_str(), &end, 10);
    if (*end != '\0' || item[0] == '-' || errno == ERANGE)
      return "--seeds: '" + item + "' is not a seed (expected a list of whole numbers like 1,2,3)";
    if (std::find(seeds.begin(), seeds.end(), seed) != seeds.end())
      return "--seeds names " + item + " twice";
    seeds.push_back(seed);
  }
  if (!text.empty() && seeds.empty())
    return "--seeds names no seed (expected a list like 1,2,3)";
  return {};
}

}  // namespace

std::string options::parse_args(const std::vector<std::string>& args) {
  if (auto err = table_.parse_args(args); !err.empty() || table_.help_printed())
    return err;
  auto& clock = parsed_["clock"];
  if (clock != "real" && clock != "virtual")
    return "invalid value in '--clock=" + clock + "' (expected real or virtual)";
  cfg_.clock = clock == "real" ? clock_kind::real : clock_kind::virtual_time;
  for (auto err : {parse_fail_worker(parsed_["fail-worker"], cfg_), parse_iter_cost(parsed_["iter-cost"], cfg_),
                   parse_sizes(parsed_["ps-memory"], parsed_["ps-bandwidth"], cfg_), parse_protocol_options()})
    if (!err.empty())
      return err;
  protocols = split_protocols(protocol_list_);
  for (auto err : {parse_milestones(parsed_["lr-milestones"], cfg_), parse_rates(tune_lr_, tune_lrs),
                   parse_seeds(seeds_, seeds)})
    if (!err.empty())
      return err;
  if (jobs < 0)
    return "--jobs: " + std::to_string(jobs) + " is not a number of processes (expected 1 or more; 0: the cores)";
  return {};
}

// --param key=value,... and each protocol's own options, checked; then the
// protocol's job defaults for what was not given.
std::string options::parse_protocol_options() {
  auto& params = parsed_["param"];
  std::stringstream items(params);
  for (std::string kv; std::getline(items, kv, ',');) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      return "invalid value in '--param=" + params + "': '" + kv + "' is not key=value";
    cfg_.protocol_opts.set(kv.substr(0, eq), kv.substr(eq + 1));
  }
  for (auto& [name, v] : int_opts_)
    if (table_.given(name))
      cfg_.protocol_opts.set(name, static_cast<long long>(v));
  for (auto& [name, v] : real_opts_)
    if (table_.given(name))
      cfg_.protocol_opts.set(name, v);
  for (auto& [name, v] : text_opts_)
    if (table_.given(name))
      cfg_.protocol_opts.set(name, v);
  try {
    check_protocol_options(cfg_.protocol_opts);
    apply_job_defaults(cfg_, [this](const std::string& name) { return table_.given(name); });
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

job_config options::job() const {
  return cfg_;
}

option_table& add_cluster_access(option_table& table, std::string& token, std::string& token_file, bool& tls,
                                 cluster::tls_files& files) {
  return table.group("cluster")
    .add(token, "token", "the cluster's shared secret: the head refuses nodes, jobs and status requests without it")
    .add(token_file, "token-file", "read the token from FILE (its first line): keeps it out of `ps` and shell history")
    .add(tls, "tls", "TLS on every connection, certificates checked both ways (needs --cert, --key, --ca)")
    .add(files.cert, "cert", "this process's certificate (PEM), signed by the cluster's CA")
    .add(files.key, "key", "the private key of --cert (PEM)")
    .add(files.ca, "ca-cert", "(or --ca) the cluster's CA certificate (PEM): peers must present a certificate it signed")
    .alias("ca-cert", "ca");
}

std::string run_label(const job_config& cfg) {
  return protocol_label(cfg.protocol, cfg.protocol_opts) +
         (cfg.compress.empty() || cfg.compress == "none" ? "" : " " + cfg.compress);
}

std::vector<std::string> split_protocols(const std::string& list) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  for (char c : list) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ',' && depth == 0) {
      if (!item.empty())
        out.push_back(item);
      item.clear();
    } else {
      item += c;
    }
  }
  if (!item.empty())
    out.push_back(item);
  return out;
}

std::string check_options_fit(const job_config& cfg, const std::vector<std::string>& protocols) {
  auto all = all_protocol_options();
  for (auto& [name, value] : cfg.protocol_opts.values()) {
    bool used = false;
    for (auto& p : protocols)
      for (auto& o : protocol_option_specs(p))
        used = used || o.name == name;
    if (used)
      continue;
    std::string who, list;
    if (auto i = all.find(name); i != all.end())
      for (auto& p : i->second.second)
        who += (who.empty() ? "" : ", ") + p;
    for (auto& p : protocols)
      list += (list.empty() ? "" : ", ") + p;
    return "--" + name + " is an option of " + (who.empty() ? std::string("no protocol") : who) +
           ", not of " + list;
  }
  return {};
}

std::string command_line(const std::string& command, const std::vector<std::string>& args) {
  std::string out = "syncpoint " + command;
  bool secret_next = false;
  for (auto a : args) {
    // The cluster's token never goes into run.json or a report.
    if (secret_next)
      a = "***";
    secret_next = a == "--token";
    if (a.rfind("--token=", 0) == 0)
      a = "--token=***";
    bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                   "0123456789-_=.,:/+@%") == std::string::npos;
    if (plain) {
      out += " " + a;
      continue;
    }
    std::string q = "'";
    for (char c : a)
      q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += " " + q + "'";
  }
  return out;
}

void check_save_model(const options& opts) {
  if (opts.save_model.empty())
    return;
  auto cfg = opts.job();
  auto data = load_job_data(cfg);
  if (!make_model(cfg.model, input_of(data.train))->tables().empty())
    throw config_error("--save-model writes the dense weights, and model '" + cfg.model +
                       "' keeps sparse tables on the PS: run it without --save-model (docs/sparse.md, \"Status\")");
}

}  // namespace syncpoint::cli
