// Every example of a public header's doc comments, compiled and run (see
// test_header_examples.cpp). This file: sparse tables (<syncpoint/table.hpp>).
// The check that each example's lines are in its test reads this file after
// test_header_examples_parts.cpp and test_header_examples_local.cpp.
#include <syncpoint/table.hpp>
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
