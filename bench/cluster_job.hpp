// bench_cluster's second and third parts (bench/cluster.cpp has the first):
// a job across processes against the same job in one process, and the cost of
// the head's dashboard on that job.
#pragma once

namespace syncpoint::bench {

/// Samples/s of a 4-worker BSP job on a head and two nodes (PS on the head, or
/// a shard on each node) against one process; the median of `repeat` runs.
void job(double epochs, int repeat);

/// Samples/s of a 2-worker BSP job (MLP) on a head and two nodes, with each PS
/// shard on R = 0, 1 and 2 more hosts (--ps-replicas): a shard on each node
/// (R = 0, 1: two hosts), and the shards on the head (R = 0, 1, 2: the head and
/// the two nodes); runs alternated, `repeat` each, side by side against R = 0.
void replication_cost(double epochs, int repeat);

/// The same job on heads without a dashboard, with one, and with one polled
/// every second by a browser and a scraper; runs alternated, `repeat` each.
void dashboard_cost(double epochs, int repeat);

}  // namespace syncpoint::bench
