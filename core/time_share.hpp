// Where a worker's time goes, by the trace's spans: the comparison report's
// timeline (runtime/report/timeline.cpp) and the dashboard's last minute
// (runtime/cluster/jobs/live_job.hpp) cut it the same way.
#pragma once

#include <optional>
#include <string>

namespace syncpoint::time_share {

/// What a span of a worker's time went to.
enum category { compute, comm, wait, categories };

/// The category of a trace event of `kind`: "compute"; "push" or "pull";
/// "wait". Events that are not a worker's time (barriers, evaluations, ...): none.
inline std::optional<category> of(const std::string& kind) {
  if (kind == "compute")
    return compute;
  if (kind == "push" || kind == "pull")
    return comm;
  if (kind == "wait")
    return wait;
  return std::nullopt;
}

/// What turns a bin's seconds into shares of the bin, given their `total`
/// over the categories: spans that overlap (wbsp-overlap computes while it
/// communicates) fill the bin, never more.
inline double scale(double total, double bin_s) { return total > bin_s ? 1 / total : 1 / bin_s; }

}  // namespace syncpoint::time_share
