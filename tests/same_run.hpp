// What the byte-for-byte tests compare: two runs that end alike have the
// same model (values and version), accuracy, samples and run time.
#pragma once

#include <syncpoint/train.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

namespace syncpoint::testing {

inline void same_run(const run_result& a, const run_result& b) {
  CHECK(a.final_model.version == b.final_model.version);
  CHECK(a.final_model.values == b.final_model.values);
  CHECK(a.summary.final_accuracy == b.summary.final_accuracy);  // exact: the same model
  CHECK(a.summary.samples == b.summary.samples);
  CHECK(a.summary.run_time_s == b.summary.run_time_s);
}

/// The trace events of `kind` in `r`.
inline size_t count_kind(const run_result& r, const std::string& kind) {
  return static_cast<size_t>(
    std::count_if(r.trace.begin(), r.trace.end(), [&](const trace_event& e) { return e.kind == kind; }));
}

}  // namespace syncpoint::testing
