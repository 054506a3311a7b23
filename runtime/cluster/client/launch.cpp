#include "runtime/cluster/client/launch.hpp"

#include <syncpoint/job_config.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace syncpoint::cluster {

env_lookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    if (const char* v = std::getenv(name.c_str()))
      return std::string(v);
    return std::nullopt;
  };
}

namespace {

constexpr long max_ranks = 1 << 20;
constexpr size_t max_hosts = 1 << 20;

// `text` as a plain decimal integer (digits only, at most 9), or nothing.
std::optional<long> integer(const std::string& text) {
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stol(text);
}

// `text` as an integer in [lo, hi]; else config_error naming `name` and saying what it must be.
long number(const std::string& text, const std::string& name, long lo, long hi, const std::string& must) {
  auto v = integer(text);
  if (!v || *v < lo || *v > hi)
    throw config_error(name + "='" + text + "': must be " + must);
  return *v;
}

// A variable that must be set, as an integer in [lo, hi].
int required(const env_lookup& env, const std::string& name, long lo, long hi, const std::string& must,
             const std::string& why) {
  auto v = env(name);
  if (!v)
    throw config_error(name + " is not set (" + why + ")");
  return static_cast<int>(number(*v, name, lo, hi, must));
}

// An optional one (`absent` when not set).
int optional_number(const env_lookup& env, const std::string& name, long lo, long hi, const std::string& must,
                    int absent) {
  auto v = env(name);
  return v ? static_cast<int>(number(*v, name, lo, hi, must)) : absent;
}

// The variables one launcher sets for a process's place in the job.
struct rank_names {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;  // nullptr: the launcher has none
  const char* local_size;
};

// Rank, world, local rank and size, by one launcher's names, checked against each other.
void read_ranks(const env_lookup& env, const rank_names& n, launch_env& out) {
  std::string set_by = std::string("set by ") + n.launcher + " with " + n.rank;
  out.launcher = n.launcher;
  out.world = required(env, n.size, 1, max_ranks, "the number of ranks, an integer >= 1", set_by);
  out.rank = required(env, n.rank, 0, out.world - 1,
                      "a rank from 0 to " + std::string(n.size) + " - 1 = " + std::to_string(out.world - 1), "");
  if (n.local_size)
    out.local_size = optional_number(env, n.local_size, 1, out.world, "from 1 to " + std::string(n.size), 1);
  if (n.local_rank)
    out.local_rank = optional_number(env, n.local_rank, 0, out.local_size - 1,
                                     "a rank on this host, below " + std::string(n.local_size ? n.local_size : "1"), 0);
}

void read_slurm(const env_lookup& env, launch_env& out) {
  read_ranks(env, {"slurm", "SLURM_PROCID", "SLURM_NTASKS", nullptr, nullptr}, out);  // (its local rank: below)
  std::string source = "SLURM_JOB_NODELIST";
  auto list = env(source);
  if (!list)
    list = env(source = "SLURM_NODELIST");
  if (!list)
    throw config_error("SLURM_JOB_NODELIST is not set (Slurm sets it in an allocation: run under srun or sbatch)");
  out.hosts = expand_nodelist(*list, source);
  if (out.hosts.empty())
    throw config_error("SLURM_JOB_NODELIST='" + *list + "': names no host");
  out.head_host = out.hosts.front();
  out.node_index = optional_number(env, "SLURM_NODEID", 0, static_cast<long>(out.hosts.size()) - 1,
                                   "a node index below the " + std::to_string(out.hosts.size()) +
                                     " hosts of SLURM_JOB_NODELIST", -1);
  if (auto tasks = env("SLURM_TASKS_PER_NODE"); tasks && out.node_index >= 0) {
    auto per_node = tasks_per_node(*tasks);
    if (static_cast<size_t>(out.node_index) < per_node.size())
      out.local_size = per_node[static_cast<size_t>(out.node_index)];
  }
  out.local_rank = optional_number(env, "SLURM_LOCALID", 0, std::max(0, out.local_size - 1),
                                   "a task index on this node, below its " + std::to_string(out.local_size) +
                                     " tasks (SLURM_TASKS_PER_NODE)", 0);
  if (auto id = env("SLURM_JOB_ID"))
    out.job_id = *id + "." + env("SLURM_STEP_ID").value_or("0");
  out.cpus_per_task = optional_number(env, "SLURM_CPUS_PER_TASK", 1, 1 << 16, "a number of CPUs >= 1", 0);
}

// CUDA renumbers the devices it is shown from 0: CUDA_VISIBLE_DEVICES="2,3" is cuda:0 and cuda:1 here.
std::vector<int> visible_gpus(const env_lookup& env) {
  std::vector<int> out;
  if (auto v = env("CUDA_VISIBLE_DEVICES")) {
    if (v->empty() || *v == "-1" || *v == "NoDevFiles")
      return out;
    int n = 1 + static_cast<int>(std::count(v->begin(), v->end(), ','));
    for (int i = 0; i < n; ++i)
      out.push_back(i);
    return out;
  }
  int n = optional_number(env, "SLURM_GPUS_ON_NODE", 0, 4096, "a number of GPUs", 0);
  for (int i = 0; i < n; ++i)
    out.push_back(i);
  return out;
}

}  // namespace

