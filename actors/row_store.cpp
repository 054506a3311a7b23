// One sparse table's rows on one shard (actors/row_store.hpp). Written by hand:
// no Debian library keeps rows with per-row optimizer state and eviction
// (docs/architecture.md, "Hand-written pieces"). An unordered_map of rows and
// an ordered set for eviction; an open-addressed slab is the next step, once
// bench/ measures the table sizes of issue 61.
#include "actors/row_store.hpp"

#include <cmath>
#include <map>
#include <algorithm>

namespace syncpoint {


row_store::row_store(table_spec spec, uint64_t seed) : spec_(std::move(spec)), seed_(seed) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument("table '" + spec_.name + "': " + why); };
  if (spec_.width == 0)
    bad("a row of width 0");
  if ((spec_.capacity == row_capacity::lru || spec_.capacity == row_capacity::lfu) && spec_.max_rows == 0)
    bad("lru and lfu need the most rows to keep (max_rows > 0)");
  if (spec_.capacity == row_capacity::ttl && spec_.ttl_steps == 0)
    bad("ttl needs the steps a row may stay untouched (ttl_steps > 0)");
  if (spec_.admit_after == 0)
    bad("admit_after counts sightings from 1");
  if (!(spec_.init_scale >= 0) || !(spec_.eps > 0) || !(spec_.beta1 >= 0 && spec_.beta1 < 1) ||
      !(spec_.beta2 >= 0 && spec_.beta2 < 1))
    bad("init_scale >= 0, eps > 0 and betas in [0, 1)");
}

std::vector<float> row_store::initial_row(uint64_t key) const {
  return syncpoint::initial_row(spec_, seed_, key);
}

std::pair<uint64_t, uint64_t> row_store::rank_of(const row& r) const {
  // lfu: fewest touches first, the least recent of equals first; lru and ttl: least recent first.
  return spec_.capacity == row_capacity::lfu ? std::make_pair(r.touches, r.last) : std::make_pair(r.last, uint64_t{0});
}

void row_store::touch(uint64_t key, row& r, uint64_t step) {
  bool ordered = spec_.capacity != row_capacity::unbounded;
  if (ordered)
    order_.erase({rank_of(r), key});
  r.last = step;
  ++r.touches;
  if (ordered)
    order_.insert({rank_of(r), key});
}

void row_store::remember(uint64_t key, const row& r) {
  for (auto& [version, p] : pins_)
    p.before.emplace(key, r.values);  // the first change since the pin keeps the row of then
}

void row_store::keep_versions(const std::set<uint64_t>& versions, uint64_t now) {
  for (auto it = pins_.begin(); it != pins_.end();)
    it = versions.count(it->first) ? std::next(it) : pins_.erase(it);
  if (versions.count(now))
    pins_[now];
}

uint64_t row_store::bytes_per_row(const table_spec& spec) {
  uint64_t copies = spec.optimizer == row_optimizer::adam ? 3 : spec.optimizer == row_optimizer::adagrad ? 2 : 1;
  return spec.width * copies * sizeof(float);
}

void row_store::evict_one() {
  auto first = order_.begin();
  if (!pins_.empty())
    remember(first->second, rows_.at(first->second));
  rows_.erase(first->second);
  order_.erase(first);
  ++evictions_;
}

row_store::row& row_store::make(uint64_t key, uint64_t step) {
  if ((spec_.capacity == row_capacity::lru || spec_.capacity == row_capacity::lfu) && rows_.size() >= spec_.max_rows)
    evict_one();
  auto& r = rows_[key];
  r.values = initial_row(key);
  if (spec_.optimizer != row_optimizer::sgd)
    r.v.assign(spec_.width, 0.0f);
  if (spec_.optimizer == row_optimizer::adam)
    r.m.assign(spec_.width, 0.0f);
  r.last = step;
  if (spec_.capacity != row_capacity::unbounded)
    order_.insert({rank_of(r), key});
  return r;
}

