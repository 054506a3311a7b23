// Every example of a public header's doc comments, compiled and run (see
// test_header_examples.cpp). This file: sparse tables (<syncpoint/table.hpp>,
// a sparse loop of worker_client.hpp, torch_model.hpp's ps_embedding).
// The check that each example's lines are in its test reads this file after
// test_header_examples_parts.cpp and test_header_examples_local.cpp.
#include <syncpoint/table.hpp>
#include <syncpoint/torch_model.hpp>
#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <mutex>
#include <vector>

TEST_CASE("header examples: <syncpoint/table.hpp> declares a table") {
  syncpoint::table_spec t;
  t.name = "ids";
  t.width = 16;
  t.optimizer = syncpoint::row_optimizer::adagrad;
  t.capacity = syncpoint::row_capacity::lru;
  t.max_rows = 1000000;
  CHECK(t.admit_after == 1);  // every sighting makes its row
  CHECK(t.init == syncpoint::row_init::normal);
  // A batch's rows, as a sparse model reads them (model::load_rows):
  syncpoint::row_block rows{0, {42, 7}, std::vector<float>(2 * t.width)};
  uint32_t shard = syncpoint::row_shard(42, 3);  // which of 3 PS shards keeps key 42
  CHECK(rows.values.size() == 32);
  CHECK(shard < 3);
  CHECK(syncpoint::row_shard(42, 1) == 0);
  // A row starts from its key alone: the same first values on every shard and every worker.
  CHECK(syncpoint::initial_row(t, 1, 42) == syncpoint::initial_row(t, 1, 42));
  CHECK(syncpoint::initial_row(t, 1, 42) != syncpoint::initial_row(t, 1, 43));
}

namespace {
std::mutex rows_seen_mutex;
std::vector<float> rows_seen;  // the rows the last pull brought
}  // namespace

TEST_CASE("header examples: <syncpoint/worker_client.hpp>'s sparse loop pulls rows by key and pushes their gradients") {
  syncpoint::register_client_loop("header-rows-to-ones", [](syncpoint::worker_client& ps) {
    std::vector<uint64_t> keys{7, 42, 99};
    for (;;) {
      auto w = ps.pull({keys});                        // the rows of table 0's keys come in w.rows[0]
      {
        std::lock_guard<std::mutex> lock(rows_seen_mutex);
        rows_seen = w.rows[0].values;
      }
      std::vector<float> grad(w.values.size(), 0.0f);  // the dense part's gradient
      syncpoint::row_block g{0, w.rows[0].keys, w.rows[0].values};
      for (auto& v : g.values)                         // each row's: here, of (v - 1)^2 / 2
        v -= 1;
      if (ps.push(grad, {g}, 32).stop)
        return;
    }
  });
  syncpoint::job_config cfg;
  cfg.protocol = "asp";
  cfg.workers = 2;
  cfg.model = "ctr:fields=2,width=4,hidden=4";  // its table of width 4, trained by the loop alone
  cfg.dataset = "clicks:keys=100,fields=2";
  cfg.loop = "header-rows-to-ones";
  cfg.train_limit = 640;
  cfg.test_limit = 64;
  cfg.epochs = 5;
  cfg.lr = 0.5;
  cfg.momentum = 0;
  cfg.progress = false;
  auto r = syncpoint::train(cfg);
  REQUIRE(r.failures.empty());
  std::lock_guard<std::mutex> lock(rows_seen_mutex);
  REQUIRE(rows_seen.size() == 12);  // 3 keys of width 4
  for (float v : rows_seen)
    CHECK(v == doctest::Approx(1.0f).epsilon(0.01));
}

// -- <syncpoint/torch_model.hpp>'s ps_embedding ---------------------------------------------

namespace {

struct bag : torch::nn::Module {
  syncpoint::ps_embedding words{nullptr};
  torch::nn::Linear out{nullptr};
  bag(syncpoint::table_spec t, int64_t classes) {
    words = register_module("words", syncpoint::ps_embedding(t));
    out = register_module("out", torch::nn::Linear(t.width, classes));
  }
  // x: [batch, ids] word ids as floats; each example's mean row, then a linear layer
  torch::Tensor forward(const torch::Tensor& x) { return out(words(x.to(torch::kLong)).mean(1)); }
};

// The same network holding the table densely: an nn::Embedding of every id.
struct dense_bag : torch::nn::Module {
  torch::nn::Embedding words{nullptr};
  torch::nn::Linear out{nullptr};
  dense_bag(int64_t ids, int64_t width, int64_t classes) {
    words = register_module("words", torch::nn::Embedding(ids, width));
    out = register_module("out", torch::nn::Linear(width, classes));
  }
  torch::Tensor forward(const torch::Tensor& x) { return out(words(x.to(torch::kLong)).mean(1)); }
};

}  // namespace

