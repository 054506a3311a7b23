// Command-line options of `syncpoint train`, `compare`, `simulate`,
// `tune-switch` and `submit`, bound to a job_config through an option_table
// (CLI11; a --config-file FILE can hold them too). Both `--lr 0.1` and
// `--lr=0.1` work. The job's options, their help and defaults come from the
// table of job_config's fields (core/job_schema.hpp); the commands' own
// (compare's --protocols, submit's --head...) are declared here.
#pragma once

#include "runtime/cluster/net/tls_files.hpp"
#include <syncpoint/job_config.hpp>

#include "cli/option_table.hpp"

#include <map>
#include <string>
#include <vector>

namespace syncpoint::cli {

class options {
 public:
  enum class command { train, compare, submit, tune, simulate };
  explicit options(bool compare) : options(compare ? command::compare : command::train) {}
  explicit options(command c);

  /// Parses args (without the program and subcommand names). Returns an
  /// empty string on success, otherwise a message naming the bad argument.
  std::string parse_args(const std::vector<std::string>& args);
  bool help_printed() const { return table_.help_printed(); }
  /// What --help prints: the options by group.
  std::string help() const { return table_.help(); }
  /// Whether the command line or config file gave option NAME (a protocol's job defaults fill in the rest).
  bool given(const std::string& name) const { return table_.given(name); }

  /// The job described by the options (after parse_args). Throws on a bad --clock.
  job_config job() const;

  /// submit: CAF's own settings (--middleman.*, --scheduler.*) for its actor system.
  caf::actor_system_config actor_system;

  std::vector<std::string> protocols;  // compare only
  std::vector<double> tune_lrs;        // compare only: --tune-lr (empty: the shared --lr only)
  bool run_to_cap = false;             // compare only
  std::vector<uint64_t> seeds;         // compare only: --seeds (empty: --seed alone)
  int jobs = 0;                        // compare only: runs at once after the reference (0: the cores)
  std::string head;                    // submit only: HOST:PORT
  int head_wait = 120;                 // submit only: seconds a lost head with a journal is waited for
  std::string token, token_file;       // submit only: the cluster's token
  bool tls = false;                    // submit only: --tls --cert --key --ca
  cluster::tls_files tls_paths;
  std::string save_model;              // write the final model here (cereal portable binary)
  double tolerance = 0.005;            // tune only
  int budget = 5;                      // tune only
  std::string policy_out = "sync-switch-policy.json";  // tune only
  uint64_t iterations = 100;           // simulate only: per worker

 private:
  void add_job_fields(const std::string& group);
  void add_protocol_options();
  std::string parse_protocol_options();

  option_table table_;
  command command_;
  job_config cfg_;
  // Storage for the options protocols declare (node-based maps: stable
  // addresses for the option binding); given or not is the table's to say.
  std::map<std::string, int64_t> int_opts_;
  std::map<std::string, double> real_opts_;
  std::map<std::string, std::string> text_opts_;
  // The text of the options the CLI parses into a field (core/job_schema.hpp's
  // cli_binding::parsed), by option name: "clock", "ps-bandwidth", "fail-worker"...
  std::map<std::string, std::string> parsed_;
  std::string protocol_list_ = "bsp,asp,ssp";
  std::string tune_lr_;
  std::string seeds_;
};

/// --token, --token-file, --tls, --cert, --key and --ca-cert (or --ca): how a
/// process reaches a cluster (head, node, status, submit), in the table's cluster group.
option_table& add_cluster_access(option_table& table, std::string& token, std::string& token_file, bool& tls,
                                 cluster::tls_files& files);

/// "" if every protocol option in `cfg` is one that `protocols` declare; else
/// a message naming the option and which protocols declare it.
std::string check_options_fit(const job_config& cfg, const std::vector<std::string>& protocols);

/// "syncpoint COMMAND ARGS..." quoted so that a shell takes it back as it was.
std::string command_line(const std::string& command, const std::vector<std::string>& args);

/// Splits compare's --protocols at the commas outside parentheses
/// ("bsp,diloco(H=10,F=2)": two entries).
std::vector<std::string> split_protocols(const std::string& list);

/// A run's name in progress lines and reports: the protocol with its options,
/// and the compressor if any, as compare names it ("diloco(H=50) int4").
std::string run_label(const job_config& cfg);

/// --save-model writes the dense weights only: a model with sparse tables,
/// whose rows stay on the PS (docs/sparse.md), is refused with config_error
/// before the run. Loads the job's data to make its model; nothing without --save-model.
void check_save_model(const options& opts);

}  // namespace syncpoint::cli
