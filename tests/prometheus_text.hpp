// A small, strict reader of Prometheus's text exposition format (0.0.4), for
// the tests of /metrics: every sample belongs to a family declared by HELP and
// TYPE before it, names and labels are well formed, counters end in _total,
// a histogram's buckets are cumulative and end at +Inf with its _count. It
// throws std::runtime_error naming the line that breaks a rule.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncpoint::testing {

struct prom_sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct prom_text {
  std::map<std::string, std::string> types;  // family -> counter, gauge, histogram
  std::vector<prom_sample> samples;

  /// The samples of `name` whose labels include `having`.
  std::vector<prom_sample> find(const std::string& name, const std::map<std::string, std::string>& having = {}) const {
    std::vector<prom_sample> out;
    for (auto& s : samples) {
      if (s.name != name)
        continue;
      bool all = true;
      for (auto& [k, v] : having)
        all = all && s.labels.count(k) && s.labels.at(k) == v;
      if (all)
        out.push_back(s);
    }
    return out;
  }
  /// The one sample of `name` with labels `having`; throws when there is not exactly one.
  double value(const std::string& name, const std::map<std::string, std::string>& having = {}) const {
    auto xs = find(name, having);
    if (xs.size() != 1)
      throw std::runtime_error(std::to_string(xs.size()) + " samples of " + name);
    return xs[0].value;
  }
  /// The sum over the samples of `name` with labels `having`.
  double sum(const std::string& name, const std::map<std::string, std::string>& having = {}) const {
    double total = 0;
    for (auto& s : find(name, having))
      total += s.value;
    return total;
  }
};

inline double prom_number(const std::string& s, const std::string& line) {
  if (s == "NaN")
    return std::nan("");
  if (s == "+Inf" || s == "Inf")
    return INFINITY;
  if (s == "-Inf")
    return -INFINITY;
  char* end = nullptr;
  double x = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0')
    throw std::runtime_error("not a number: '" + s + "' in: " + line);
  return x;
}

inline const std::regex& prom_name_re() {
  static const std::regex re("[a-zA-Z_:][a-zA-Z0-9_:]*");
  return re;
}

// A "# HELP" or "# TYPE" line: each once per family, a counter's name ending in _total.
inline void prom_comment(const std::string& line, std::set<std::string>& helped, prom_text& out) {
  std::istringstream words(line);
  std::string hash, what, name, rest;
  words >> hash >> what >> name;
  std::getline(words, rest);
  if (what == "HELP") {
    if (!std::regex_match(name, prom_name_re()) || !helped.insert(name).second)
      throw std::runtime_error("bad or repeated HELP: " + line);
  } else if (what == "TYPE") {
    auto type = rest.substr(rest.find_first_not_of(' '));
    if (!std::regex_match(name, prom_name_re()) || out.types.count(name) ||
        (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped"))
      throw std::runtime_error("bad or repeated TYPE: " + line);
    if (type == "counter" && name.size() < 6)
      throw std::runtime_error("counter name: " + line);
    if (type == "counter" && name.compare(name.size() - 6, 6, "_total") != 0)
      throw std::runtime_error("a counter's name must end in _total: " + line);
    out.types[name] = type;
  }
}

// The labels from the '{' at `i` to its '}' into `s`; returns where they end.
inline size_t prom_labels(const std::string& line, size_t i, prom_sample& s) {
  static const std::regex label_re("[a-zA-Z_][a-zA-Z0-9_]*");
  ++i;
  while (line.at(i) != '}') {
    auto eq = line.find('=', i);
    auto label = line.substr(i, eq - i);
    if (eq == std::string::npos || !std::regex_match(label, label_re) || line.at(eq + 1) != '"')
      throw std::runtime_error("bad label: " + line);
    std::string value;
    size_t j = eq + 2;
    for (; line.at(j) != '"'; ++j) {
      if (line[j] == '\\') {
        char c = line.at(++j);
        value += c == 'n' ? '\n' : c;
      } else {
        value += line[j];
      }
    }
    if (!s.labels.emplace(label, value).second)
      throw std::runtime_error("repeated label: " + line);
    i = j + 1;
    if (line.at(i) == ',')
      ++i;
  }
  return i + 1;
}

// Histograms: cumulative buckets per series, the last +Inf and equal to _count.
inline void prom_check_histograms(const prom_text& out) {
  std::map<std::string, std::vector<const prom_sample*>> series;
  for (auto& s : out.samples)
    if (s.name.size() > 7 && s.name.compare(s.name.size() - 7, 7, "_bucket") == 0) {
      auto labels = s.labels;
      labels.erase("le");
      std::string key = s.name;
      for (auto& [k, v] : labels)
        key += "|" + k + "=" + v;
      series[key].push_back(&s);
    }
  for (auto& [key, buckets] : series) {
    double last = -1, bound = -INFINITY;
    for (auto* b : buckets) {
      if (!b->labels.count("le"))
        throw std::runtime_error("a bucket without le: " + key);
      double le = prom_number(b->labels.at("le"), key);
      if (le <= bound || b->value < last)
        throw std::runtime_error("buckets out of order or not cumulative: " + key);
      bound = le;
      last = b->value;
    }
    if (!std::isinf(bound))
      throw std::runtime_error("no +Inf bucket: " + key);
    auto base = buckets[0]->name.substr(0, buckets[0]->name.size() - 7);
    auto labels = buckets[0]->labels;
    labels.erase("le");
    if (out.value(base + "_count", labels) != last)
      throw std::runtime_error("+Inf bucket differs from _count: " + key);
  }
}

inline prom_text parse_prometheus(const std::string& text) {
  prom_text out;
  std::set<std::string> helped;
  std::istringstream in(text);
  std::string line;
  auto family_of = [&](const std::string& name) -> std::string {
    if (out.types.count(name))
      return name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string sfx = suffix;
      if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
        auto base = name.substr(0, name.size() - sfx.size());
        if (out.types.count(base) && out.types.at(base) == "histogram")
          return base;
      }
    }
    throw std::runtime_error("a sample of no declared family: " + line);
  };
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    if (line[0] == '#') {
      prom_comment(line, helped, out);
      continue;
    }
    prom_sample s;
    size_t i = line.find_first_of("{ ");
    if (i == std::string::npos)
      throw std::runtime_error("no value: " + line);
    s.name = line.substr(0, i);
    if (!std::regex_match(s.name, prom_name_re()))
      throw std::runtime_error("bad metric name: " + line);
    if (line[i] == '{')
      i = prom_labels(line, i, s);
    if (line.at(i) != ' ')
      throw std::runtime_error("no space before the value: " + line);
    auto value = line.substr(i + 1);
    if (auto sp = value.find(' '); sp != std::string::npos)
      value = value.substr(0, sp);  // a timestamp may follow
    s.value = prom_number(value, line);
    auto family = family_of(s.name);
    if (!helped.count(family))
      throw std::runtime_error("a family without HELP: " + line);
    out.samples.push_back(std::move(s));
  }
  prom_check_histograms(out);
  return out;
}

}  // namespace syncpoint::testing
