// Reading back what a run wrote (write_run): DIR/summary.json, DIR/trace.jsonl
// and, when the CLI wrote it, DIR/run.json (how the run was made). The report
// is built from these files, so `syncpoint report DIR...` shows what `compare`
// showed.
//
//   auto run = syncpoint::load_run("results/bsp");   // throws config_error
//   std::cout << run.summary.final_accuracy << " " << run.trace.size() << "\n";
#pragma once

#include <syncpoint/summary.hpp>
#include <syncpoint/train.hpp>

#include <map>
#include <string>
#include <vector>

namespace syncpoint {

/// How a run was made, for a reader: DIR/run.json. Everything is text.
struct run_provenance {
  std::string label;        // how tables name the run, e.g. "ssp(s=3)"
  std::string command;      // the command line that made it
  std::string stopped_by;   // compare's rule: "target", "cap", "failed" ("": none)
  std::string rule;         // compare's stop rule, in words ("": none)
  std::map<std::string, std::string> build;    // syncpoint, caf, torch, compiler versions
  std::map<std::string, std::string> machine;  // host, cpu, cores, memory
  std::map<std::string, std::string> settings; // the job's options that summary.json lacks, as the report names them
  std::map<std::string, std::string> options;  // every field of the job by its name (core/job_schema.hpp): "max_time_s"
};

struct run_record {
  std::string dir;  // as given, lexically normalized ("a//b/./c" -> "a/b/c")
  run_summary summary;
  std::vector<trace_event> trace;
  run_provenance provenance;  // empty fields when DIR has no run.json
};

/// This process's build and machine, `command`, and `job`'s settings and options.
run_provenance current_provenance(const std::string& command, const job_config& job);

/// Writes `r` as DIR/trace.jsonl and DIR/summary.json (creating DIR); throws config_error.
void write_run(const std::string& dir, const run_result& r);

/// Writes DIR/run.json.
void write_provenance(const std::string& dir, const run_provenance& p);

/// Reads DIR. Throws config_error naming the file and what is wrong (missing,
/// not JSON, a key of the wrong type, a trace line that does not parse or
/// whose times are not 0 <= t0 <= t1 <= 1e9 s).
run_record load_run(const std::string& dir);

/// DIR/runs.json: the names of the run folders in DIR, in the order they ran
/// (compare writes it, so that `syncpoint report DIR` keeps that order).
void write_run_list(const std::string& dir, const std::vector<std::string>& names);
/// Reads DIR/runs.json; throws config_error naming the file if it is not such a list.
std::vector<std::string> read_run_list(const std::string& dir);

/// DIR/summary.json alone (no trace): throws config_error naming the file.
run_summary load_summary(const std::string& dir);

/// A file's bytes; throws config_error naming it when it cannot be read.
std::string read_text(const std::string& path);

/// summary.json's text back into a run_summary (the inverse of to_json).
run_summary summary_from_json(const std::string& text, const std::string& source);

}  // namespace syncpoint
