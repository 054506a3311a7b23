// How cereal writes each part of a checkpoint (core/saved_state.hpp): every
// struct through its `inspect` field list (cereal_inspect.hpp), so that the
// file and CAF's messages read the same fields. checkpoint_file.cpp's only.
#pragma once

#include "runtime/records/cereal_inspect.hpp"
#include "runtime/records/checkpoint_file.hpp"

#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

namespace syncpoint {

template <class Archive>
void serialize(Archive& ar, checkpoint_header& h) {
  cereal_fields(ar, h.model, h.parameters, h.protocol);
}
template <class Archive>
void serialize(Archive& ar, trace_event& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, worker_loss& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, inner_optimizer_spec& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, local_work& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, inner_state& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, local_progress& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, proceed& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, row_block& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, gradient_push& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_worker& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_buffered_push& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_pull& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_transfer& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_pin& x) {
  cereal_by_inspect(ar, x);
}

template <class Archive>
void serialize(Archive& ar, saved_table& x) {
  cereal_by_inspect(ar, x);
}

template <class Archive>
void serialize(Archive& ar, saved_rows& x) {
  cereal_by_inspect(ar, x);
}

template <class Archive>
void serialize(Archive& ar, saved_shard_link& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_ps& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, push_info& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_partial_push& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_coordinator_timer& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_coordinator& x) {
  cereal_by_inspect(ar, x);
}
template <class Archive>
void serialize(Archive& ar, saved_timer& x) {
  cereal_by_inspect(ar, x);
}

}  // namespace syncpoint
