// An actor of your own in a job: it writes each evaluation and each progress
// report as a CSV row to a stream, with every figure exact (%.17g), so that a
// spreadsheet or a monitoring system can read what the run did. Used by
// examples/metrics_sink.cpp and tests/test_user_actors.cpp.
//
//   std::ofstream csv("metrics.csv");
//   auto sink = sys.spawn(metrics_sink, &csv);   // the stream must outlive the run
//   auto j = syncpoint::job::spawn(sys, cfg, {{sink}});
//
// Rows: kind,t_s,samples,version,accuracy,fraction,note
//   eval / final_eval   t_s: when the model was taken (run clock), version: its PS version
//   progress            samples, fraction of the run, last accuracy (-1: none yet), note: the line
//   phase               t_s, samples, note: "from>to reason"
//   done                note: why the run ended
#pragma once

#include <syncpoint/interfaces.hpp>

#include <cstdio>
#include <ostream>
#include <string>

inline std::string csv_number(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

inline std::string csv_text(const std::string& s) {  // quoted, with quotes doubled
  std::string out = "\"";
  for (char c : s)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

inline syncpoint::job_observer_actor::behavior_type metrics_sink(syncpoint::job_observer_actor::pointer self,
                                                                 std::ostream* out) {
  *out << "kind,t_s,samples,version,accuracy,fraction,note\n";
  return {
    [](const syncpoint::job_started&) {},
    [=](const syncpoint::eval_result& e) {
      *out << (e.final ? "final_eval," : "eval,") << csv_number(static_cast<double>(e.taken) * 1e-9) << ','
           << e.samples << ',' << e.version << ',' << csv_number(e.accuracy) << ",,\n";
    },
    [=](const syncpoint::progress_report& p) {
      *out << "progress,," << p.samples << ",," << csv_number(p.accuracy) << ',' << csv_number(p.fraction) << ','
           << csv_text(p.line) << '\n';
    },
    [=](const syncpoint::phase_change& c) {
      *out << "phase," << csv_number(static_cast<double>(c.t) * 1e-9) << ',' << c.samples << ",,,,"
           << csv_text(c.from + ">" + c.to + " " + c.reason) << '\n';
    },
    [=](const syncpoint::run_ended& e) {
      *out << "done,,,,,," << csv_text(e.why) << '\n';
      out->flush();
    },
  };
}
