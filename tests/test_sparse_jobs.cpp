// Sparse tables in the PS and in jobs (issue 61, docs/sparse.md): a push's
// rows taken in all or nothing with its dense part, a pull's rows of the
// version it gets, and whole jobs of the ctr model whose table is sparse
// equal, to the byte on the virtual clock, the same model holding its table
// densely, under bsp and asp, on one shard or three.
#include "actors/parameter_server.hpp"

#include <syncpoint/data_registry.hpp>
#include <syncpoint/model.hpp>
#include <syncpoint/train.hpp>

#include "tests/ps_fixture.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <limits>

using namespace syncpoint;

namespace {

table_spec sgd_table(uint32_t width) {
  table_spec t;
  t.name = "ids";
  t.width = width;
  return t;
}

// One PS of one dense value and a table of width 2, lr 0.1, no momentum, the plain rule.
struct table_ps : testing::fixture {
  table_ps() : testing::fixture(1, 0.0, 0.0) {
    (*self)->send_exit(ps, caf::exit_reason::user_shutdown);
    ps_config c{{1.0f}, 0.1, 0.0, 0.0, 1, tracer_actor{}, sys->clock().now(), 0, 0, momentum_rule::plain};
    c.tables = {sgd_table(2)};
    c.seed = 5;
    ps = spawn_parameter_server(*sys, std::move(c));
  }

  caf::error push_rows(std::vector<uint64_t> keys, std::vector<float> values, float dense = 0) {
    caf::error result;
    gradient_push g{0, 1, 0, 8, std::vector<float>{dense}};
    g.rows = {row_block{0, std::move(keys), std::move(values)}};
    (*self)->request(ps, std::chrono::seconds(5), push_atom::value, std::move(g))
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    return result;
  }

  weights pull_rows(std::vector<uint64_t> keys) {
    weights out;
    std::vector<row_block> asked{row_block{0, std::move(keys), {}}};
    (*self)->request(ps, std::chrono::seconds(5), pull_atom::value, uint64_t{0}, asked)
      .receive([&](weights& w) { out = std::move(w); },
               [&](caf::error& e) { FAIL("pull failed: " << sys->render(e)); });
    return out;
  }
};

}  // namespace

TEST_CASE("sparse PS: rows pulled by key in any order, made from their seed, stepped by a push, and bad pushes refused whole") {
  table_ps f;
  auto first = f.pull_rows({9, 4});
  REQUIRE(first.rows.size() == 1);
  auto t = sgd_table(2);
  auto r9 = initial_row(t, 5, 9), r4 = initial_row(t, 5, 4);
  CHECK(first.rows[0].keys == std::vector<uint64_t>{9, 4});
  CHECK(first.rows[0].values == std::vector<float>{r9[0], r9[1], r4[0], r4[1]});

  REQUIRE(!f.push_rows({4}, {1.0f, -2.0f}, 0.5f));
  auto after = f.pull_rows({4, 9});
  CHECK(after.version == 1);
  CHECK(after.values.vec() == std::vector<float>{1.0f - 0.1f * 0.5f});
  CHECK(after.rows[0].values == std::vector<float>{r4[0] - 0.1f * 1.0f, r4[1] - 0.1f * -2.0f, r9[0], r9[1]});

  SUBCASE("a row of the wrong width") {
    auto err = f.push_rows({4}, {1.0f, 2.0f, 3.0f}, 0.5f);
    REQUIRE(err);
    CHECK(f.sys->render(err).find("3 values for 1 keys of width 2") != std::string::npos);
  }
  SUBCASE("a NaN row: refused, and neither the other rows nor the dense part are applied") {
    auto err = f.push_rows({4, 9}, {1.0f, 1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f}, 0.5f);
    REQUIRE(err);
    CHECK(f.sys->render(err).find("NaN") != std::string::npos);
  }
  SUBCASE("a key twice in one push, and one table in two blocks") {
    auto err = f.push_rows({4, 4}, {1.0f, 1.0f, 1.0f, 1.0f}, 0.5f);
    REQUIRE(err);
    CHECK(f.sys->render(err).find("name a key twice") != std::string::npos);
    caf::error result;
    gradient_push g{0, 1, 0, 8, std::vector<float>{0.0f}};
    g.rows = {row_block{0, {4}, {1.0f, 1.0f}}, row_block{0, {9}, {1.0f, 1.0f}}};
    (*f.self)->request(f.ps, std::chrono::seconds(5), push_atom::value, std::move(g))
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    REQUIRE(result);
    CHECK(f.sys->render(result).find("in two blocks") != std::string::npos);
  }
  SUBCASE("a table the model does not have") {
    caf::error result;
    gradient_push g{0, 1, 0, 8, std::vector<float>{0.0f}};
    g.rows = {row_block{3, {4}, {1.0f, 1.0f}}};
    (*f.self)->request(f.ps, std::chrono::seconds(5), push_atom::value, std::move(g))
      .receive([](const proceed&) {}, [&](caf::error& e) { result = std::move(e); });
    REQUIRE(result);
    CHECK(f.sys->render(result).find("table 3") != std::string::npos);
  }
  auto same = f.pull_rows({4, 9});
  CHECK(same.version == 1);
  CHECK(same.values.vec() == after.values.vec());
  CHECK(same.rows[0].values == after.rows[0].values);
}

