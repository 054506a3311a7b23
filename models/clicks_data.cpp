// --dataset clicks (docs/sparse.md): a generated click log with a planted
// structure, so that a model's AUC can be read against the best possible.
// Each example: `numeric` standard normal features, then `fields` ids, each
// drawn Zipf(s) over its field's vocabulary (keys / fields ids, the most
// popular first). The click is drawn from p = sigmoid(logit), where
//   logit = b0 + w . numeric + sum_f bias(f, id_f) + sum_{f<g} <u(f, id_f), u(g, id_g)> / sqrt(pairs)
// with per-id biases and rank-`rank` factors drawn from the id's own
// generator (no table of them is kept: 10^7 keys cost nothing). The
// Bayes-optimal AUC is that of the true p on the test set (clicks_best_auc).
#include <syncpoint/data_registry.hpp>

#include "models/auc.hpp"
#include "models/name_options.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace syncpoint {

namespace {

struct clicks_options {
  int64_t keys = 1000000;
  int64_t fields = 26;
  int64_t numeric = 13;
  int64_t rank = 4;
  double zipf = 1.1;
};

clicks_options parse_clicks(const std::string& spec) {
  clicks_options o;
  const std::string known = "keys, fields, numeric, rank, zipf";
  std::vector<std::pair<std::string, std::string>> items;
  try {
    items = name_options(spec, "clicks", known);
  } catch (const std::invalid_argument& e) {
    throw data_error(e.what());
  }
  for (auto& [name, value] : items) {
    if (name != "keys" && name != "fields" && name != "numeric" && name != "rank" && name != "zipf")
      throw data_error("clicks: no option '" + name + "' (" + known + ")");
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(v >= 0))
      throw data_error("clicks: '" + name + "=" + value + "' is not a number >= 0");
    if (name == "keys")
      o.keys = static_cast<int64_t>(v);
    else if (name == "fields")
      o.fields = static_cast<int64_t>(v);
    else if (name == "numeric")
      o.numeric = static_cast<int64_t>(v);
    else if (name == "rank")
      o.rank = static_cast<int64_t>(v);
    else
      o.zipf = v;
  }
  if (o.fields < 1 || o.keys < o.fields || o.keys / o.fields > 16777216 || o.rank < 1 || !(o.zipf > 0))
    throw data_error("clicks: needs fields >= 1, fields <= keys <= fields * 2^24, rank >= 1 and zipf > 0");
  return o;
}

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A cheap generator (splitmix64): one per example and per id, made millions of times.
struct splitmix {
  using result_type = uint64_t;
  uint64_t state;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return UINT64_MAX; }
  uint64_t operator()() { return mix(state += 0x9e3779b97f4a7c15ULL); }
};

// The hidden truth of one id: its bias and its factor, from its own generator.
struct id_truth {
  double bias;
  std::vector<double> factor;
};

class clicks_world {
 public:
  clicks_world(clicks_options o, uint64_t seed) : o_(o), seed_(seed), vocab_(o.keys / o.fields) {
    cdf_.resize(static_cast<size_t>(vocab_));
    double sum = 0;
    for (int64_t r = 0; r < vocab_; ++r)
      cdf_[static_cast<size_t>(r)] = sum += std::pow(static_cast<double>(r + 1), -o.zipf);
    for (auto& c : cdf_)
      c /= sum;
    std::mt19937_64 rng(mix(seed ^ 0x636c69636b73ULL));
    std::normal_distribution<double> w(0.0, 0.3);
    for (int64_t j = 0; j < o.numeric; ++j)
      weights_.push_back(w(rng));
    pairs_ = static_cast<double>(o.fields * (o.fields - 1) / 2);
  }

  int64_t dim() const { return o_.numeric + o_.fields; }

  // Example i of the set `part` (0: train, 1: test): its floats, and its true click probability.
  double make(uint64_t part, int64_t i, float* x) const {
    splitmix rng{mix(seed_ ^ mix(part * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(i)))};
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> unit;
    double logit = -1.5;
    for (int64_t j = 0; j < o_.numeric; ++j) {
      double v = normal(rng);
      x[j] = static_cast<float>(v);
      logit += weights_[static_cast<size_t>(j)] * v;
    }
    std::vector<id_truth> ids;
    for (int64_t f = 0; f < o_.fields; ++f) {
      auto id = std::lower_bound(cdf_.begin(), cdf_.end(), unit(rng)) - cdf_.begin();
      id = std::min<int64_t>(id, vocab_ - 1);
      x[o_.numeric + f] = static_cast<float>(id);
      ids.push_back(truth(f, id));
      logit += ids.back().bias;
    }
    double interaction = 0;
    for (size_t f = 0; f < ids.size(); ++f)
      for (size_t g = f + 1; g < ids.size(); ++g)
        for (int64_t r = 0; r < o_.rank; ++r)
          interaction += ids[f].factor[static_cast<size_t>(r)] * ids[g].factor[static_cast<size_t>(r)];
    logit += interaction / std::sqrt(pairs_);
    return 1 / (1 + std::exp(-logit));
  }

 private:
  clicks_options o_;
  uint64_t seed_;
  int64_t vocab_;
  std::vector<double> cdf_;
  std::vector<double> weights_;
  double pairs_ = 1;

  id_truth truth(int64_t f, int64_t id) const {
    splitmix rng{mix(seed_ ^ mix((static_cast<uint64_t>(f + 1) << 40) | static_cast<uint64_t>(id)))};
    std::normal_distribution<double> normal;
    id_truth t{0.4 * normal(rng), {}};
    for (int64_t r = 0; r < o_.rank; ++r)
      t.factor.push_back(normal(rng) / std::sqrt(static_cast<double>(o_.rank)) * 1.2);
    return t;
  }
};

dataset make_part(const clicks_world& world, uint64_t part, int64_t n, uint64_t seed, std::vector<double>* truth) {
  std::mt19937_64 coin(mix(seed ^ (0xc11c5ULL + part)));
  std::uniform_real_distribution<double> unit;
  return dataset_from(n, {world.dim()}, 2, [&](int64_t i, float* x) {
    double p = world.make(part, i, x);
    if (truth)
      truth->push_back(p);
    return unit(coin) < p ? int64_t{1} : int64_t{0};
  });
}

}  // namespace

train_test make_clicks(const data_request& r) {
  clicks_world world(parse_clicks(r.options), r.seed);
  return {make_part(world, 0, r.train_size, r.seed, nullptr), make_part(world, 1, r.test_size, r.seed, nullptr)};
}

double clicks_best_auc(const data_request& r) {
  clicks_world world(parse_clicks(r.options), r.seed);
  std::vector<double> p;
  auto test = make_part(world, 1, r.test_size, r.seed, &p);
  std::vector<std::pair<double, int64_t>> scored;
  for (size_t i = 0; i < p.size(); ++i)
    scored.emplace_back(p[i], test.y[i]);
  return auc_of(std::move(scored));
}

}  // namespace syncpoint
