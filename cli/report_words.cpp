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

// A figure's mean over a series.
double mean_of(const series& s, const std::function<double(const run_summary&)>& f) {
  return s.over([&](const run_record& r) { return std::optional(f(r.summary)); }).mean();
}

double wait_share(const run_summary& s) { return share_of_worker_time(s, total_wait_s(s)); }

spread time_to_target(const series& s) {
  return s.over([](const run_record& r) {
    return r.summary.time_to_target_s >= 0 ? std::optional(r.summary.time_to_target_s) : std::nullopt;
  });
}

// " over 3 seeds (11.02–13.50)" for a series of several seeds, else "".
std::string spread_words(const series& s, const spread& v, const char* format) {
  if (!s.seeded())
    return "";
  return " on average over " + std::to_string(v.n()) + " seed" + (v.n() == 1 ? "" : "s") +
         (v.n() > 1 ? " (" + fmt(format, v.lo()) + "–" + fmt(format, v.hi()) + ")" : "");
}

// Time to target = samples needed / samples per second: which of the two made
// the winner sooner than the reference, in numbers (means over seeds).
std::string why_sooner(const series& win, const series& ref, double target) {
  double w_rate = mean_of(win, [](auto& s) { return s.samples_per_s; });
  double r_rate = mean_of(ref, [](auto& s) { return s.samples_per_s; });
  std::string out = "<b>Why</b> " + escape_html(win.label()) + " beat " + escape_html(ref.label()) +
                    ": it processed " + fmt("%.2f", r_rate > 0 ? w_rate / r_rate : 0) +
                    "&times; as many samples per second (its workers waited " + percent(mean_of(win, wait_share)) +
                    " of their time, " + escape_html(ref.label()) + "'s " + percent(mean_of(ref, wait_share)) + ")";
  auto at_target = [&](const series& s) {
    return s.over([&](const run_record& r) {
      auto n = samples_at_target(r.summary, target);
      return n > 0 ? std::optional(static_cast<double>(n)) : std::nullopt;
    });
  };
  auto sw = at_target(win), sr = at_target(ref);
  double w_stale = mean_of(win, [](auto& s) { return s.staleness_mean; });
  double r_stale = mean_of(ref, [](auto& s) { return s.staleness_mean; });
  if (!sw.empty() && !sr.empty())
    out += ", and needed " + fmt("%.2f", sw.mean() / sr.mean()) + "&times; the samples to reach " + fmt("%.3g", target) +
           " (" + with_commas(static_cast<uint64_t>(std::llround(sw.mean()))) + " against " +
           with_commas(static_cast<uint64_t>(std::llround(sr.mean()))) +
           (w_stale > r_stale + 0.5
              ? "; its gradients were " + fmt("%.1f", w_stale) + " updates stale on average, and stale "
                "gradients are worth less per sample"
              : std::string()) +
           ")";
  return out + (win.seeded() || ref.seeded() ? ", on average over their seeds." : ".");
}

// On how many seeds `win` was the soonest to the target of all series (runs paired by seed).
int seeds_won(const std::vector<series>& all, const series& win) {
  int won = 0;
  for (auto* r : win.runs) {
    if (r->summary.time_to_target_s < 0)
      continue;
    bool soonest = std::all_of(all.begin(), all.end(), [&](auto& s) {
      return &s == &win || std::all_of(s.runs.begin(), s.runs.end(), [&](auto* o) {
               return o->summary.seed != r->summary.seed || o->summary.time_to_target_s < 0 ||
                      o->summary.time_to_target_s >= r->summary.time_to_target_s;
             });
    });
    won += soonest;
  }
  return won;
}

// "; within the spread of asp's (0.8401–0.8533): the seeds do not settle it" when the
// runner-up's range overlaps the winner's.
std::string within_spread(const series& win, const spread& w, const series* second, const spread& v, const char* format) {
  if (!second || !(win.seeded() || second->seeded()) || !w.overlaps(v))
    return "";
  return "; within the spread of " + escape_html(second->label()) + "'s (" + v.str(format) + "): the seeds do not settle it";
}

}  // namespace

