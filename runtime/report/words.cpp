// The comparison page's words: the settings, and how the runs were made
// (who won and why: verdict.cpp).
#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"
#include "runtime/report/parts.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace syncpoint::report::parts {

// The job settings: those all runs share in one list, those that differ per run.
std::string settings(const std::vector<series>& all) {
  // A series' first run stands for it; the seed row lists all its seeds.
  using getter = std::function<std::string(const series&)>;
  std::vector<std::pair<std::string, getter>> keys{
    {"model", [](auto& r) { return r.first().summary.model; }},
    {"workers", [](auto& r) { return std::to_string(r.first().summary.workers); }},
    {"straggler", [](auto& r) { return r.first().summary.straggler.empty() ? std::string("none") : r.first().summary.straggler; }},
    {"clock", [](auto& r) { return r.first().summary.clock; }},
    {"iteration cost", [](auto& r) { auto& s = r.first().summary; return s.clock == "virtual" ? fmt("%g", s.iter_cost_ms) + " ms (" + s.iter_cost_source + ")" : std::string("measured (real clock)"); }},
    {std::any_of(all.begin(), all.end(), [](auto& se) { return se.seeded(); }) ? "seeds" : "seed", [](auto& r) { return r.seeds(); }},
    {"learning rate", [](auto& r) { return fmt("%g", r.first().summary.lr); }},
    {"momentum", [](auto& r) { return fmt("%g", r.first().summary.momentum) + " (" + r.first().summary.momentum_rule + " rule)"; }},
    {"target accuracy", [](auto& r) { return r.first().summary.target_accuracy > 0 ? fmt("%g", r.first().summary.target_accuracy) : std::string("none"); }},
  };
  std::string shared = "<dl>";
  std::vector<size_t> differing;
  std::vector<std::pair<std::string, getter>> extra_differ;
  for (size_t k = 0; k < keys.size(); ++k) {
    auto v0 = keys[k].second(all.front());
    bool same = std::all_of(all.begin(), all.end(), [&](auto& r) { return keys[k].second(r) == v0; });
    if (same)
      shared += "<dt>" + keys[k].first + "</dt><dd>" + escape_html(v0) + "</dd>";
    else
      differing.push_back(k);
  }
  // The job options summary.json lacks, from run.json ("-" for a run without one).
  std::set<std::string> extra;
  for (auto& r : all)
    for (auto& kv : r.first().provenance.settings)
      extra.insert(kv.first);
  for (auto& key : extra) {
    auto value = [key](const series& r) {
      auto it = r.first().provenance.settings.find(key);
      return it == r.first().provenance.settings.end() ? std::string("-") : it->second;
    };
    auto v0 = value(all.front());
    if (std::all_of(all.begin(), all.end(), [&](auto& r) { return value(r) == v0; }))
      shared += "<dt>" + escape_html(key) + "</dt><dd>" + escape_html(v0) + "</dd>";
    else
      extra_differ.push_back({key, value});
  }
  auto rule = all.front().first().provenance.rule;
  if (!rule.empty() && std::all_of(all.begin(), all.end(), [&](auto& r) { return r.first().provenance.rule == rule; }))
    shared += "<dt>stop rule</dt><dd>" + escape_html(rule) + "</dd>";
  shared += "</dl>";
  if (differing.empty() && extra_differ.empty())
    return shared;
  std::string t = "<p><b>These runs differ in " + std::to_string(differing.size() + extra_differ.size()) +
                  " setting(s)</b>; compare them with that in mind:</p><table class='differences'><tr><th>run</th>";
  for (auto k : differing)
    t += "<th>" + keys[k].first + "</th>";
  for (auto& e : extra_differ)
    t += "<th>" + escape_html(e.first) + "</th>";
  t += "</tr>";
  for (auto& r : all) {
    t += "<tr><td>" + escape_html(r.first().provenance.label) + "</td>";
    for (auto k : differing)
      t += "<td>" + escape_html(keys[k].second(r)) + "</td>";
    for (auto& e : extra_differ)
      t += "<td>" + escape_html(e.second(r)) + "</td>";
    t += "</tr>";
  }
  return shared + t + "</table>";
}

std::string provenance(const std::vector<run_record>& runs) {
  std::string out;
  std::vector<std::string> commands;
  for (auto& r : runs)
    if (!r.provenance.command.empty() &&
        std::find(commands.begin(), commands.end(), r.provenance.command) == commands.end())
      commands.push_back(r.provenance.command);
  out += commands.size() <= 1 ? "<h3>Command</h3>" : "<h3>Commands</h3>";
  if (commands.empty())
    out += "<p class='note'>The run folders do not say (no run.json).</p>";
  for (auto& c : commands)
    out += "<pre>" + escape_html(c) + "</pre>";
  auto list = [&](const char* title, auto field) {
    std::map<std::string, std::string> first;
    for (auto& r : runs)
      if (!(r.provenance.*field).empty()) {
        first = r.provenance.*field;
        break;
      }
    if (first.empty())
      return;
    out += std::string("<h3>") + title + "</h3><dl>";
    for (auto& kv : first)
      out += "<dt>" + escape_html(kv.first) + "</dt><dd>" + escape_html(kv.second) + "</dd>";
    out += "</dl>";
    for (auto& r : runs)
      if (!(r.provenance.*field).empty() && r.provenance.*field != first)
        out += "<p class='note'>" + escape_html(r.provenance.label) + " (" + escape_html(r.dir) +
               ") was made elsewhere: see its run.json.</p>";
  };
  list("Versions", &run_provenance::build);
  list("Machine", &run_provenance::machine);
  out += "<h3>Run folders</h3><ul class='note'>";
  for (auto& r : runs)
    out += "<li>" + escape_html(r.provenance.label) + ": <code>" + escape_html(r.dir) + "</code></li>";
  return out + "</ul>";
}

}  // namespace syncpoint::report::parts
