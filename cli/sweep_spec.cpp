#include "cli/sweep_spec.hpp"

#include <syncpoint/job_config.hpp>

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
  std::vector<std::string> seeds, train_args;
  std::vector<sweep_axis> cli_axes;
  bool out_given = false, jobs_given = false;
  std::string out_arg;
  int jobs_arg = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    // "--name value" or "--name=value" for the sweep's own options.
    auto own = [&](const std::string& name, std::string& value) {
      if (a == "--" + name) {
        if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
          throw config_error("--" + name + " needs a value");
        value = args[++i];
        return true;
      }
      if (a.rfind("--" + name + "=", 0) == 0) {
        value = a.substr(name.size() + 3);
        return true;
      }
      return false;
    };
    std::string value;
    if (a == "--help" || a == "-h") {
      req.help = true;
    } else if (own("grid", value)) {
      auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0)
        throw config_error("--grid " + value + ": give NAME=V1,V2,... (a train option and its values)");
      cli_axes.push_back({value.substr(0, eq), split_values(value.substr(eq + 1))});
    } else if (own("seeds", value)) {
      seeds = split_values(value);
      if (seeds.empty())
        throw config_error("--seeds names no seed");
    } else if (own("jobs", value)) {
      try {
        size_t used = 0;
        jobs_arg = std::stoi(value, &used);
        if (used != value.size() || jobs_arg < 1 || jobs_arg > 1024)
          throw std::invalid_argument("range");
      } catch (const std::exception&) {
        throw config_error("--jobs must be a whole number from 1 to 1024, not '" + value + "'");
      }
      jobs_given = true;
    } else if (own("out", value)) {
      out_arg = value;
      out_given = true;
    } else if (own("head", value)) {
      req.head = value;
    } else if (own("token", value)) {
      req.token = value;
    } else if (own("token-file", value)) {
      req.token_file = value;
    } else if (own("cert", value)) {
      req.tls_paths.cert = value;
    } else if (own("key", value)) {
      req.tls_paths.key = value;
    } else if (own("ca", value) || own("ca-cert", value)) {
      req.tls_paths.ca = value;
    } else if (a == "--tls" || a.rfind("--tls=", 0) == 0) {  // a switch: on, or =true|false|on|off|1|0
      auto v = a == "--tls" ? std::string("true") : a.substr(6);
      if (v == "true" || v == "on" || v == "1")
        req.tls = true;
      else if (v == "false" || v == "off" || v == "0")
        req.tls = false;
      else
        throw config_error("--tls takes true or false, not '" + v + "'");
    } else if (i == 0 && a.rfind("--", 0) != 0) {
      read_spec(a, req, seeds);
    } else {
      train_args.push_back(a);
    }
  }
  req.grid.base.insert(req.grid.base.end(), train_args.begin(), train_args.end());
  req.grid.axes.insert(req.grid.axes.end(), cli_axes.begin(), cli_axes.end());
  if (!seeds.empty())
    req.grid.axes.push_back({"seed", seeds});
  if (out_given)
    req.out = out_arg;
  if (jobs_given)
    req.jobs = jobs_arg;
  if (jobs_given && !req.head.empty())
    throw config_error("--jobs is for a sweep on this machine: with --head, each free slot of the cluster runs a cell");
  bool cluster_only = !req.token.empty() || !req.token_file.empty() || req.tls || req.tls_paths.enabled();
  if (cluster_only && req.head.empty())
    throw config_error("--token, --token-file and --tls are for a sweep on a cluster: give --head HOST:PORT");
  if (!req.help && req.grid.axes.empty() && req.grid.parts.empty())
    throw config_error("no grid: give --grid NAME=V1,V2,..., --seeds, or a SPEC.toml with a [grid] table");
  return req;
}

}  // namespace syncpoint::cli
