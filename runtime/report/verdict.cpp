// Who won a comparison: decide() finds the facts, verdict() says them.
#include "runtime/report/verdict.hpp"

#include "runtime/report/comparison.hpp"
#include "runtime/report/page.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <tuple>

namespace syncpoint::report::parts {

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

spread time_to_target(const series& s) {
  return s.over([](const run_record& r) {
    return r.summary.time_to_target_s >= 0 ? std::optional(r.summary.time_to_target_s) : std::nullopt;
  });
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

// The best and the runner-up of a figure (by the mean; failed runs have none).
std::pair<ranked, ranked> podium(const std::vector<series>& all,
                                 const std::function<std::optional<double>(const run_record&)>& f) {
  ranked first, second;
  for (auto& s : all) {
    auto v = s.over([&](const run_record& r) { return failed_run(r.summary) ? std::nullopt : f(r); });
    if (v.empty())
      continue;
    if (!first.who || v.mean() > first.value.mean()) {
      second = first;
      first = {&s, v};
    } else if (!second.who || v.mean() > second.value.mean()) {
      second = {&s, v};
    }
  }
  return {first, second};
}

verdict_facts::why_sooner why_sooner(const series& win, const series& ref, double target) {
  verdict_facts::why_sooner why;
  why.ref = &ref;
  double w_rate = mean_of(win, [](auto& s) { return s.samples_per_s; });
  double r_rate = mean_of(ref, [](auto& s) { return s.samples_per_s; });
  why.rate_ratio = r_rate > 0 ? w_rate / r_rate : 0;
  why.wait = wait_share(win);
  why.ref_wait = wait_share(ref);
  auto at_target = [&](const series& s) {
    return s.over([&](const run_record& r) {
      auto n = samples_at_target(r.summary, target);
      return n > 0 ? std::optional(static_cast<double>(n)) : std::nullopt;
    });
  };
  why.samples = at_target(win);
  why.ref_samples = at_target(ref);
  why.stale = mean_of(win, [](auto& s) { return s.staleness_mean; });
  why.ref_stale = mean_of(ref, [](auto& s) { return s.staleness_mean; });
  return why;
}

// " over 3 seeds (11.02–13.50)" for a series of several seeds, else "".
std::string spread_words(const series& s, const spread& v, const char* format) {
  if (!s.seeded())
    return "";
  return " on average over " + std::to_string(v.n()) + " seed" + (v.n() == 1 ? "" : "s") +
         (v.n() > 1 ? " (" + fmt(format, v.lo()) + "–" + fmt(format, v.hi()) + ")" : "");
}

// "; within the spread of asp's (0.8401–0.8533): the seeds do not settle it" when the
// runner-up's range overlaps the winner's.
std::string within_spread(const ranked& win, const ranked& second, const char* format) {
  if (!second.who || !(win.who->seeded() || second.who->seeded()) || !win.value.overlaps(second.value))
    return "";
  return "; within the spread of " + escape_html(second.who->label()) + "'s (" + second.value.str(format) +
         "): the seeds do not settle it";
}

// Time to target = samples needed / samples per second: which of the two made
// the winner sooner than the reference, in numbers (means over seeds).
std::string why_words(const series& win, const verdict_facts::why_sooner& why, double target) {
  auto& ref = *why.ref;
  std::string out = "<b>Why</b> " + escape_html(win.label()) + " beat " + escape_html(ref.label()) +
                    ": it processed " + fmt("%.2f", why.rate_ratio) +
                    "&times; as many samples per second (its workers waited " + percent(why.wait) +
                    " of their time, " + escape_html(ref.label()) + "'s " + percent(why.ref_wait) + ")";
  if (!why.samples.empty() && !why.ref_samples.empty())
    out += ", and needed " + fmt("%.2f", why.samples.mean() / why.ref_samples.mean()) + "&times; the samples to reach " +
           fmt("%.3g", target) + " (" + with_commas(static_cast<uint64_t>(std::llround(why.samples.mean()))) +
           " against " + with_commas(static_cast<uint64_t>(std::llround(why.ref_samples.mean()))) +
           (why.stale > why.ref_stale + 0.5
              ? "; its gradients were " + fmt("%.1f", why.stale) + " updates stale on average, and stale "
                "gradients are worth less per sample"
              : std::string()) +
           ")";
  return out + (win.seeded() || ref.seeded() ? ", on average over their seeds." : ".");
}

}  // namespace

double wait_share(const series& s) {
  return mean_of(s, [](auto& x) { return share_of_worker_time(x, total_wait_s(x)); });
}

verdict_facts decide(const std::vector<series>& all, const std::vector<run_record>& runs) {
  verdict_facts f;
  f.target = shared_target(runs);
  for (auto& s : all) {
    auto t = time_to_target(s);
    f.reached_on_some_seed = f.reached_on_some_seed || !t.empty();
    if (!t.empty() && t.missing == 0 && (!f.soonest.who || t.mean() < f.soonest.value.mean()))
      f.soonest = {&s, t};
  }
  if (f.target > 0 && f.soonest.who) {
    f.soonest_seeds_won = seeds_won(all, *f.soonest.who);
    for (auto& s : all) {
      if (&s == f.soonest.who)
        continue;
      auto t = time_to_target(s);
      f.others.push_back({&s, t});
      if ((f.soonest.who->seeded() || s.seeded()) && f.soonest.value.overlaps(t))
        f.within_spread.push_back({&s, t});
    }
    if (f.soonest.who != &all.front())
      f.why = why_sooner(*f.soonest.who, all.front(), f.target);
  }
  f.equal_samples = equal_samples(runs);
  std::tie(f.most_accurate, f.next_accurate) = podium(all, [&](const run_record& r) {
    double a = accuracy_at_samples(r.summary, f.equal_samples);
    return a >= 0 ? std::optional(a) : std::nullopt;
  });
  for (auto& name : final_metric_names(runs)) {
    auto& m = f.final_measures.emplace_back();
    m.name = name;
    for (auto& s : all)
      if (auto v = s.over([&](const run_record& r) { return final_metric(r.summary, name); }); !v.empty())
        m.values.push_back({&s, v});
  }
  std::tie(f.fastest, f.next_fastest) =
    podium(all, [](const run_record& r) { return std::optional(r.summary.samples_per_s); });
  for (auto& s : all) {
    double v = mean_of(s, [](auto& x) { return x.samples_per_s; });
    if (!f.slowest || v < f.slowest_rate) {
      f.slowest = &s;
      f.slowest_rate = v;
    }
  }
  for (auto& se : all)
    f.time_spent.push_back({&se, mean_of(se, [](auto& x) { return x.mean_compute_ratio; }),
                            mean_of(se, [](auto& x) { return share_of_worker_time(x, total_comm_s(x)); }), wait_share(se),
                            mean_of(se, [](auto& x) { return static_cast<double>(x.barriers); }),
                            mean_of(se, [](auto& x) { return x.staleness_mean; })});
  return f;
}

std::string verdict(const std::vector<series>& all, const std::vector<run_record>& runs) {
  auto f = decide(all, runs);
  std::string out = "<div class='verdict'><ul>";
  bool seeded = std::any_of(all.begin(), all.end(), [](auto& s) { return s.seeded(); });
  if (f.target > 0) {
    if (auto* soonest = f.soonest.who) {
      auto& ts = f.soonest.value;
      out += "<li><b>Soonest to accuracy " + fmt("%.3g", f.target) + ": " + escape_html(soonest->label()) + "</b>, at " +
             fmt("%.2f", ts.mean()) + " s" + spread_words(*soonest, ts, "%.2f");
      if (soonest->seeded())
        out += ", the soonest of all on " + std::to_string(f.soonest_seeds_won) + " of " +
               std::to_string(soonest->runs.size()) + " seeds";
      std::string others, close;
      for (auto& [s, t] : f.others)
        others += (others.empty() ? "" : ", ") + escape_html(s->label()) + " " +
                  (t.empty() ? std::string("not reached")
                   : ts.mean() > 0 ? fmt("%.2f", t.mean() / ts.mean()) + "&times; as long"
                                   : fmt("%.2f", t.mean()) + " s") +
                  (!t.empty() && t.missing > 0 ? " (reached on " + std::to_string(t.n()) + " of " +
                                                   std::to_string(s->runs.size()) + " seeds)"
                                               : "");
      for (auto& [s, t] : f.within_spread)
        close += (close.empty() ? "" : ", ") + escape_html(s->label()) + " (" + t.str("%.2f") + " s)";
      out += others.empty() ? "." : " (" + others + ").";
      out += "</li>";
      if (!close.empty())
        out += "<li><b>Within the spread:</b> the times to the target of " + close + " overlap " +
               escape_html(soonest->label()) + "'s (" + ts.str("%.2f") + " s) over the seeds, so these seeds do " +
               "not settle which of them is sooner.</li>";
      if (f.why.ref)
        out += "<li>" + why_words(*soonest, f.why, f.target) + "</li>";
    } else if (f.reached_on_some_seed) {
      out += "<li><b>No protocol reached accuracy " + fmt("%.3g", f.target) + " on every seed.</b></li>";
    } else {
      out += "<li><b>No run reached accuracy " + fmt("%.3g", f.target) + ".</b></li>";
    }
  }
  if (auto& most = f.most_accurate; most.who)
    out += "<li><b>Most accurate at equal samples (" + with_commas(f.equal_samples) + "): " +
           escape_html(most.who->label()) + "</b>, " + fmt("%.4f", most.value.mean()) +
           spread_words(*most.who, most.value, "%.4f") + within_spread(most, f.next_accurate, "%.4f") + ".</li>";
  for (auto& m : f.final_measures) {  // listed, not ranked: whether more is better depends on the measure
    std::string each;
    for (auto& [s, v] : m.values)
      each += (each.empty() ? "" : ", ") + escape_html(s->label()) + " " + fmt("%.4g", v.mean()) +
              (s->seeded() && v.n() > 1 ? " (" + fmt("%.4g", v.lo()) + "–" + fmt("%.4g", v.hi()) + ")" : "");
    out += "<li><b>Final held-out " + escape_html(m.name) + "</b>: " + each + ".</li>";
  }
  if (auto& fast = f.fastest; all.size() > 1 && fast.who && f.slowest_rate > 0)
    out += "<li><b>Highest throughput: " + escape_html(fast.who->label()) + "</b>, " + fmt("%.0f", fast.value.mean()) +
           " samples/s" + spread_words(*fast.who, fast.value, "%.0f") + ", " +
           fmt("%.2f", fast.value.mean() / f.slowest_rate) + "&times; " + escape_html(f.slowest->label()) + "'s" +
           within_spread(fast, f.next_fastest, "%.0f") + ".</li>";
  out += std::string("</ul><p class='note'>Where the workers' time went (shares of worker time over the run") +
         (seeded ? ", means over seeds" : "") + "):</p><ul>";
  for (auto& use : f.time_spent) {
    auto& se = *use.who;
    auto& s = se.first().summary;
    out += "<li><b>" + escape_html(se.label()) + "</b>: computing " + percent(use.compute) + ", communicating " +
           percent(use.comm) + ", waiting " + percent(use.wait);
    if (use.barriers > 0)
      out += " (" + with_commas(static_cast<uint64_t>(std::llround(use.barriers))) + " barriers)";
    out += "; gradients " + fmt("%.2f", use.staleness) + " updates stale on average";
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

}  // namespace syncpoint::report::parts