namespace {

// The ctr model on a small click log: 4 fields of 50 ids, 2 numeric
// features; the table sparse, or dense in the weights.
job_config clicks_job(const std::string& protocol, bool dense, int shards) {
  job_config cfg;
  cfg.protocol = protocol;
  cfg.workers = 3;
  cfg.model = dense ? "ctr:fields=4,width=4,hidden=8,table=dense,vocab=50" : "ctr:fields=4,width=4,hidden=8";
  cfg.dataset = "clicks:keys=200,fields=4,numeric=2";
  cfg.train_limit = 960;
  cfg.test_limit = 300;
  cfg.batch = 16;
  cfg.epochs = 1;
  cfg.iter_cost_ms = 10;
  cfg.lr = 0.2;
  cfg.momentum = 0;
  cfg.ps_shards = shards;
  cfg.progress = false;
  return cfg;
}

// The MLP's part of the final weights (the dense twin's table follows it).
std::vector<float> mlp_of(const run_result& r, size_t mlp) {
  auto& v = r.final_model.values.vec();
  return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mlp)};
}

std::vector<eval_result> evaluations(const run_result& r) {
  std::vector<eval_result> out;
  for (auto& e : r.trace)
    if (e.kind == "eval")
      out.push_back({e.version, e.t0, e.iter, false, e.value, {}});
  return out;
}

double bytes_of(const run_result& r, const char* kind) {
  double sum = 0;
  for (auto& e : r.trace)
    if (e.kind == kind)
      sum += e.value;
  return sum;
}

}  // namespace

TEST_CASE("sparse jobs: a table pulled and pushed by key trains the same model to the byte as the table held densely") {
  for (auto protocol : {"bsp", "asp"}) {
    CAPTURE(protocol);
    auto sparse = train(clicks_job(protocol, false, 1));
    auto dense = train(clicks_job(protocol, true, 1));
    auto mlp = sparse.final_model.values.size();
    REQUIRE(dense.final_model.values.size() == mlp + 4 * 50 * 4);
    CHECK(mlp_of(sparse, mlp) == mlp_of(dense, mlp));
    auto a = evaluations(sparse), b = evaluations(dense);
    REQUIRE(a.size() == b.size());
    REQUIRE(!a.empty());
    for (size_t i = 0; i < a.size(); ++i)
      CHECK(a[i].accuracy == b[i].accuracy);
    CHECK(sparse.summary.final_accuracy == dense.summary.final_accuracy);
    // A step carries the batch's rows, not the table: fewer bytes each way.
    CHECK(bytes_of(sparse, "push") < bytes_of(dense, "push"));
    CHECK(bytes_of(sparse, "pull") < bytes_of(dense, "pull"));

    auto three = train(clicks_job(protocol, false, 3));
    CHECK(mlp_of(three, mlp) == mlp_of(sparse, mlp));
    CHECK(three.summary.final_accuracy == sparse.summary.final_accuracy);
  }
}

TEST_CASE("sparse jobs: --compress compresses the row gradients too, and a push's bytes are its keys' and the encodings'") {
  for (int shards : {1, 3}) {
    CAPTURE(shards);
    auto cfg = clicks_job("asp", false, shards);
    auto plain = train(cfg);
    cfg.compress = "fp16";
    auto half = train(cfg);
    REQUIRE(half.failures.empty());
    auto dense = static_cast<double>(plain.final_model.values.size());
    auto pushes = [](const run_result& r) {
      std::map<int, std::vector<double>> out;  // each worker's pushes' bytes, in order
      for (auto& e : r.trace)
        if (e.kind == "push")
          out[e.worker].push_back(e.value);
      return out;
    };
    auto a = pushes(plain), b = pushes(half);
    REQUIRE(a.size() == 3);
    for (auto& [w, bytes] : a) {
      CAPTURE(w);
      REQUIRE(b[w].size() == bytes.size());
      for (size_t j = 0; j < bytes.size(); ++j) {
        // Plain: 4 a dense value, 8 a key and 4 a row value (width 4); the j-th push reads the same
        // batch either way, so the same keys. fp16: 2 a value, the keys as they are.
        double keys = (bytes[j] - 4 * dense) / (8 + 4 * 4);
        REQUIRE(keys == std::floor(keys));
        CHECK(keys > 0);
        CHECK(b[w][j] == 2 * dense + 8 * keys + 2 * 4 * keys);
      }
    }
    CHECK(half.summary.final_accuracy == doctest::Approx(plain.summary.final_accuracy).epsilon(0.02));
    CHECK(half.final_model.values != plain.final_model.values);  // the rows and the MLP moved by rounded gradients
  }
}

