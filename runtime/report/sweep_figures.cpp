#include "runtime/report/sweep_figures.hpp"

#include "runtime/report/comparison.hpp"
#include "core/link_model.hpp"
#include <syncpoint/job_config.hpp>
#include "runtime/records/run_files.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

namespace syncpoint::report {

namespace {

const sweep_axis* axis_named(const sweep_grid& g, const std::string& name) {
  for (auto& a : g.axes)
    if (a.name == name)
      return &a;
  return nullptr;
}

// The cell with `c`'s values but `axis` = `value`.
const sweep_cell* sibling(const sweep_result& r, const sweep_cell& c, const std::string& axis, const std::string& value) {
  for (auto& o : r.cells) {
    bool same = true;
    for (size_t k = 0; k < c.values.size() && same; ++k)
      same = o.values[k].second == (c.values[k].first == axis ? value : c.values[k].second);
    if (same)
      return &o;
  }
  return nullptr;
}

}  // namespace

sweep_result load_sweep(const std::string& dir) {
  sweep_result r;
  r.dir = dir;
  auto path = dir + "/sweep.json";
  if (!std::filesystem::is_regular_file(path))
    throw config_error(dir + " holds no sweep.json: not a sweep's folder");
  r.grid = grid_from_json(read_text(path), path);
  r.cells = cells_of(r.grid);
  for (auto& c : r.cells) {
    auto folder = finished_cell(dir, c);
    if (folder.empty())
      r.summaries.emplace_back();
    else
      r.summaries.emplace_back(load_summary(folder));
  }
  return r;
}

std::vector<sweep_result> parts_of(const sweep_result& r) {
  if (r.grid.parts.empty())
    return {r};
  std::vector<sweep_result> out;
  for (size_t p = 0; p < r.grid.parts.size(); ++p) {
    sweep_result part;
    part.dir = r.dir;
    part.grid = part_grid(r.grid, p);
    for (auto& c : r.cells)
      if (c.part == r.grid.parts[p].name) {
        part.cells.push_back(c);
        part.cells.back().index = part.summaries.size();
        part.summaries.push_back(r.summaries[c.index]);
      }
    out.push_back(std::move(part));
  }
  return out;
}

std::string time_to_target_text(const run_summary& s) {
  return s.time_to_target_s >= 0 ? fmt("%.2f", s.time_to_target_s) : s.target_accuracy > 0 ? "not reached" : "-";
}

std::string figure_name(sweep_figure f) {
  switch (f) {
    case sweep_figure::relative_time_to_target: return "relative-time-to-target";
    case sweep_figure::time_to_target: return "time-to-target";
    case sweep_figure::final_accuracy: return "final-accuracy";
    case sweep_figure::samples_per_s: return "samples-per-s";
  }
  return "";
}

sweep_figure parse_figure(const std::string& name) {
  for (auto f : {sweep_figure::relative_time_to_target, sweep_figure::time_to_target, sweep_figure::final_accuracy,
                 sweep_figure::samples_per_s})
    if (figure_name(f) == name)
      return f;
  throw config_error("unknown figure '" + name +
                     "' (valid: relative-time-to-target, time-to-target, final-accuracy, samples-per-s)");
}

std::string figure_words(const sweep_result& r, sweep_figure f) {
  switch (f) {
    case sweep_figure::relative_time_to_target: {
      auto* p = axis_named(r.grid, "protocol");
      return "time to target / " + (p ? p->values.front() : std::string("the first protocol")) + "'s";
    }
    case sweep_figure::time_to_target: return "time to target (s)";
    case sweep_figure::final_accuracy: return "final accuracy";
    case sweep_figure::samples_per_s: return "samples/s";
  }
  return "";
}

bool lower_is_better(sweep_figure f) {
  return f == sweep_figure::relative_time_to_target || f == sweep_figure::time_to_target;
}

sweep_figure default_figure(const sweep_result& r) {
  bool target = std::any_of(r.summaries.begin(), r.summaries.end(),
                            [](auto& s) { return s && s->target_accuracy > 0; });
  bool protocols = false;  // in some part (or the one grid), more than one protocol
  for (auto& part : parts_of(r))
    if (auto* a = axis_named(part.grid, "protocol"))
      protocols = protocols || a->values.size() > 1;
  if (target && protocols)
    return sweep_figure::relative_time_to_target;
  return target ? sweep_figure::time_to_target : sweep_figure::final_accuracy;
}

std::optional<double> figure_of(const sweep_result& r, size_t i, sweep_figure f) {
  auto& s = r.summaries[i];
  if (!s)
    return std::nullopt;
  auto ttt = [](const run_summary& x) {
    return x.time_to_target_s >= 0 ? std::optional<double>(x.time_to_target_s) : std::nullopt;
  };
  switch (f) {
    case sweep_figure::final_accuracy: return s->final_accuracy;
    case sweep_figure::samples_per_s: return s->samples_per_s;
    case sweep_figure::time_to_target: return ttt(*s);
    case sweep_figure::relative_time_to_target: {
      auto* p = axis_named(r.grid, "protocol");
      if (!p)
        return std::nullopt;
      auto* ref = sibling(r, r.cells[i], "protocol", p->values.front());
      if (!ref || !r.summaries[ref->index])
        return std::nullopt;
      auto a = ttt(*s), b = ttt(*r.summaries[ref->index]);
      return a && b && *b > 0 ? std::optional<double>(*a / *b) : std::nullopt;
    }
  }
  return std::nullopt;
}

spread aggregate(const sweep_result& r, sweep_figure f,
                 const std::vector<std::pair<std::string, std::string>>& fixed) {
  spread st;
  for (auto& c : r.cells) {
    bool match = std::all_of(fixed.begin(), fixed.end(), [&](auto& fv) {
      return std::any_of(c.values.begin(), c.values.end(), [&](auto& v) { return v == fv; });
    });
    if (match)
      st.add(figure_of(r, c.index, f));
  }
  return st;
}

std::vector<double> numeric_values(const sweep_axis& a) {
  std::vector<double> out;
  static const std::regex straggler(R"(^(\d+):x([0-9]*\.?[0-9]+)$)");
  std::string worker;
  for (auto& v : a.values) {
    if (a.name == "ps-bandwidth") {  // "400MB/s", "1Gbit/s": placed by bytes/s
      auto rate = parse_bandwidth(v);
      if (!rate)
        return {};
      out.push_back(*rate);
      continue;
    }
    std::smatch m;
    if (std::regex_match(v, m, straggler)) {
      if ((worker.empty() && !out.empty()) || (!worker.empty() && worker != m[1].str()))
        return {};  // mixed with plain numbers, or naming other workers
      worker = m[1];
      out.push_back(std::stod(m[2]));
      continue;
    }
    try {
      size_t used = 0;
      double x = std::stod(v, &used);
      if (used != v.size() || !worker.empty())
        return {};
      out.push_back(x);
    } catch (const std::exception&) {
      return {};
    }
  }
  return out;
}

}  // namespace syncpoint::report