// Which protocol won on each count, and what each spent its time on.
std::string verdict(const std::vector<series>& all, const std::vector<run_record>& runs) {
  std::string out = "<div class='verdict'><ul>";
  double target = shared_target(runs);
  bool seeded = std::any_of(all.begin(), all.end(), [](auto& s) { return s.seeded(); });
  // Soonest: among the series that reached the target on every seed, the lowest mean time.
  const series* soonest = nullptr;
  for (auto& s : all) {
    auto t = time_to_target(s);
    if (!t.empty() && t.missing == 0 && (!soonest || t.mean() < time_to_target(*soonest).mean()))
      soonest = &s;
  }
  if (target > 0) {
    if (soonest) {
      auto ts = time_to_target(*soonest);
      out += "<li><b>Soonest to accuracy " + fmt("%.3g", target) + ": " + escape_html(soonest->label()) + "</b>, at " +
             fmt("%.2f", ts.mean()) + " s" + spread_words(*soonest, ts, "%.2f");
      if (soonest->seeded())
        out += ", the soonest of all on " + std::to_string(seeds_won(all, *soonest)) + " of " +
               std::to_string(soonest->runs.size()) + " seeds";
      std::string others, close;
      for (auto& s : all) {
        if (&s == soonest)
          continue;
        auto t = time_to_target(s);
        others += (others.empty() ? "" : ", ") + escape_html(s.label()) + " " +
                  (t.empty() ? std::string("not reached")
                   : ts.mean() > 0 ? fmt("%.2f", t.mean() / ts.mean()) + "&times; as long"
                                   : fmt("%.2f", t.mean()) + " s") +
                  (!t.empty() && t.missing > 0 ? " (reached on " + std::to_string(t.n()) + " of " +
                                                   std::to_string(s.runs.size()) + " seeds)"
                                               : "");
        if ((soonest->seeded() || s.seeded()) && ts.overlaps(t))
          close += (close.empty() ? "" : ", ") + escape_html(s.label()) + " (" + t.str("%.2f") + " s)";
      }
      out += others.empty() ? "." : " (" + others + ").";
      out += "</li>";
      if (!close.empty())
        out += "<li><b>Within the spread:</b> the times to the target of " + close + " overlap " +
               escape_html(soonest->label()) + "'s (" + ts.str("%.2f") + " s) over the seeds, so these seeds do " +
               "not settle which of them is sooner.</li>";
      if (soonest != &all.front())
        out += "<li>" + why_sooner(*soonest, all.front(), target) + "</li>";
    } else if (std::any_of(all.begin(), all.end(), [](auto& s) { return !time_to_target(s).empty(); })) {
      out += "<li><b>No protocol reached accuracy " + fmt("%.3g", target) + " on every seed.</b></li>";
    } else {
      out += "<li><b>No run reached accuracy " + fmt("%.3g", target) + ".</b></li>";
    }
  }
  uint64_t n_eq = equal_samples(runs);
  // The best and the runner-up of a figure (by the mean; failed runs have none).
  auto podium = [&](const std::function<std::optional<double>(const run_record&)>& f) {
    std::pair<const series*, const series*> top{nullptr, nullptr};
    spread first, second;
    for (auto& s : all) {
      auto v = s.over([&](const run_record& r) { return failed_run(r.summary) ? std::nullopt : f(r); });
      if (v.empty())
        continue;
      if (!top.first || v.mean() > first.mean()) {
        top = {&s, top.first};
        second = first;
        first = v;
      } else if (!top.second || v.mean() > second.mean()) {
        top.second = &s;
        second = v;
      }
    }
    return std::make_tuple(top.first, first, top.second, second);
  };
  auto [most, most_acc, next, next_acc] = podium([&](const run_record& r) {
    double a = accuracy_at_samples(r.summary, n_eq);
    return a >= 0 ? std::optional(a) : std::nullopt;
  });
  if (most)
    out += "<li><b>Most accurate at equal samples (" + with_commas(n_eq) + "): " + escape_html(most->label()) +
           "</b>, " + fmt("%.4f", most_acc.mean()) + spread_words(*most, most_acc, "%.4f") +
           within_spread(*most, most_acc, next, next_acc, "%.4f") + ".</li>";
  for (auto& name : final_metric_names(runs)) {  // listed, not ranked: whether more is better depends on the measure
    std::string each;
    for (auto& s : all) {
      auto v = s.over([&](const run_record& r) { return final_metric(r.summary, name); });
      if (!v.empty())
        each += (each.empty() ? "" : ", ") + escape_html(s.label()) + " " + fmt("%.4g", v.mean()) +
                (s.seeded() && v.n() > 1 ? " (" + fmt("%.4g", v.lo()) + "–" + fmt("%.4g", v.hi()) + ")" : "");
    }
    out += "<li><b>Final held-out " + escape_html(name) + "</b>: " + each + ".</li>";
  }
  auto [fastest, fast, runner, run_up] = podium([](const run_record& r) { return std::optional(r.summary.samples_per_s); });
  double slowest_rate = 0;
  const series* slowest = nullptr;
  for (auto& s : all) {
    double v = mean_of(s, [](auto& x) { return x.samples_per_s; });
    if (!slowest || v < slowest_rate) {
      slowest = &s;
      slowest_rate = v;
    }
  }
  if (all.size() > 1 && fastest && slowest_rate > 0)
    out += "<li><b>Highest throughput: " + escape_html(fastest->label()) + "</b>, " + fmt("%.0f", fast.mean()) +
           " samples/s" + spread_words(*fastest, fast, "%.0f") + ", " + fmt("%.2f", fast.mean() / slowest_rate) +
           "&times; " + escape_html(slowest->label()) + "'s" + within_spread(*fastest, fast, runner, run_up, "%.0f") +
           ".</li>";
  out += std::string("</ul><p class='note'>Where the workers' time went (shares of worker time over the run") +
         (seeded ? ", means over seeds" : "") + "):</p><ul>";
  for (auto& se : all) {
    auto& s = se.first().summary;
    double wait = mean_of(se, wait_share);
    double comm = mean_of(se, [](auto& x) { return share_of_worker_time(x, total_comm_s(x)); });
    double barriers = mean_of(se, [](auto& x) { return static_cast<double>(x.barriers); });
    out += "<li><b>" + escape_html(se.label()) + "</b>: computing " +
           percent(mean_of(se, [](auto& x) { return x.mean_compute_ratio; })) + ", communicating " + percent(comm) +
           ", waiting " + percent(wait);
    if (barriers > 0)
      out += " (" + with_commas(static_cast<uint64_t>(std::llround(barriers))) + " barriers)";
    out += "; gradients " + fmt("%.2f", mean_of(se, [](auto& x) { return x.staleness_mean; })) +
           " updates stale on average";
    if (!s.phases.empty()) {
      std::string ph;
      for (auto& p : s.phases)
        ph += (ph.empty() ? "" : ", then ") + p.protocol + " for " + fmt("%.2f", p.time_s) + " s";
      out += "; " + escape_html(ph) + (se.seeded() ? " (seed " + std::to_string(s.seed) + ")" : "");
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

}  // namespace syncpoint::cli::report_parts
