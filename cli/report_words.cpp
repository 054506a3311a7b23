// The comparison page's words: who won and why, the settings, and how the
// runs were made.
#include "cli/compare.hpp"
#include "cli/report_html.hpp"
#include "cli/report_parts.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace syncpoint::cli::report_parts {

namespace {

std::string percent(double x) {
  return fmt("%.0f", 100 * x) + "%";
}

// Samples processed when the run first reached `target` (0: never).
uint64_t samples_at_target(const run_summary& s, double target) {
  for (auto& e : s.evals)
    if (e.accuracy >= target)
      return e.samples;
  return s.final_accuracy >= target ? s.samples : 0;
}

// `seconds` summed over workers, as a share of the workers' time in the run.
double share_of_worker_time(const run_summary& s, double seconds) {
  double t = s.run_time_s * std::max(1, s.workers);
  return t > 0 ? seconds / t : 0.0;
}

// Time to target = samples needed / samples per second: which of the two made
// the winner sooner than the reference, in numbers.
std::string why_sooner(const run_record& win, const run_record& ref, double target) {
  auto& w = win.summary;
  auto& r = ref.summary;
  auto wait_share = [](const run_summary& s) { return share_of_worker_time(s, total_wait_s(s)); };
  std::string out = "<b>Why</b> " + escape_html(win.provenance.label) + " beat " + escape_html(ref.provenance.label) +
                    ": it processed " + fmt("%.2f", r.samples_per_s > 0 ? w.samples_per_s / r.samples_per_s : 0) +
                    "&times; as many samples per second (its workers waited " + percent(wait_share(w)) +
                    " of their time, " + escape_html(ref.provenance.label) + "'s " + percent(wait_share(r)) + ")";
  auto sw = samples_at_target(w, target), sr = samples_at_target(r, target);
  if (sw > 0 && sr > 0)
    out += ", and needed " + fmt("%.2f", static_cast<double>(sw) / static_cast<double>(sr)) + "&times; the samples to reach " +
           fmt("%.3g", target) + " (" + with_commas(sw) + " against " + with_commas(sr) +
           (w.staleness_mean > r.staleness_mean + 0.5
              ? "; its gradients were " + fmt("%.1f", w.staleness_mean) + " updates stale on average, and stale "
                "gradients are worth less per sample"
              : std::string()) +
           ")";
  return out + ".";
}

}  // namespace

// Which protocol won on each count, and what each spent its time on.
std::string verdict(const std::vector<run_record>& runs) {
  std::string out = "<div class='verdict'><ul>";
  double target = shared_target(runs);
  const run_record* soonest = nullptr;
  for (auto& r : runs)
    if (r.summary.time_to_target_s >= 0 && (!soonest || r.summary.time_to_target_s < soonest->summary.time_to_target_s))
      soonest = &r;
  if (target > 0) {
    if (soonest) {
      out += "<li><b>Soonest to accuracy " + fmt("%.3g", target) + ": " + escape_html(soonest->provenance.label) +
             "</b>, at " + fmt("%.2f", soonest->summary.time_to_target_s) + " s";
      std::string others;
      for (auto& r : runs)
        if (&r != soonest)
          others += (others.empty() ? "" : ", ") + escape_html(r.provenance.label) + " " +
                    (r.summary.time_to_target_s < 0 ? std::string("not reached")
                     : soonest->summary.time_to_target_s > 0
                       ? fmt("%.2f", r.summary.time_to_target_s / soonest->summary.time_to_target_s) + "&times; as long"
                       : fmt("%.2f", r.summary.time_to_target_s) + " s");
      out += others.empty() ? "." : " (" + others + ").";
      out += "</li>";
      if (soonest != &runs.front())
        out += "<li>" + why_sooner(*soonest, runs.front(), target) + "</li>";
    } else {
      out += "<li><b>No run reached accuracy " + fmt("%.3g", target) + ".</b></li>";
    }
  }
  uint64_t n_eq = equal_samples(runs);
  const run_record* most = nullptr;
  double most_acc = -1;
  for (auto& r : runs) {
    double a = failed_run(r.summary) ? -1 : accuracy_at_samples(r.summary, n_eq);
    if (a > most_acc) {
      most_acc = a;
      most = &r;
    }
  }
  if (most)
    out += "<li><b>Most accurate at equal samples (" + with_commas(n_eq) + "): " + escape_html(most->provenance.label) +
           "</b>, " + fmt("%.4f", most_acc) + ".</li>";
  auto fastest = std::max_element(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.summary.samples_per_s < b.summary.samples_per_s; });
  auto slowest = std::min_element(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.summary.samples_per_s < b.summary.samples_per_s; });
  if (runs.size() > 1 && slowest->summary.samples_per_s > 0)
    out += "<li><b>Highest throughput: " + escape_html(fastest->provenance.label) + "</b>, " +
           fmt("%.0f", fastest->summary.samples_per_s) + " samples/s, " +
           fmt("%.2f", fastest->summary.samples_per_s / slowest->summary.samples_per_s) + "&times; " +
           escape_html(slowest->provenance.label) + "'s.</li>";
  out += "</ul><p class='note'>Where the workers' time went (shares of worker time over the run):</p><ul>";
  for (auto& r : runs) {
    auto& s = r.summary;
    double wait = share_of_worker_time(s, total_wait_s(s)), comm = share_of_worker_time(s, total_comm_s(s));
    out += "<li><b>" + escape_html(r.provenance.label) + "</b>: computing " + percent(s.mean_compute_ratio) +
           ", communicating " + percent(comm) + ", waiting " + percent(wait);
    if (s.barriers > 0)
      out += " (" + with_commas(s.barriers) + " barriers)";
    out += "; gradients " + fmt("%.2f", s.staleness_mean) + " updates stale on average";
    if (!s.phases.empty()) {
      std::string ph;
      for (auto& p : s.phases)
        ph += (ph.empty() ? "" : ", then ") + p.protocol + " for " + fmt("%.2f", p.time_s) + " s";
      out += "; " + escape_html(ph);
    }
    if (s.lost > 0)
      out += "; " + std::to_string(s.lost) + " worker(s) lost";
    if (!s.joins.empty())
      out += "; " + std::to_string(s.joins.size()) + " joined during the run";
    if (!s.resumed_from.empty())
      out += "; resumed from a checkpoint at " + fmt("%.2f", s.resumed_at_s) + " s (" + escape_html(s.resumed_from) + ")";
    out += ".</li>";
  }
  return out + "</ul></div>";
}

