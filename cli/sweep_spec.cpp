#include "cli/sweep_spec.hpp"

#include <syncpoint/job_config.hpp>

#include "cli/option_table.hpp"

namespace syncpoint::cli {

const char* sweep_help =
  "syncpoint sweep [SPEC.toml] [--grid NAME=V1,V2,...]... [--seeds S1,S2,...] [--jobs N] [--out DIR] [train options]\n"
  "  Runs every combination of the axes' values, each cell a virtual-clock `train` run with its own\n"
  "  folder in DIR/cells (docs/sweeps.md). A sweep started again in the same DIR skips finished cells.\n"
  "  --grid NAME=V1,V2  an axis over the train option --NAME (repeat for more axes; quote a value\n"
  "                     that holds a comma: --grid 'lr-milestones=\"1,2\",\"2,3\"')\n"
  "  --seeds 1,2,3      an axis over --seed, the last one\n"
  "  --jobs N           cells at once, each a process (default: the number of cores)\n"
  "  --out DIR          the sweep's folder (default: sweep)\n"
  "  --head HOST:P      run the cells on a cluster's nodes, one per free slot; their files come back\n"
  "                     here (--token T | --token-file F, --tls --cert --key --ca as for submit)\n"
  "  SPEC.toml          the same in a file: out, seeds, a [train] table and a [grid] table\n";

sweep_request parse_sweep_args(const std::vector<std::string>& args) {
  sweep_request req;
  for (auto& a : args)
    if (a == "--help" || a == "-h") {
      req.help = true;
      return req;
    }
  std::vector<std::string> seeds, grids;
  std::vector<sweep_axis> cli_axes;
  std::string seed_list, jobs_text;
  // The sweep's own options; every other argument is the cells' (a train option), kept as given.
  option_table own("sweep");
  own.pass_unknown()
    .add(grids, "grid", "an axis over the train option --NAME: NAME=V1,V2")
    .add(seed_list, "seeds", "an axis over --seed, the last one")
    .add(jobs_text, "jobs", "cells at once")
    .add(req.out, "out", "the sweep's folder")
    .group("cluster")
    .add(req.head, "head", "run the cells on a cluster's nodes")
    .add(req.token, "token", "the cluster's token")
    .add(req.token_file, "token-file", "read the cluster's token from FILE")
    .add(req.tls, "tls", "TLS to the head")
    .add(req.tls_paths.cert, "cert", "this process's certificate (PEM)")
    .add(req.tls_paths.key, "key", "the private key of --cert (PEM)")
    .add(req.tls_paths.ca, "ca-cert", "the cluster's CA certificate (PEM)")
    .alias("ca-cert", "ca");
  auto rest = args;
  std::string spec;
  if (!rest.empty() && rest.front().rfind("--", 0) != 0) {  // SPEC.toml, first
    spec = rest.front();
    rest.erase(rest.begin());
  }
  if (auto err = own.parse_args(rest); !err.empty())
    throw config_error(err);
  if (!spec.empty()) {
    auto file = read_sweep_spec(spec);
    req.grid = file.grid;
    seeds = file.seeds;
    if (file.jobs > 0)
      req.jobs = file.jobs;
    if (!file.out.empty() && !own.given("out"))  // the command line has the last word
      req.out = file.out;
  }
  for (auto& value : grids) {
    auto eq = value.find('=');
    if (eq == std::string::npos || eq == 0)
      throw config_error("--grid " + value + ": give NAME=V1,V2,... (a train option and its values)");
    cli_axes.push_back({value.substr(0, eq), split_values(value.substr(eq + 1))});
  }
  if (own.given("seeds")) {
    seeds = split_values(seed_list);
    if (seeds.empty())
      throw config_error("--seeds names no seed");
  }
  bool jobs_given = own.given("jobs");
  if (jobs_given) {
    try {
      size_t used = 0;
      req.jobs = std::stoi(jobs_text, &used);
      if (used != jobs_text.size() || req.jobs < 1 || req.jobs > 1024)
        throw std::invalid_argument("range");
    } catch (const std::exception&) {
      throw config_error("--jobs must be a whole number from 1 to 1024, not '" + jobs_text + "'");
    }
  }
  const auto& train_args = own.passed();
  req.grid.base.insert(req.grid.base.end(), train_args.begin(), train_args.end());
  req.grid.axes.insert(req.grid.axes.end(), cli_axes.begin(), cli_axes.end());
  if (!seeds.empty())
    req.grid.axes.push_back({"seed", seeds});
  if (jobs_given && !req.head.empty())
    throw config_error("--jobs is for a sweep on this machine: with --head, each free slot of the cluster runs a cell");
  bool cluster_only = !req.token.empty() || !req.token_file.empty() || req.tls || req.tls_paths.enabled();
  if (cluster_only && req.head.empty())
    throw config_error("--token, --token-file and --tls are for a sweep on a cluster: give --head HOST:PORT");
  if (req.grid.axes.empty() && req.grid.parts.empty())
    throw config_error("no grid: give --grid NAME=V1,V2,..., --seeds, or a SPEC.toml with a [grid] table");
  return req;
}

}  // namespace syncpoint::cli