std::vector<float> row_store::pull(const std::vector<uint64_t>& keys, uint64_t step, uint64_t at) {
  std::vector<float> out;
  out.reserve(keys.size() * spec_.width);
  auto old = pins_.find(at);
  for (auto key : keys) {
    if (old != pins_.end()) {
      auto then = old->second.before.find(key);
      if (then != old->second.before.end()) {  // changed (or evicted) since that version
        ++hits_;
        out.insert(out.end(), then->second.begin(), then->second.end());
        continue;
      }
    }
    auto it = rows_.find(key);
    if (it != rows_.end()) {
      ++hits_;
      touch(key, it->second, step);
      out.insert(out.end(), it->second.values.begin(), it->second.values.end());
      continue;
    }
    ++misses_;
    auto& seen = sightings_[key];
    if (++seen < spec_.admit_after) {
      auto init = initial_row(key);
      out.insert(out.end(), init.begin(), init.end());
      continue;
    }
    sightings_.erase(key);
    auto& r = make(key, step);
    touch(key, r, step);
    out.insert(out.end(), r.values.begin(), r.values.end());
  }
  return out;
}

std::vector<float> row_store::peek(const std::vector<uint64_t>& keys) const {
  std::vector<float> out;
  out.reserve(keys.size() * spec_.width);
  for (auto key : keys) {
    auto it = rows_.find(key);
    if (it != rows_.end()) {
      out.insert(out.end(), it->second.values.begin(), it->second.values.end());
    } else {
      auto init = initial_row(key);
      out.insert(out.end(), init.begin(), init.end());
    }
  }
  return out;
}

void row_store::push(const std::vector<uint64_t>& keys, const float* grads, double lr, uint64_t step, float scale) {
  size_t n = keys.size() * spec_.width;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(grads[i]))
      throw std::invalid_argument("table '" + spec_.name + "': a non-finite value in the row gradient of key " +
                                  std::to_string(keys[i / spec_.width]));
  // A key twice in one push: its gradients summed, one optimizer step.
  std::map<uint64_t, std::vector<float>> summed;
  for (size_t k = 0; k < keys.size(); ++k) {
    auto& g = summed[keys[k]];
    g.resize(spec_.width, 0.0f);
    for (uint32_t j = 0; j < spec_.width; ++j)
      g[j] += grads[k * spec_.width + j];
  }
  for (auto& [key, g] : summed) {
    auto it = rows_.find(key);
    if (it == rows_.end())
      continue;  // not admitted, or evicted since its pull
    auto& r = it->second;
    if (!pins_.empty())
      remember(key, r);
    touch(key, r, step);
    if (scale != 1.0f)
      for (auto& x : g)
        x = scale * x;
    if (spec_.optimizer == row_optimizer::sgd) {
      const auto rate = static_cast<float>(lr);
      for (uint32_t j = 0; j < spec_.width; ++j)
        r.values[j] = r.values[j] - rate * g[j];
    } else if (spec_.optimizer == row_optimizer::adagrad) {  // torch.optim.Adagrad's rule, per row
      for (uint32_t j = 0; j < spec_.width; ++j) {
        r.v[j] += g[j] * g[j];
        r.values[j] = static_cast<float>(r.values[j] - lr * g[j] / (std::sqrt(static_cast<double>(r.v[j])) + spec_.eps));
      }
    } else {  // lazy Adam: the row's own step count for the bias corrections (torch.optim.Adam's rule)
      ++r.t;
      double c1 = 1 - std::pow(spec_.beta1, static_cast<double>(r.t));
      double c2 = 1 - std::pow(spec_.beta2, static_cast<double>(r.t));
      for (uint32_t j = 0; j < spec_.width; ++j) {
        r.m[j] = static_cast<float>(spec_.beta1 * r.m[j] + (1 - spec_.beta1) * g[j]);
        r.v[j] = static_cast<float>(spec_.beta2 * r.v[j] + (1 - spec_.beta2) * g[j] * g[j]);
        double denom = std::sqrt(static_cast<double>(r.v[j])) / std::sqrt(c2) + spec_.eps;
        r.values[j] = static_cast<float>(r.values[j] - lr / c1 * r.m[j] / denom);
      }
    }
  }
  expire(step);
}

void row_store::expire(uint64_t step) {
  if (spec_.capacity != row_capacity::ttl)
    return;
  while (!order_.empty() && order_.begin()->first.first + spec_.ttl_steps < step)
    evict_one();
}

