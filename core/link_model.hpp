// The parameter server's network link (DESIGN.md, "Link model"): every
// transfer to or from the PS queues on one link of `bandwidth` bytes/s, then
// takes `latency` more to arrive. Exact on the virtual clock; on the real
// clock the PS holds each message back by the same amount (a token bucket).
//
//   link_model link(100e6, 0.0005);          // 100 MB/s, 0.5 ms
//   double t = link.deliver_at(now, 814120);  // when a push of that size has arrived
#pragma once

#include <optional>
#include <string>

namespace syncpoint {

/// Bytes per second from a rate with an optional unit: "400e6", "25MB/s",
/// "1Gbit/s", "100 Mbps", "2GiB/s", "800kB/s". Decimal prefixes (k, M, G, T)
/// are powers of 1000, binary ones (Ki, Mi, Gi, Ti) powers of 1024; "bit",
/// "b" and "bps" count bits. Nothing for a malformed or negative rate.
std::optional<double> parse_bandwidth(const std::string& text);

class link_model {
 public:
  link_model() = default;  // unlimited: every transfer arrives at once
  link_model(double bytes_per_s, double latency_s) : bandwidth_(bytes_per_s), latency_(latency_s) {}

  /// False for an unlimited link (bandwidth 0 and no latency).
  bool active() const { return bandwidth_ > 0 || latency_ > 0; }

  /// A transfer of `bytes` offered at `now` (seconds): it waits for the
  /// transfers before it, occupies the link for bytes / bandwidth, and
  /// arrives `latency` later. Returns the arrival time.
  double deliver_at(double now, double bytes) { return reserve(now, bytes).arrive; }

  /// As deliver_at, with when the transfer occupies the link.
  struct slot {
    double start, end, arrive;
  };
  slot reserve(double now, double bytes) {
    double start = now > free_at_ ? now : free_at_;
    double end = start + (bandwidth_ > 0 ? bytes / bandwidth_ : 0.0);
    free_at_ = end;
    return {start, end, end + latency_};
  }

  /// When the link is free of the transfers reserved so far (a checkpoint
  /// keeps it; a resumed link starts from it).
  double free_at() const { return free_at_; }
  void resume_at(double free_at) { free_at_ = free_at; }

 private:
  double bandwidth_ = 0;
  double latency_ = 0;
  double free_at_ = 0;
};

}  // namespace syncpoint