TEST_CASE("sparse jobs: ctr learns the click log's planted structure, short of its best AUC") {
  auto cfg = clicks_job("asp", false, 1);
  cfg.dataset = "clicks:keys=2000,fields=4,numeric=2";
  cfg.train_limit = 8000;
  cfg.test_limit = 2000;
  cfg.epochs = 3;
  cfg.lr = 0.5;
  auto r = train(cfg);
  data_request req;
  req.options = "keys=2000,fields=4,numeric=2";
  req.train_size = 8000;
  req.test_size = 2000;
  req.seed = cfg.seed;
  double best = clicks_best_auc(req);
  double auc = -1;
  for (auto& e : r.trace)
    if (e.kind == "metric" && e.note == "auc")
      auc = e.value;
  MESSAGE("auc " << auc << ", best " << best);
  CHECK(best > 0.7);
  CHECK(auc > 0.6);
  CHECK(auc < best + 0.01);
}

TEST_CASE("sparse PS: in a barrier's round rows wait for the commit, unless --sparse-sync async steps them at once") {
  for (bool async : {false, true}) {
    CAPTURE(async);
    testing::fixture f(2, 0.0, 0.0);
    (*f.self)->send_exit(f.ps, caf::exit_reason::user_shutdown);
    ps_config c{{1.0f}, 0.1, 0.0, 0.0, 2, tracer_actor{}, f.sys->clock().now(), 0, 0, momentum_rule::plain};
    c.tables = {sgd_table(1)};
    c.rows_async = async;
    f.ps = spawn_parameter_server(*f.sys, std::move(c));
    (*f.self)->send(f.ps, mode_atom::value, static_cast<uint8_t>(ps_mode::buffered));
    auto pull = [&](uint64_t version) {
      weights out;
      std::vector<row_block> asked{row_block{0, {7}, {}}};
      (*f.self)->request(f.ps, std::chrono::seconds(5), pull_atom::value, version, asked)
        .receive([&](weights& w) { out = std::move(w); }, [&](caf::error& e) { FAIL(f.sys->render(e)); });
      return out;
    };
    float w0 = pull(0).rows[0].values[0];
    for (worker_id w : {0, 1}) {
      gradient_push g{w, 1, 0, 8, std::vector<float>{0.0f}};
      g.rows = {row_block{0, {7}, {w == 0 ? 2.0f : 4.0f}}};
      (*f.self)->request(f.ps, std::chrono::seconds(5), push_atom::value, std::move(g))
        .receive([](const proceed&) {}, [&](caf::error& e) { FAIL(f.sys->render(e)); });
    }
    auto before = pull(0);  // the round is not committed: still version 0
    REQUIRE(before.version == 0);
    // async: each push at once, its share (1/2) of a step; same: nothing yet.
    CHECK(before.rows[0].values[0] == (async ? (w0 - 0.1f * (0.5f * 2.0f)) - 0.1f * (0.5f * 4.0f) : w0));
    (*f.self)->send(f.ps, commit_atom::value);
    auto after = pull(1);
    // same: one step of the round's mean, (2 + 4) / 2 = 3, as the dense values take it.
    CHECK(after.rows[0].values[0] == (async ? before.rows[0].values[0] : w0 - 0.1f * ((1.0f / 16.0f) * (8 * 2.0f + 8 * 4.0f))));
  }
}

