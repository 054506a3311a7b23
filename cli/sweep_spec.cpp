#include "cli/sweep_spec.hpp"

#include <syncpoint/job_config.hpp>

#include "cli/option_table.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

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

namespace {

std::string shortest(double x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

// A TOML value as the command line would give it; a list joined by commas.
std::string text_of(const toml::node& n, const std::string& where) {
  if (auto s = n.as_string())
    return s->get();
  if (auto i = n.as_integer())
    return std::to_string(i->get());
  if (auto f = n.as_floating_point())
    return shortest(f->get());
  if (auto b = n.as_boolean())
    return b->get() ? "true" : "false";
  if (auto a = n.as_array()) {
    std::string out;
    for (auto& x : *a)
      out += (out.empty() ? "" : ",") + text_of(x, where);
    return out;
  }
  throw config_error(where + ": a value must be text, a number, true/false or a list of those");
}

std::string at_line(const std::string& file, const toml::node& n) {
  return file + " line " + std::to_string(n.source().begin.line);
}

// The keys of a table in the file's order (toml++ keeps them sorted).
std::vector<std::pair<std::string, const toml::node*>> in_file_order(const toml::table& t) {
  std::vector<std::pair<std::string, const toml::node*>> out;
  for (auto& [k, v] : t)
    out.push_back({std::string(k.str()), &v});
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
    auto la = a.second->source().begin, lb = b.second->source().begin;
    return la.line != lb.line ? la.line < lb.line : la.column < lb.column;
  });
  return out;
}

// A [train] table into `base`, or a [grid] table into `axes`.
void read_table(const std::string& file, const std::string& key, const toml::node& node,
                std::vector<std::string>& base, std::vector<sweep_axis>& axes) {
  auto* table = node.as_table();
  if (!table)
    throw config_error(at_line(file, node) + ": [" + key + "] must be a table");
  for (auto& [name, value] : in_file_order(*table)) {
    auto vwhere = at_line(file, *value);
    if (key.size() >= 5 && key.compare(key.size() - 5, 5, "train") == 0) {
      base.push_back("--" + name + "=" + text_of(*value, vwhere));
      continue;
    }
    sweep_axis axis{name, {}};
    if (auto* list = value->as_array()) {
      for (auto& v : *list)
        axis.values.push_back(text_of(v, vwhere));
      if (axis.values.empty())
        throw config_error(vwhere + ": grid axis '" + name + "' has no values");
    } else {
      axis.values.push_back(text_of(*value, vwhere));
    }
    axes.push_back(std::move(axis));
  }
}

// [[part]] tables: name, and its own [part.train] and [part.grid].
void read_parts(const std::string& file, const toml::node& node, sweep_grid& grid) {
  auto* list = node.as_array();
  if (!list || !list->is_array_of_tables())
    throw config_error(at_line(file, node) + ": parts are [[part]] tables");
  for (auto& item : *list) {
    sweep_part part;
    for (auto& [key, value] : in_file_order(*item.as_table())) {
      auto where = at_line(file, *value);
      if (key == "name")
        part.name = text_of(*value, where);
      else if (key == "train" || key == "grid")
        read_table(file, "part." + key, *value, part.base, part.axes);
      else
        throw config_error(where + ": unknown key '" + key + "' in a [[part]] (known: name, [part.train], [part.grid])");
    }
    if (part.name.empty())
      throw config_error(at_line(file, item) + ": a [[part]] needs a name");
    grid.parts.push_back(std::move(part));
  }
}

void read_spec(const std::string& file, sweep_request& req, std::vector<std::string>& seeds) {
  if (!std::filesystem::is_regular_file(file))
    throw config_error("sweep: no spec file " + file);
  toml::table spec;
  try {
    spec = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    throw config_error(file + " line " + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
  }
  for (auto& [key, node] : in_file_order(spec)) {
    auto where = at_line(file, *node);
    if (key == "out") {
      req.out = text_of(*node, where);
    } else if (key == "jobs") {
      auto j = node->value<int64_t>();
      if (!j || *j < 1 || *j > 1024)
        throw config_error(where + ": jobs must be a whole number from 1 to 1024");
      req.jobs = static_cast<int>(*j);
    } else if (key == "seeds") {
      seeds = split_values(text_of(*node, where));
    } else if (key == "train" || key == "grid") {
      read_table(file, key, *node, req.grid.base, req.grid.axes);
    } else if (key == "part") {
      read_parts(file, *node, req.grid);
    } else {
      throw config_error(where + ": unknown key '" + key + "' (known: out, jobs, seeds, [train], [grid], [[part]])");
    }
  }
}

}  // namespace

std::vector<std::string> split_values(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  bool quoted = false, was_quoted = false;
  for (char c : text) {
    if (c == '"') {
      quoted = !quoted;
      was_quoted = true;
    } else if (c == ',' && !quoted) {
      out.push_back(item);
      item.clear();
      was_quoted = false;
    } else {
      item += c;
    }
  }
  if (quoted)
    throw config_error("unbalanced quote in '" + text + "'");
  if (!item.empty() || was_quoted || !out.empty())
    out.push_back(item);
  return out;
}

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
    auto out = req.out;
    read_spec(spec, req, seeds);
    if (own.given("out"))  // the command line has the last word
      req.out = out;
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
