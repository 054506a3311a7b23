// Runs that differ only in their seed, read as one series: grouping, and the
// accuracy curve's mean and band.
#include "runtime/report/comparison.hpp"
#include "runtime/report/parts.hpp"

#include <algorithm>
#include <cmath>

namespace syncpoint::report::parts {

namespace {

// Everything that makes two runs different experiments: all but the seed.
std::string experiment_key(const run_record& r) {
  auto& s = r.summary;
  std::string key = r.provenance.label + '\n' + s.protocol + '\n' + s.model + '\n' + std::to_string(s.workers) + '\n' +
                    s.clock + '\n' + s.straggler + '\n' + fmt("%.17g", s.iter_cost_ms) + '\n' + fmt("%.17g", s.lr) +
                    '\n' + fmt("%.17g", s.momentum) + '\n' + s.momentum_rule + '\n' +
                    fmt("%.17g", s.target_accuracy) + '\n' + r.provenance.rule + '\n';
  for (auto& kv : r.provenance.settings)
    key += kv.first + '=' + kv.second + '\n';
  return key;
}

}  // namespace

double value_at(const std::vector<std::pair<double, double>>& c, double x) {
  auto it = std::lower_bound(c.begin(), c.end(), x, [](auto& p, double v) { return p.first < v; });
  if (it == c.end())
    return c.back().second;
  if (it == c.begin() || it->first == x)
    return it->second;
  auto prev = it - 1;
  double w = (x - prev->first) / (it->first - prev->first);
  return prev->second + w * (it->second - prev->second);
}

spread series::over(const std::function<std::optional<double>(const run_record&)>& figure) const {
  spread out;
  for (auto* r : runs)
    out.add(figure(*r));
  return out;
}

std::string series::seeds() const {
  std::string out;
  for (auto* r : runs)
    out += (out.empty() ? "" : ", ") + std::to_string(r->summary.seed);
  return out;
}

std::vector<series> by_seed(const std::vector<run_record>& runs) {
  std::vector<series> out;
  std::vector<std::string> keys;
  for (auto& r : runs) {
    auto key = experiment_key(r);
    auto it = std::find(keys.begin(), keys.end(), key);
    auto& s = it == keys.end() ? (keys.push_back(key), out.emplace_back()) : out[static_cast<size_t>(it - keys.begin())];
    bool twin = std::any_of(s.runs.begin(), s.runs.end(), [&](auto* o) { return o->summary.seed == r.summary.seed; });
    if (twin) {  // the same experiment twice (same seed): two lines, not one
      keys.push_back(key + "#" + std::to_string(keys.size()));
      out.emplace_back().runs.push_back(&r);
    } else {
      s.runs.push_back(&r);
    }
  }
  return out;
}

std::vector<std::pair<double, double>> accuracy_curve(const run_summary& s, bool by_samples) {
  std::vector<std::pair<double, double>> out;
  for (auto& e : s.evals)
    out.push_back({by_samples ? static_cast<double>(e.samples) : e.t_s, e.accuracy});
  if (s.samples > 0 && s.final_accuracy >= 0)
    out.push_back({by_samples ? static_cast<double>(s.samples) : s.run_time_s, s.final_accuracy});
  return out;
}

std::vector<band_point> accuracy_band(const series& s, bool by_samples) {
  std::vector<std::vector<std::pair<double, double>>> curves;
  double from = -1e300, to = 1e300;
  for (auto* r : s.runs) {
    curves.push_back(accuracy_curve(r->summary, by_samples));
    if (curves.back().empty())
      return {};
    from = std::max(from, curves.back().front().first);
    to = std::min(to, curves.back().back().first);
  }
  std::vector<double> xs;
  for (auto& c : curves)
    for (auto& p : c)
      if (p.first >= from && p.first <= to)
        xs.push_back(p.first);
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::vector<band_point> out;
  for (double x : xs) {
    spread a;
    for (auto& c : curves)
      a.add(value_at(c, x));
    out.push_back({x, a.mean(), a.lo(), a.hi()});
  }
  return out;
}

}  // namespace syncpoint::report::parts
