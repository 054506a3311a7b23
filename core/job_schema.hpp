// One table of a job's options: each field of job_config (its internals'
// too), in the order it is declared, with the option that sets it (--NAME on
// the command line, "NAME = value" in a config file), its help, its range or choices, what its "none"
// value means, the commands that offer it and the layer that reads it. The
// default is job_config{}'s, written once, in job_config.hpp.
//
// Made from the table: the job options of `train`, `compare`, `simulate`,
// `tune-switch` and `submit` with their --help (defaults included), the range
// and choice checks of validate(), and run.json's "options". Checked against
// it by tests/test_job_schema.cpp: a field of job_config missing from the
// table, from inspect (or out of its order) or from the CLI fails the test.
//
//   for (auto& f : syncpoint::job_fields())
//     std::cout << "--" << f.option << ": " << f.help << " (default " << syncpoint::default_text(f) << ")\n";
#pragma once

#include <syncpoint/job_config.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace syncpoint {

/// A field of job_config, typed: a member of it, or of its internals.
template <class T>
struct field_ref {
  using type = T;
  T job_config::*member = nullptr;
  T detail::job_internals::*internal = nullptr;  // (when member is null)
  T& of(job_config& cfg) const { return member ? cfg.*member : cfg.internals.*internal; }
  const T& of(const job_config& cfg) const { return member ? cfg.*member : cfg.internals.*internal; }
};

using job_member = std::variant<field_ref<int>, field_ref<int64_t>, field_ref<uint64_t>, field_ref<double>,
                                field_ref<bool>, field_ref<std::string>, field_ref<std::vector<double>>,
                                field_ref<clock_kind>, field_ref<protocol_options>>;

/// The commands that offer a field as an option, a bit each.
enum job_command : uint8_t {
  on_train = 1,
  on_compare = 2,
  on_submit = 4,
  on_tune = 8,
  on_simulate = 16,
  on_learning = on_train | on_compare | on_submit | on_tune,  // every command that learns (not simulate)
  on_every = on_learning | on_simulate,
};

/// How the command line sets a field.
enum class cli_binding : uint8_t {
  value,     // the option's value is the field's: --workers 8
  parsed,    // the CLI parses the option's text into it: --ps-bandwidth 1Gbit/s
  by_other,  // another field's option sets it: --iter-cost measure sets measure_iter_cost
  none,      // no option: a program's or a command's own (simulate sets wire_bytes)
};

struct job_field {
  std::string key;     // the member's name, and run.json's options.KEY: "max_time_s"
  job_member member;
  std::string option;  // the option's long name: "max-time" (a config file's too)
  char short_name = 0;
  std::string group;   // --help's group: job, protocol, data, optimizer, cluster, output
  std::string help;    // what it sets, without its default
  std::string help_simulate, help_submit;  // those commands' own words, where they differ
  uint8_t commands = on_every;
  cli_binding binding = cli_binding::value;
  double lowest = -std::numeric_limits<double>::infinity();  // numbers: the range validate() checks
  double highest = std::numeric_limits<double>::infinity();
  bool lowest_open = false, highest_open = false;
  std::string unit;                  // said after the range: "seconds", "ms", "bytes/s"
  std::vector<std::string> choices;  // text: the values validate() accepts
  std::string none_means;            // what 0, "" or -1 means: "no limit", in --help and refusals
  std::string layer;                 // the layer that reads it: "actors/ps", "runtime/job"

  bool ranged() const;  // a number with a lowest or highest value
};

/// Every field of job_config, in declaration order (the internals' last).
const std::vector<job_field>& job_fields();
/// The field whose key is `key`; throws std::out_of_range naming it.
const job_field& job_field_named(const std::string& key);

/// The field's value as run.json and --help write it: "4", "0.05", "virtual",
/// "30,60", "staleness=3".
std::string field_text(const job_config& cfg, const job_field& f);
/// The default as --help says it: the value in `defaults`, with what its none
/// value means ("0: no limit", "none"); "" for a flag that is off.
std::string default_text(const job_field& f, const job_config& defaults = {});

/// Throws config_error for the first field, in table order, outside its range
/// (or not finite) or not one of its choices: "--workers must be in 1..4096".
void check_field_ranges(const job_config& cfg);

}  // namespace syncpoint