// The job settings: those all runs share in one list, those that differ per run.
std::string settings(const std::vector<run_record>& runs) {
  using getter = std::function<std::string(const run_summary&)>;
  std::vector<std::pair<std::string, getter>> keys{
    {"model", [](auto& s) { return s.model; }},
    {"workers", [](auto& s) { return std::to_string(s.workers); }},
    {"straggler", [](auto& s) { return s.straggler.empty() ? std::string("none") : s.straggler; }},
    {"clock", [](auto& s) { return s.clock; }},
    {"iteration cost", [](auto& s) { return s.clock == "virtual" ? fmt("%g", s.iter_cost_ms) + " ms (" + s.iter_cost_source + ")" : std::string("measured (real clock)"); }},
    {"seed", [](auto& s) { return std::to_string(s.seed); }},
    {"learning rate", [](auto& s) { return fmt("%g", s.lr); }},
    {"momentum", [](auto& s) { return fmt("%g", s.momentum) + " (" + s.momentum_rule + " rule)"; }},
    {"target accuracy", [](auto& s) { return s.target_accuracy > 0 ? fmt("%g", s.target_accuracy) : std::string("none"); }},
  };
  std::string shared = "<dl>";
  std::vector<size_t> differing;
  std::vector<std::pair<std::string, std::function<std::string(const run_record&)>>> extra_differ;
  for (size_t k = 0; k < keys.size(); ++k) {
    auto v0 = keys[k].second(runs.front().summary);
    bool same = std::all_of(runs.begin(), runs.end(), [&](auto& r) { return keys[k].second(r.summary) == v0; });
    if (same)
      shared += "<dt>" + keys[k].first + "</dt><dd>" + escape_html(v0) + "</dd>";
    else
      differing.push_back(k);
  }
  // The job options summary.json lacks, from run.json ("-" for a run without one).
  std::set<std::string> extra;
  for (auto& r : runs)
    for (auto& kv : r.provenance.settings)
      extra.insert(kv.first);
  for (auto& key : extra) {
    auto value = [key](const run_record& r) {
      auto it = r.provenance.settings.find(key);
      return it == r.provenance.settings.end() ? std::string("-") : it->second;
    };
    auto v0 = value(runs.front());
    if (std::all_of(runs.begin(), runs.end(), [&](auto& r) { return value(r) == v0; }))
      shared += "<dt>" + escape_html(key) + "</dt><dd>" + escape_html(v0) + "</dd>";
    else
      extra_differ.push_back({key, value});
  }
  auto rule = runs.front().provenance.rule;
  if (!rule.empty() && std::all_of(runs.begin(), runs.end(), [&](auto& r) { return r.provenance.rule == rule; }))
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
  for (auto& r : runs) {
    t += "<tr><td>" + escape_html(r.provenance.label) + "</td>";
    for (auto k : differing)
      t += "<td>" + escape_html(keys[k].second(r.summary)) + "</td>";
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

}  // namespace syncpoint::cli::report_parts
