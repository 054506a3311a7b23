/// \file
/// Every public header of syncpoint but the three that bring in LibTorch
/// (<syncpoint/torch_model.hpp>, <syncpoint/torch_data.hpp>, <syncpoint/torch_loop.hpp>),
/// <syncpoint/protocol_archive.hpp> (it brings in cereal) and <syncpoint/command.hpp> (the
/// command as a library: link syncpoint::command). scripts/check-public-headers.sh checks it.
///
/// ```cpp
/// #include <syncpoint/syncpoint.hpp>
/// ```
///
/// ```cpp
/// int main() {
///   syncpoint::job_config cfg;
///   cfg.protocol = "bsp"; cfg.workers = 2; cfg.model = "softmax"; cfg.epochs = 1;
///   auto r = syncpoint::train(cfg);
///   return r.summary.final_accuracy > 0.5 ? 0 : 1;
/// }
/// ```
#pragma once

#include <syncpoint/version.hpp>

#include <syncpoint/cluster.hpp>
#include <syncpoint/compressor.hpp>
#include <syncpoint/data_registry.hpp>
#include <syncpoint/dataset.hpp>
#include <syncpoint/float_block.hpp>
#include <syncpoint/interfaces.hpp>
#include <syncpoint/job.hpp>
#include <syncpoint/job_config.hpp>
#include <syncpoint/local_work.hpp>
#include <syncpoint/messages.hpp>
#include <syncpoint/model.hpp>
#include <syncpoint/protocol.hpp>
#include <syncpoint/shared_floats.hpp>
#include <syncpoint/summary.hpp>
#include <syncpoint/table.hpp>
#include <syncpoint/train.hpp>
#include <syncpoint/worker_client.hpp>
#include <syncpoint/worker_loop.hpp>