launch_env read_launch_env(const env_lookup& env) {
  launch_env out;
  if (env("OMPI_COMM_WORLD_RANK")) {
    read_ranks(env, {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                     "OMPI_COMM_WORLD_LOCAL_SIZE"},
               out);
    out.job_id = env("OMPI_MCA_ess_base_jobid").value_or("");
  } else if (env("PMI_RANK")) {
    read_ranks(env, {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"}, out);
  } else if (env("RANK")) {
    read_ranks(env, {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}, out);
    out.job_id = env("TORCHELASTIC_RUN_ID").value_or("");
  } else if (env("SLURM_PROCID")) {
    read_slurm(env, out);
  } else if (env("JOB_COMPLETION_INDEX")) {
    out.launcher = "kubernetes";
    out.world = required(env, "WORLD_SIZE", 1, max_ranks, "the number of ranks, an integer >= 1",
                         "a Kubernetes Indexed Job: set it to the Job's completions (deploy/kubernetes/)");
    out.rank = required(env, "JOB_COMPLETION_INDEX", 0, out.world - 1,
                        "an index from 0 to WORLD_SIZE - 1 = " + std::to_string(out.world - 1), "");
  } else {
    throw config_error("no launcher's variables are set: syncpoint launch runs under srun, mpirun, mpiexec, torchrun "
                       "or a Kubernetes Indexed Job (docs/launch.md); by hand, set RANK, WORLD_SIZE, MASTER_ADDR "
                       "and MASTER_PORT");
  }
  // Every rank on this machine (mpirun -np N on one host): the head is here.
  if (out.launcher != "slurm" && out.local_size == out.world && out.world > 1)
    out.head_host = "127.0.0.1";
  if (auto addr = env("MASTER_ADDR")) {
    if (addr->empty())
      throw config_error("MASTER_ADDR is set but empty: it must name the head's host");
    out.head_host = *addr;
  }
  out.head_port = optional_number(env, "MASTER_PORT", 1, 65535, "a port from 1 to 65535", 0);
  if (out.head_port == 0 && !out.job_id.empty())
    out.head_port = port_of_job(out.job_id);
  out.gpus = visible_gpus(env);
  return out;
}

std::vector<std::string> expand_nodelist(const std::string& list, const std::string& source) {
  auto bad = [&](const std::string& why) {
    return config_error(source + (source == "host list" ? " '" : "='") + list + "': " + why);
  };
  // Its names: split at the commas outside brackets.
  std::vector<std::string> names{""};
  int depth = 0;
  for (char c : list) {
    if (c == '[' && ++depth > 1)
      throw bad("a bracket inside a bracket");
    if (c == ']' && --depth < 0)
      throw bad("a ']' with no '['");
    if (c == ',' && depth == 0)
      names.emplace_back();
    else
      names.back() += c;
  }
  if (depth != 0)
    throw bad("a '[' with no ']'");
  if (list.empty())
    return {};
  std::vector<std::string> out;
  for (auto& name : names) {
    if (name.empty())
      throw bad("an empty name");
    // Each bracket group multiplies what came before it.
    std::vector<std::string> expanded{""};
    size_t at = 0;
    while (at < name.size()) {
      auto open = name.find('[', at);
      std::string text = name.substr(at, open == std::string::npos ? std::string::npos : open - at);
      for (auto& e : expanded)
        e += text;
      if (open == std::string::npos)
        break;
      auto close = name.find(']', open);
      std::vector<std::string> choices;
      std::string group = name.substr(open + 1, close - open - 1);
      size_t from = 0;
      do {
        auto comma = group.find(',', from);
        std::string piece = group.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
        auto dash = piece.find('-');
        std::string lo = piece.substr(0, dash), hi = dash == std::string::npos ? lo : piece.substr(dash + 1);
        auto first = integer(lo), last = integer(hi);
        if (!first || !last || *last < *first)
          throw bad("'[" + group + "]' holds '" + piece + "', not a number or a rising range like 1-3");
        for (long v = *first; v <= *last; ++v) {
          auto s = std::to_string(v);
          choices.push_back(std::string(lo.size() > s.size() ? lo.size() - s.size() : 0, '0') + s);
          if (choices.size() > max_hosts)
            throw bad("more than " + std::to_string(max_hosts) + " hosts");
        }
        from = comma == std::string::npos ? std::string::npos : comma + 1;
      } while (from != std::string::npos);
      std::vector<std::string> next;
      for (auto& e : expanded)
        for (auto& c : choices)
          next.push_back(e + c);
      if (next.size() > max_hosts)
        throw bad("more than " + std::to_string(max_hosts) + " hosts");
      expanded = std::move(next);
      at = close + 1;
    }
    out.insert(out.end(), expanded.begin(), expanded.end());
    if (out.size() > max_hosts)
      throw bad("more than " + std::to_string(max_hosts) + " hosts");
  }
  return out;
}

std::vector<int> tasks_per_node(const std::string& text) {
  std::vector<int> out;
  size_t from = 0;
  do {
    auto comma = text.find(',', from);
    std::string item = text.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    auto paren = item.find("(x");
    auto n = integer(item.substr(0, paren));
    auto m = paren == std::string::npos ? std::optional<long>(1)
             : item.back() == ')'       ? integer(item.substr(paren + 2, item.size() - paren - 3))
                                        : std::nullopt;
    if (!n || !m || *n < 1 || *m < 1 || *n > max_ranks || out.size() + static_cast<size_t>(*m) > max_hosts)
      throw config_error("SLURM_TASKS_PER_NODE='" + text + "': must be a list of N or N(xM), N and M >= 1");
    out.insert(out.end(), static_cast<size_t>(*m), static_cast<int>(*n));
    from = comma == std::string::npos ? std::string::npos : comma + 1;
  } while (from != std::string::npos);
  return out;
}

int port_of_job(const std::string& job_id) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across machines and builds, unlike std::hash
  for (unsigned char c : job_id) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return 20000 + static_cast<int>(h % 20000);
}

}  // namespace syncpoint::cluster
