// `syncpoint head --dashboard PORT [--runs DIR]`: the head's live dashboard
// and Prometheus /metrics (docs/dashboard.md). The actors' side (hub, one
// watcher per job) and the HTTP side (runtime/cluster/dashboard/http_server.hpp) are
// put together here (each finished job's watcher writes its comparison page,
// runtime/report/page.hpp).
//
//   head_dashboard d(sys, "8265", true, runs_dir, secret);
//   std::string url = d.listen(host, shown, tls, warn);  // "" when off (or a default port taken)
//   hc.dashboard = d.link();                             // before the head: each job gets a watcher
//   ... spawn the head ...
//   d.attach(head);
#pragma once

#include "runtime/cluster/dashboard/dashboard.hpp"
#include "runtime/cluster/dashboard/http_server.hpp"

#include <memory>
#include <optional>
#include <string>

namespace syncpoint::cli {

/// --dashboard's value: a port (1..65535), "any" (a free one: 0 here), or
/// "off"/"0" (nullopt). Throws config_error naming what is wrong.
std::optional<uint16_t> dashboard_port(const std::string& value);

/// The dashboard's port when --dashboard is not given.
inline constexpr const char* default_dashboard_port = "8265";

class head_dashboard {
 public:
  /// `value`: --dashboard's; `given`: whether it was on the command line (a
  /// default port that is taken is a warning, a given one an error).
  head_dashboard(caf::actor_system& sys, const std::string& value, bool given, std::string runs_dir, std::string secret);
  ~head_dashboard();

  /// The hub and where jobs' files go, for head_config (no hub: no dashboard).
  cluster::dashboard_link link() const { return link_; }
  /// The head whose status the hub polls.
  void attach(const cluster::head_actor& head);
  /// Starts serving on `host` (and the hub); the page's URL (naming the head
  /// `shown`), or "" when off or (a default port) taken, which `warn` is
  /// told. Throws std::runtime_error when a given port cannot be had.
  std::string listen(const std::string& host, const std::string& shown, const cluster::tls_files& tls,
                     const std::function<void(const std::string&)>& warn);

 private:
  caf::actor_system& sys_;
  std::optional<uint16_t> port_;
  bool given_;
  std::string secret_;
  std::string runs_dir_;
  cluster::hub_actor hub_;
  cluster::dashboard_link link_;
  std::unique_ptr<cluster::http_server> server_;
};

}  // namespace syncpoint::cli
