#include "runtime/studies/sweep_spec.hpp"

#include <syncpoint/job_config.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <filesystem>

namespace syncpoint {

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

sweep_spec read_sweep_spec(const std::string& file) {
  sweep_spec req;
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
      req.seeds = split_values(text_of(*node, where));
    } else if (key == "train" || key == "grid") {
      read_table(file, key, *node, req.grid.base, req.grid.axes);
    } else if (key == "part") {
      read_parts(file, *node, req.grid);
    } else {
      throw config_error(where + ": unknown key '" + key + "' (known: out, jobs, seeds, [train], [grid], [[part]])");
    }
  }
  return req;
}

sweep_grid sweep_spec::full_grid() const {
  auto g = grid;
  if (!seeds.empty())
    g.axes.push_back({"seed", seeds});
  return g;
}

}  // namespace syncpoint
