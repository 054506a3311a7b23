// The compressors' registry (include/syncpoint/compressor.hpp): each file in
// compressors/ adds itself at start-up, as protocols do.
#include <syncpoint/compressor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <stdexcept>

namespace syncpoint {

namespace {

struct entry {
  std::string summary;
  bool takes_ratio = false;
  compressor_factory make;
};

struct registry {
  std::mutex lock;
  std::map<std::string, entry> by_name;
};

registry& the_registry() {
  static registry r;
  return r;
}

std::string valid_names() {
  std::string out = "none";
  for (auto& [name, e] : the_registry().by_name)
    out += ", " + name + (e.takes_ratio ? ":R" : "");
  return out;
}

}  // namespace

bool register_compressor(const std::string& name, const std::string& summary, bool takes_ratio,
                         compressor_factory factory) {
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard{r.lock};
  if (name.empty() || name == "none" || name.find(':') != std::string::npos || r.by_name.count(name)) {
    std::fprintf(stderr, "syncpoint: a compressor named '%s' cannot be registered (taken, or not a name)\n",
                 name.c_str());
    return false;
  }
  r.by_name[name] = {summary, takes_ratio, std::move(factory)};
  return true;
}

std::unique_ptr<compressor> make_compressor(const std::string& spec) {
  if (spec == "none")
    return nullptr;
  if (spec.empty())
    throw std::invalid_argument("no compressor named (none: the gradient as it is)");
  auto colon = spec.find(':');
  auto name = spec.substr(0, colon);
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard{r.lock};
  auto it = r.by_name.find(name);
  if (it == r.by_name.end())
    throw std::invalid_argument("unknown compressor '" + name + "' (valid: " + valid_names() + ")");
  auto& e = it->second;
  if (!e.takes_ratio) {
    if (colon != std::string::npos)
      throw std::invalid_argument("'" + name + "' takes no ratio: give it as '" + name + "'");
    return e.make(0);
  }
  if (colon == std::string::npos)
    throw std::invalid_argument("'" + name + "' needs the share of values it sends: '" + name + ":R', R in (0, 1]");
  auto text = spec.substr(colon + 1);
  double ratio = 0;
  size_t used = 0;
  try {
    ratio = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(ratio) || ratio <= 0 || ratio > 1)
    throw std::invalid_argument("'" + spec + "': R must be a number in (0, 1], the share of values sent");
  return e.make(ratio);
}

size_t values_kept(double ratio, size_t n) {
  if (n == 0)
    return 0;
  // (less a hair: 0.07 * 100 is 7.000000000000001 in double, and keeps 7)
  return std::min(n, std::max<size_t>(1, static_cast<size_t>(std::ceil(ratio * static_cast<double>(n) - 1e-9))));
}

uint64_t compress_with_feedback(const compressor& c, float* values, float* residual, size_t n, uint64_t seed) {
  for (size_t i = 0; i < n; ++i) {
    values[i] += residual[i];  // what should go
    residual[i] = values[i];
  }
  auto bytes = c.compress(values, n, seed);
  for (size_t i = 0; i < n; ++i) {
    residual[i] -= values[i];  // what did not
    if (!std::isfinite(residual[i]))
      residual[i] = 0;  // a non-finite gradient is refused once, as without compression, not carried on
  }
  return bytes;
}

std::map<std::string, std::string> compressor_catalog() {
  auto& r = the_registry();
  std::lock_guard<std::mutex> guard{r.lock};
  std::map<std::string, std::string> out{{"none", "the gradient as it is: 4 bytes a value"}};
  for (auto& [name, e] : r.by_name)
    out[name + (e.takes_ratio ? ":R" : "")] = e.summary;
  return out;
}

}  // namespace syncpoint
