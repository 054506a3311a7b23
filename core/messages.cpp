#include "core/messages.hpp"

#include "core/interfaces.hpp"
#include "core/ps_group.hpp"
#include "core/saved_state.hpp"

#include <caf/exit_reason.hpp>

namespace syncpoint {

namespace {
const caf::atom_value category = caf::atom("syncpoint");
}

std::string to_string(sp_error code) {
  switch (code) {
    case sp_error::wrong_size: return "wrong_size";
    case sp_error::non_finite: return "non_finite";
    case sp_error::unknown_worker: return "unknown_worker";
    case sp_error::not_a_member: return "not_a_member";
    case sp_error::bad_input: return "bad_input";
    case sp_error::unauthorized: return "unauthorized";
    case sp_error::not_now: return "not_now";
    case sp_error::lost_shard: return "lost_shard";
    case sp_error::user_actor_failed: return "user_actor_failed";
    case sp_error::user_loop_failed: return "user_loop_failed";
    case sp_error::protocol_failed: return "protocol_failed";
  }
  return "unknown";
}

caf::error make_error(sp_error code, std::string what) {
  return caf::error{static_cast<uint8_t>(code), category, caf::make_message(std::move(what))};
}

bool is_failure(const caf::error& reason) {
  return reason && reason != caf::exit_reason::normal && reason != caf::exit_reason::user_shutdown;
}

caf::error observer_failed(caf::actor_system& sys, size_t which, const caf::error& reason) {
  // CAF ends an actor that throws with a bare runtime_error (its text goes to stdout).
  auto hint = reason == caf::sec::runtime_error && reason.context().empty()
                ? " (an exception it did not catch, if CAF printed one above)"
                : "";
  return make_error(sp_error::user_actor_failed,
                    "observer " + std::to_string(which) + " of the job failed: " + sys.render(reason) + hint);
}

void register_messages(caf::actor_system_config& cfg) {
  cfg.add_message_type<gradient_push>("gradient_push");
  cfg.add_message_type<push_info>("push_info");
  cfg.add_message_type<proceed>("proceed");
  cfg.add_message_type<shard_op>("shard_op");
  cfg.add_message_type<std::vector<shard_op>>("std::vector<shard_op>");
  cfg.add_message_type<weights>("weights");
  cfg.add_message_type<row_block>("row_block");
  cfg.add_message_type<std::vector<row_block>>("std::vector<row_block>");
  cfg.add_message_type<snapshot>("snapshot");
  cfg.add_message_type<trace_event>("trace_event");
  cfg.add_message_type<std::vector<trace_event>>("std::vector<trace_event>");
  cfg.add_message_type<eval_result>("eval_result");
  cfg.add_message_type<worker_loss>("worker_loss");
  cfg.add_message_type<std::vector<worker_loss>>("std::vector<worker_loss>");
  cfg.add_message_type<progress_report>("progress_report");
  cfg.add_message_type<phase_change>("phase_change");
  cfg.add_message_type<run_outcome>("run_outcome");
  cfg.add_message_type<job_counts>("job_counts");
  cfg.add_message_type<stop_request>("stop_request");
  cfg.add_message_type<eval_request>("eval_request");
  cfg.add_message_type<mark_request>("mark_request");
  cfg.add_message_type<checkpoint_request>("checkpoint_request");
  cfg.add_message_type<counts_request>("counts_request");
  cfg.add_message_type<run_ended>("run_ended");
  cfg.add_message_type<job_started>("job_started");
  cfg.add_message_type<std::vector<float>>("std::vector<float>");
  cfg.add_message_type<std::vector<std::string>>("std::vector<std::string>");
  cfg.add_message_type<saved_worker>("saved_worker");
  cfg.add_message_type<saved_ps>("saved_ps");
  cfg.add_message_type<saved_rows>("saved_rows");
  cfg.add_message_type<table_counts>("table_counts");
  cfg.add_message_type<std::vector<table_counts>>("std::vector<table_counts>");
  cfg.add_message_type<saved_coordinator>("saved_coordinator");
  register_interfaces(cfg);
  cfg.add_error_category(category, [](uint8_t code, caf::atom_value, const caf::message& ctx) {
    std::string out = "syncpoint." + to_string(static_cast<sp_error>(code));
    if (ctx.match_element<std::string>(0))
      out += ": " + ctx.get_as<std::string>(0);
    return out;
  });
}

void register_interfaces(caf::actor_system_config& cfg) {
  cfg.add_message_type<tracer_actor>("tracer_actor");
  cfg.add_message_type<worker_actor>("worker_actor");
  cfg.add_message_type<std::vector<worker_actor>>("std::vector<worker_actor>");
  cfg.add_message_type<evaluator_actor>("evaluator_actor");
  cfg.add_message_type<driver_actor>("driver_actor");
  cfg.add_message_type<coordinator_actor>("coordinator_actor");
  cfg.add_message_type<job_reader_actor>("job_reader_actor");
  cfg.add_message_type<job_control_actor>("job_control_actor");
  cfg.add_message_type<job_observer_actor>("job_observer_actor");
  cfg.add_message_type<std::vector<job_observer_actor>>("std::vector<job_observer_actor>");
  cfg.add_message_type<ps_actor>("ps_actor");
  cfg.add_message_type<std::vector<ps_actor>>("std::vector<ps_actor>");
  cfg.add_message_type<ps_group>("ps_group");
  cfg.add_message_type<copy_placer_actor>("copy_placer_actor");
}

}  // namespace syncpoint
