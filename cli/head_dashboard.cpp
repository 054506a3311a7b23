#include "cli/head_dashboard.hpp"

#include "runtime/cluster/dashboard/dashboard_site.hpp"
#include "runtime/records/run_files.hpp"

#include <syncpoint/job_config.hpp>

#include <cstdlib>

#include <unistd.h>

namespace syncpoint::cli {

std::optional<uint16_t> dashboard_port(const std::string& value) {
  if (value == "off" || value == "0")
    return std::nullopt;
  if (value == "any")
    return uint16_t{0};
  char* end = nullptr;
  long port = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || port < 1 || port > 65535)
    throw config_error("--dashboard takes a port (1..65535), 'any' (a free one) or 'off' (0), not '" + value + "'");
  return static_cast<uint16_t>(port);
}

head_dashboard::head_dashboard(caf::actor_system& sys, const std::string& value, bool given, std::string runs_dir,
                               std::string secret)
    : sys_(sys), port_(dashboard_port(value)), given_(given), secret_(std::move(secret)), runs_dir_(std::move(runs_dir)) {}

head_dashboard::~head_dashboard() = default;

void head_dashboard::attach(const cluster::head_actor& head) {
  if (hub_)
    caf::anon_send(hub_, attach_atom::value, cluster::status_source_actor{head});
}

std::string head_dashboard::listen(const std::string& host, const std::string& shown, const cluster::tls_files& tls,
                                   const std::function<void(const std::string&)>& warn) {
  if (!port_)
    return "";
  auto board = std::make_shared<cluster::view_board>();
  cluster::site_options site;
  site.token = secret_;
  site.runs_dir = runs_dir_;
  site.https = tls.enabled();
  site.check_host = host == "127.0.0.1" || host == "localhost" || host == "::1";
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0)
    site.host_names.push_back(name);
  site.host_names.push_back(shown);
  cluster::http_options opts;
  opts.host = host;
  opts.port = *port_;
  opts.tls = tls;
  opts.log = warn;
  try {
    server_ = std::make_unique<cluster::http_server>(std::make_shared<cluster::dashboard_site>(board, site), opts);
  } catch (const std::exception& e) {
    if (given_)
      throw;
    warn(std::string(e.what()) + ": no dashboard (give --dashboard PORT, or 'off')");
    port_.reset();
    return "";
  }
  // Serving: the hub gathers the views, and each job gets a watcher.
  hub_ = cluster::spawn_hub(sys_, {board, secret_});
  link_.hub = hub_;
  link_.runs_dir = runs_dir_;
  auto shown_name = shown.find(':') != std::string::npos ? "[" + shown + "]" : shown;  // an IPv6 address
  return std::string(tls.enabled() ? "https" : "http") + "://" + shown_name + ":" + std::to_string(server_->port()) + "/";
}

}  // namespace syncpoint::cli
