// A worker that makes its own data: each worker plays a 10-armed bandit
// (an environment written here) with a softmax policy over the arms, and
// pushes the policy gradient of its rewards (REINFORCE with the batch's mean
// reward as the baseline). The weights are the policy's 10 logits; the
// evaluation is the policy's expected return. The program fails unless that
// return closes at least 80% of the gap between a random policy and the best
// arm.
//
//   example_bandit [PROTOCOL] [CLOCK]     (default: asp virtual)
#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>

namespace {

constexpr int arms = 10;
constexpr int pulls = 32;  // per gradient

// The environment: arm k pays its mean plus noise; the means come from the job's seed.
struct bandit {
  std::vector<double> mean;
  explicit bandit(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    for (int k = 0; k < arms; ++k)
      mean.push_back(u(rng));
  }
  double pay(int arm, std::mt19937_64& rng) const {
    std::normal_distribution<double> noise(0, 0.5);
    return mean[static_cast<size_t>(arm)] + noise(rng);
  }
};

std::vector<double> policy(const std::vector<float>& logits) {
  double top = *std::max_element(logits.begin(), logits.end()), sum = 0;
  std::vector<double> p(logits.size());
  for (size_t k = 0; k < p.size(); ++k)
    sum += p[k] = std::exp(logits[k] - top);
  for (auto& v : p)
    v /= sum;
  return p;
}

double expected_return(const std::vector<float>& logits, const bandit& env) {
  auto p = policy(logits);
  double r = 0;
  for (int k = 0; k < arms; ++k)
    r += p[static_cast<size_t>(k)] * env.mean[static_cast<size_t>(k)];
  return r;
}

void play(syncpoint::worker_client& ps) {
  bandit env(ps.context().seed);
  std::mt19937_64 rng(ps.context().seed * 7717 + static_cast<uint64_t>(ps.context().worker));
  if (auto saved = ps.resumed_state()) {  // a resumed run: the engine where the checkpoint found it
    std::istringstream in(*saved);
    in >> rng;
  }
  ps.on_save([&] {
    std::ostringstream out;
    out << rng;
    return out.str();
  });
  std::vector<float> g(arms);
  for (;;) {
    auto p = policy(ps.pull().values);
    std::discrete_distribution<int> choose(p.begin(), p.end());
    int chosen[pulls];
    double reward[pulls], mean_reward = 0;
    for (int i = 0; i < pulls; ++i) {
      chosen[i] = choose(rng);
      reward[i] = env.pay(chosen[i], rng);
      mean_reward += reward[i] / pulls;
    }
    // d/dlogits of -E[r]: -(r - baseline) (onehot(a) - p), averaged over the pulls.
    std::fill(g.begin(), g.end(), 0.0f);
    for (int i = 0; i < pulls; ++i)
      for (int k = 0; k < arms; ++k)
        g[static_cast<size_t>(k)] -= static_cast<float>((reward[i] - mean_reward) *
                                                        ((k == chosen[i] ? 1.0 : 0.0) - p[static_cast<size_t>(k)]) / pulls);
    ps.report("return", mean_reward);
    if (ps.push(g, pulls, static_cast<float>(-mean_reward)).stop)
      return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  syncpoint::register_model("bandit-policy", [] { return syncpoint::weights_only(arms); });  // uniform at first
  syncpoint::register_client_loop("bandit", play,
                                  [](syncpoint::model& m, const syncpoint::dataset&, const syncpoint::loop_context& job) {
                                    bandit env(job.seed);
                                    return std::vector<syncpoint::metric>{
                                      {"expected return", expected_return(m.current_weights(), env)}};
                                  });
  syncpoint::job_config cfg;
  cfg.protocol = argc > 1 ? argv[1] : "asp";
  cfg.clock = argc > 2 && std::string(argv[2]) == "real" ? syncpoint::clock_kind::real
                                                          : syncpoint::clock_kind::virtual_time;
  cfg.workers = 4;
  cfg.straggler = "2:x3";
  cfg.model = "bandit-policy";
  cfg.loop = "bandit";
  cfg.dataset = "blank";  // the environment makes the data; an epoch is 3200 pulls
  cfg.train_limit = 3200;
  cfg.batch = pulls;
  cfg.epochs = 20;
  cfg.lr = 0.5;
  cfg.momentum = 0;
  cfg.eval_every = 5;
  cfg.iter_cost_ms = 1;
  cfg.progress = false;
  auto r = syncpoint::train(cfg);
  for (auto& f : r.failures)
    std::fprintf(stderr, "%s\n", f.c_str());
  bandit env(cfg.seed);
  double random = 0, best = 0;
  for (auto m : env.mean) {
    random += m / arms;
    best = std::max(best, m);
  }
  double learned = expected_return(r.final_model.values.vec(), env);
  double closed = (learned - random) / (best - random);
  std::printf("expected return: random policy %.3f, best arm %.3f, learned %.3f (%.0f%% of the gap closed; goal 80%%)\n",
              random, best, learned, 100 * closed);
  return r.failures.empty() && closed >= 0.8 ? 0 : 1;
}