TEST_CASE("header examples: <syncpoint/torch_model.hpp>'s ps_embedding gives the gradient of an nn::Embedding of the same rows") {
  syncpoint::table_spec t;
  t.name = "words";
  t.width = 4;
  auto sparse = syncpoint::wrap_module(std::make_shared<bag>(t, 3));
  auto dense = syncpoint::wrap_module(std::make_shared<dense_bag>(20, 4, 3));
  REQUIRE(sparse->tables().size() == 1);
  CHECK(sparse->tables()[0].name == "words");
  CHECK(sparse->size() == 15);  // the rows are not among the dense weights
  REQUIRE(dense->size() == 20 * 4 + 15);
  CHECK(dense->tables().empty());

  // Two examples of four ids (repeats, and ids 2 and 4 unread), labels 0 and 2.
  std::vector<float> x{3, 5, 5, 7, 1, 3, 19, 0};
  std::vector<int64_t> y{0, 2};
  int64_t shape[] = {4};
  syncpoint::batch_view b{x.data(), y.data(), 2, 4, shape, 1};
  auto keys = sparse->keys(b);  // one table: the examples' ids
  REQUIRE(keys.size() == 1);
  CHECK(keys[0] == std::vector<uint64_t>{3, 5, 5, 7, 1, 3, 19, 0});

  // The same weights each way: the dense one's embedding is every id's first row.
  auto w = sparse->initial_weights(3);
  std::vector<float> wd;
  for (uint64_t id = 0; id < 20; ++id) {
    auto row = syncpoint::initial_row(t, 1, id);
    wd.insert(wd.end(), row.begin(), row.end());
  }
  wd.insert(wd.end(), w.begin(), w.end());
  syncpoint::row_block rows{0, {19, 7, 5, 3, 1, 0}, {}};  // the pulled rows, in any order
  for (auto id : rows.keys) {
    auto row = syncpoint::initial_row(t, 1, id);
    rows.values.insert(rows.values.end(), row.begin(), row.end());
  }
  sparse->load(w.data());
  sparse->load_rows({rows});
  dense->load(wd.data());
  std::vector<float> g(sparse->size()), gd(dense->size());
  auto loss = sparse->gradient(b, g.data());
  CHECK(loss == doctest::Approx(dense->gradient(b, gd.data())).epsilon(1e-6));
  for (size_t i = 0; i < g.size(); ++i)
    CHECK(g[i] == doctest::Approx(gd[80 + i]).epsilon(1e-6));
  auto& rg = sparse->row_gradients();
  REQUIRE(rg.size() == 1);
  CHECK(rg[0].keys == rows.keys);
  REQUIRE(rg[0].values.size() == 6 * 4);
  for (size_t r = 0; r < rows.keys.size(); ++r)
    for (size_t j = 0; j < 4; ++j)
      CHECK(rg[0].values[r * 4 + j] == doctest::Approx(gd[rows.keys[r] * 4 + j]).epsilon(1e-6));
  float unread = 0;
  for (size_t j = 0; j < 4; ++j)
    unread += std::abs(gd[2 * 4 + j]) + std::abs(gd[4 * 4 + j]);
  CHECK(unread == 0);

  // An id whose row was not pulled is refused, naming it.
  sparse->load_rows({syncpoint::row_block{0, {3, 5, 7, 1, 0}, std::vector<float>(5 * 4)}});
  CHECK_THROWS_WITH_AS(sparse->gradient(b, g.data()), doctest::Contains("ps_embedding 'words': key 19 was not pulled"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(sparse->load_rows({syncpoint::row_block{0, {3}, std::vector<float>(3)}}),
                       doctest::Contains("3 floats for 1 rows of width 4"), std::invalid_argument);
}
