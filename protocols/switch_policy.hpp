// A Sync-Switch policy: the schedule `syncpoint tune-switch` chose for a
// recurring job, in a JSON file (cereal) that `train --switch-policy FILE` reuses.
//
//   switch_policy p = load_switch_policy("mlp.policy.json");
//   // p.schedule == "bsp:0.25,asp:0.75"
#pragma once

#include <string>

namespace syncpoint {

struct switch_policy {
  std::string model;              // the job it was tuned for
  std::string dataset;
  int workers = 0;
  double bsp_share = 1;           // the smallest accepted share of BSP
  std::string schedule;           // e.g. "bsp:0.25,asp:0.75"
  double reference_accuracy = 0;  // pure BSP's final accuracy
  double tolerance = 0;
};

/// Throws std::invalid_argument naming the file if it is missing, not JSON,
/// or lacks a field.
switch_policy load_switch_policy(const std::string& path);

/// Throws std::runtime_error naming the file if it cannot be written.
void save_switch_policy(const std::string& path, const switch_policy& p);

}  // namespace syncpoint