saved_rows row_store::save_rows(uint64_t from, uint64_t max) {
  if (from == 0) {
    saving_.clear();
    saving_.reserve(rows_.size() + sightings_.size());
    for (auto& [key, r] : rows_)
      saving_.push_back(key);
    std::sort(saving_.begin(), saving_.end());
    saving_rows_ = saving_.size();
    for (auto& [key, n] : sightings_)
      saving_.push_back(key);
    std::sort(saving_.begin() + static_cast<std::ptrdiff_t>(saving_rows_), saving_.end());
  }
  saved_rows c;
  auto end = std::min<uint64_t>(saving_.size(), from + std::max<uint64_t>(1, max));
  for (auto i = std::min<uint64_t>(from, end); i < end; ++i) {
    auto key = saving_[i];
    if (i >= saving_rows_) {
      c.sighted.push_back(key);
      c.sightings.push_back(sightings_.at(key));
      continue;
    }
    auto& r = rows_.at(key);
    c.keys.push_back(key);
    c.values.insert(c.values.end(), r.values.begin(), r.values.end());
    c.first.insert(c.first.end(), r.m.begin(), r.m.end());
    c.second.insert(c.second.end(), r.v.begin(), r.v.end());
    c.steps.push_back(r.t);
    c.last_touch.push_back(r.last);
    c.touches.push_back(r.touches);
  }
  c.last = end >= saving_.size();
  c.next = c.last ? 0 : end;
  if (c.last)
    saving_ = {};
  return c;
}

void row_store::load_rows(const saved_rows& c, const std::function<bool(uint64_t)>& mine) {
  auto n = c.keys.size();
  auto w = spec_.width;
  bool has_v = spec_.optimizer != row_optimizer::sgd, has_m = spec_.optimizer == row_optimizer::adam;
  auto fits = [&](const std::vector<float>& v, bool wanted) { return v.size() == (wanted ? n * w : 0); };
  if (c.values.size() != n * w || !fits(c.second, has_v) || !fits(c.first, has_m) ||
      c.steps.size() != n || c.last_touch.size() != n || c.touches.size() != n || c.sighted.size() != c.sightings.size())
    throw std::invalid_argument("table '" + spec_.name + "': a checkpoint's chunk of " + std::to_string(n) +
                                " rows does not fit rows of width " + std::to_string(w) + " and its optimizer");
  auto part = [&](const std::vector<float>& v, size_t i) {
    return std::vector<float>(v.begin() + static_cast<std::ptrdiff_t>(i * w),
                              v.begin() + static_cast<std::ptrdiff_t>((i + 1) * w));
  };
  for (size_t i = 0; i < n; ++i) {
    if (!mine(c.keys[i]))
      continue;
    auto& r = rows_[c.keys[i]];
    r.values = part(c.values, i);
    if (has_m)
      r.m = part(c.first, i);
    if (has_v)
      r.v = part(c.second, i);
    r.t = c.steps[i];
    r.last = c.last_touch[i];
    r.touches = c.touches[i];
    if (spec_.capacity != row_capacity::unbounded)
      order_.insert({rank_of(r), c.keys[i]});
  }
  for (size_t i = 0; i < c.sighted.size(); ++i)
    if (mine(c.sighted[i]))
      sightings_[c.sighted[i]] = c.sightings[i];
}

saved_table row_store::save_state() const {
  saved_table s;
  s.evictions = evictions_;
  s.hits = hits_;
  s.misses = misses_;
  for (auto& [version, p] : pins_) {
    saved_pin pin{version, {}, {}};
    std::vector<uint64_t> keys;
    for (auto& [key, values] : p.before)
      keys.push_back(key);
    std::sort(keys.begin(), keys.end());
    for (auto key : keys) {
      auto& values = p.before.at(key);
      pin.keys.push_back(key);
      pin.values.insert(pin.values.end(), values.begin(), values.end());
    }
    s.pins.push_back(std::move(pin));
  }
  return s;
}

void row_store::load_state(const saved_table& s, const std::function<bool(uint64_t)>& mine, bool counters) {
  if (counters) {
    evictions_ += s.evictions;
    hits_ += s.hits;
    misses_ += s.misses;
  }
  auto w = spec_.width;
  for (auto& pin : s.pins) {
    if (pin.values.size() != pin.keys.size() * w)
      throw std::invalid_argument("table '" + spec_.name + "': a checkpoint's kept version " +
                                  std::to_string(pin.version) + " does not fit rows of width " + std::to_string(w));
    auto& p = pins_[pin.version];
    for (size_t i = 0; i < pin.keys.size(); ++i)
      if (mine(pin.keys[i]))
        p.before.emplace(pin.keys[i], std::vector<float>(pin.values.begin() + static_cast<std::ptrdiff_t>(i * w),
                                                         pin.values.begin() + static_cast<std::ptrdiff_t>((i + 1) * w)));
  }
}

}  // namespace syncpoint