TEST_CASE("sparse jobs: --ps-memory refuses an unbounded table too large for it before the start, and ends a run whose rows pass it") {
  auto cfg = clicks_job("asp", false, 1);
  cfg.model = "ctr:fields=4,width=4,hidden=8,keys=200";
  cfg.ps_memory = 1000;  // 200 keys x 16 bytes = 3200 bytes of rows on one shard
  try {
    train(cfg);
    FAIL("a job whose table cannot fit was run");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()).find("'ids' without a capacity would hold 3200 bytes") != std::string::npos);
  }
  cfg.model = "ctr:fields=4,width=4,hidden=8,keys=200,lru=50";  // 50 rows: 800 bytes
  auto r = train(cfg);
  CHECK(r.failures.empty());
  cfg.model = "ctr:fields=4,width=4,hidden=8";  // keys unknown: the run finds out
  r = train(cfg);
  REQUIRE(!r.failures.empty());
  CHECK(r.failures.front().find("over --ps-memory 1000") != std::string::npos);
}

namespace {

// ctr whose n-th gradient of each worker holds NaN in the row of a key that
// shard 1 of 3 keeps: one push a worker with one bad row on one shard.
int rows_poisoned_at = 0;

class poisoned_rows : public model {
 public:
  explicit poisoned_rows(const model_input& in) : inner_(make_model("ctr:fields=4,width=4,hidden=8", in)) {}
  size_t size() const override { return inner_->size(); }
  std::vector<float> initial_weights(uint64_t seed) override { return inner_->initial_weights(seed); }
  void load(const float* w) override { inner_->load(w); }
  void local_step(const float* grad, float lr) override { inner_->local_step(grad, lr); }
  std::vector<float> current_weights() const override { return inner_->current_weights(); }
  std::vector<table_spec> tables() const override { return inner_->tables(); }
  std::vector<std::vector<uint64_t>> keys(const batch_view& b) override { return inner_->keys(b); }
  void load_rows(std::vector<row_block> rows) override { inner_->load_rows(std::move(rows)); }
  const std::vector<row_block>& row_gradients() const override { return grads_; }
  float gradient(const batch_view& b, float* grad) override {
    float loss = inner_->gradient(b, grad);
    grads_ = inner_->row_gradients();
    if (++calls_ == rows_poisoned_at) {
      auto& g = grads_.front();
      for (size_t i = 0; i < g.keys.size(); ++i)
        if (row_shard(g.keys[i], 3) == 1) {
          g.values[i * 4] = std::nanf("");
          break;
        }
    }
    return loss;
  }
  void predict(const batch_view& b, int64_t* labels) override { inner_->predict(b, labels); }
  std::vector<metric> evaluate(const dataset& test) override { return inner_->evaluate(test); }

 private:
  std::unique_ptr<model> inner_;
  std::vector<row_block> grads_;
  int calls_ = 0;
};

const bool poisoned_registered =
  register_model("test-poisoned-rows", [](const model_input& in) { return std::make_unique<poisoned_rows>(in); });

}  // namespace

TEST_CASE("sparse jobs: a push with a NaN row on one shard of three is applied by none, as one PS refuses it whole") {
  REQUIRE(poisoned_registered);
  for (auto protocol : {"bsp", "asp"}) {
    CAPTURE(protocol);
    auto cfg = clicks_job(protocol, false, 3);
    cfg.model = "test-poisoned-rows";
    rows_poisoned_at = 5;
    auto three = train(cfg);
    cfg.ps_shards = 1;
    auto one = train(cfg);
    CHECK(three.failures.empty());
    CHECK(three.summary.rejected == 3);  // one push of each worker
    CHECK(one.summary.rejected == 3);
    bool named = false;
    for (auto& e : three.trace)
      named = named || (e.kind == "rejected" && e.note.find("NaN") != std::string::npos &&
                        e.note.find("row gradients of table 'ids'") != std::string::npos);
    CHECK(named);
    CHECK(three.final_model.version == one.final_model.version);
    CHECK(three.final_model.values == one.final_model.values);
    CHECK(three.summary.final_accuracy == one.summary.final_accuracy);
  }
}

TEST_CASE("sparse jobs: the evaluation reads rows without changing the tables, and what sparse jobs cannot do yet is refused") {
  // An lru table smaller than the test set's keys: were the evaluator's reads
  // touches, each evaluation would evict trained rows and the run would differ.
  auto cfg = clicks_job("bsp", false, 1);
  cfg.model = "ctr:fields=4,width=4,hidden=8,lru=120";
  cfg.eval_every = 0.25;
  auto often = train(cfg);
  cfg.eval_every = 0;
  auto once = train(cfg);
  CHECK(often.final_model.values == once.final_model.values);
  CHECK(often.summary.final_accuracy == once.summary.final_accuracy);

  cfg.ps_replicas = 1;
  cfg.ps_shards = 2;
  CHECK_THROWS_WITH_AS(train(cfg), doctest::Contains("which replicated shards do not keep yet"), config_error);
}
