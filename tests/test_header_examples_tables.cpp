// Every example of a public header's doc comments, compiled and run (see
// test_header_examples.cpp). This file: sparse tables (<syncpoint/table.hpp>).
// The check that each example's lines are in its test reads this file after
// test_header_examples_parts.cpp and test_header_examples_local.cpp.
#include <syncpoint/table.hpp>

#include <doctest/doctest.h>

#include <cstdint>
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
