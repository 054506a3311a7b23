// `syncpoint sweep --head HOST:P`: the cells not yet finished go to the head,
// which runs each on a free slot of a node (runtime/cluster/jobs/sweep_runner.hpp);
// this process follows them and writes each cell's files as they come back,
// into DIR/cells/FOLDER.partial, renamed to FOLDER when the cell is done, as
// the local sweep does.
#include "cli/cluster_cmds.hpp"
#include "cli/progress.hpp"
#include "cli/sweep_cmd.hpp"
#include <syncpoint/job_config.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

namespace syncpoint::cli {

using namespace syncpoint::cluster;
namespace fs = std::filesystem;

namespace {

constexpr uint64_t max_cell_bytes = uint64_t{1} << 30;

struct cell_files_state {
  uint32_t attempt = 0;                      // the attempt whose files are being written
  std::map<std::string, uint64_t> written;   // bytes per file
  uint64_t total = 0;
};

struct client_state {
  std::string dir;
  std::vector<const sweep_cell*> cells;   // by the order's index
  std::vector<cell_files_state> files;
  sweep_progress progress;
  std::unique_ptr<sweep_display> shown;
  // Handed to the main thread with the outcome (it reads them only after).
  std::shared_ptr<std::vector<cell_outcome>> outcomes;
  caf::actor waiter;
  static inline const char* name = "sweep_client";
};

using client_ptr = sweep_client_actor::stateful_pointer<client_state>;

std::string partial_of(client_ptr self, uint32_t index) {
  return self->state.dir + "/cells/" + self->state.cells[index]->folder + ".partial";
}

// A new attempt of the cell: its .partial starts empty.
void restart_files(client_ptr self, uint32_t index, uint32_t attempt) {
  auto partial = partial_of(self, index);
  std::error_code ignored;  // a folder that cannot be made refuses the chunks, and the cell fails
  fs::remove_all(partial, ignored);
  fs::create_directories(partial, ignored);
  self->state.files[index] = {attempt, {}, 0};
}

bool write_chunk(client_ptr self, const cell_chunk& chunk) {
  auto& st = self->state;
  if (chunk.index >= st.cells.size() || !is_cell_file(chunk.file) || chunk.bytes.size() > max_cell_chunk)
    return false;
  auto& f = st.files[chunk.index];
  if (chunk.attempt < f.attempt)
    return false;  // an attempt that was placed again since
  if (chunk.attempt > f.attempt)
    restart_files(self, chunk.index, chunk.attempt);
  auto& written = f.written[chunk.file];
  if (chunk.offset != written || f.total + chunk.bytes.size() > max_cell_bytes)
    return false;
  std::ofstream out(partial_of(self, chunk.index) + "/" + chunk.file,
                    chunk.offset == 0 ? std::ios::binary | std::ios::trunc : std::ios::binary | std::ios::app);
  out.write(chunk.bytes.data(), static_cast<std::streamsize>(chunk.bytes.size()));
  if (!out.flush())
    return false;
  written += chunk.bytes.size();
  f.total += chunk.bytes.size();
  return true;
}

void on_event(client_ptr self, const cell_event& ev) {
  auto& st = self->state;
  if (ev.index >= st.cells.size())
    return;
  auto& cell = *st.cells[ev.index];
  auto& p = st.progress;
  p.running = static_cast<size_t>(std::max(0, ev.running));
  if (ev.kind == "started") {
    if (ev.attempt > st.files[ev.index].attempt)
      restart_files(self, ev.index, ev.attempt);
    st.shown->note(cell.name + " started on node '" + ev.node + "'");
    st.shown->event(p, nullptr);
  } else if (ev.kind == "lost") {
    st.shown->note(cell.name + " lost with node '" + ev.node + "' (" + ev.message + "): placed again");
    st.shown->event(p, nullptr);
  } else if (ev.kind == "done" || ev.kind == "failed") {
    cell_outcome o{&cell, false, ev.message, ev.seconds};
    if (ev.kind == "done") {
      try {
        o.ok = st.files[ev.index].attempt == ev.attempt && finish_cell(st.dir, cell, 0);
        if (!o.ok)
          o.error = "its files did not all arrive";
      } catch (const std::exception& e) {
        o.error = std::string("its folder could not be put in place: ") + e.what();
      }
    }
    if (!o.ok && !ev.node.empty())
      o.error += " (node '" + ev.node + "')";
    ++(o.ok ? p.done : p.failed);
    st.outcomes->push_back(o);
    st.shown->event(p, &st.outcomes->back());
  }
}

sweep_client_actor::behavior_type sweep_client(client_ptr self, client_state init) {
  self->state = std::move(init);
  self->state.files.resize(self->state.cells.size());
  self->state.shown->event(self->state.progress, nullptr);
  return {
    [=](progress_atom, const std::string& line) { self->state.shown->note(line); },
    [=](finished_atom, job_result& r) {
      self->state.shown->end();
      caf::anon_send(self->state.waiter, std::move(r));  // the waiter is a scoped (untyped) actor
      self->quit();
    },
    [=](cell_atom, const cell_event& ev) { on_event(self, ev); },
    [=](cell_atom, const cell_chunk& chunk) -> bool { return write_chunk(self, chunk); },
  };
}

}  // namespace

int run_cluster_sweep(const sweep_request& req, const std::vector<sweep_cell>& cells) {
  signal_catcher signals;  // Ctrl-C stops the sweep on the cluster instead of abandoning it
  auto at = parse_endpoint(req.head);
  if (!at)
    throw config_error("--head expects HOST:PORT, got '" + req.head + "'");
  std::vector<sweep_cell_order> orders;
  std::vector<const sweep_cell*> todo;
  for (auto& c : cells) {
    if (auto why = cell_args_refusal(c.args); !why.empty())
      throw config_error("cell '" + c.name + "': " + why);
    if (finished_cell(req.out, c).empty()) {
      orders.push_back({static_cast<uint32_t>(todo.size()), c.name, c.args});
      todo.push_back(&c);
    }
  }
  if (orders.empty()) {
    std::fprintf(stderr, "syncpoint sweep: all %zu cells already finished\n", cells.size());
    return finish_sweep(req, cells, {});
  }
  auto secret = cluster_secret(req.token, req.token_file, "sweep");
  caf::actor_system_config cfg;
  configure_cluster(cfg, cluster_tls(req.tls, req.tls_paths, "sweep"));
  caf::actor_system sys{cfg};
  auto head = reach_head(sys, *at, "sweep");
  caf::scoped_actor self{sys};
  client_state init;
  init.dir = req.out;
  init.cells = todo;
  init.progress.total = cells.size();
  init.progress.skipped = cells.size() - todo.size();
  init.shown = std::make_unique<sweep_display>(0);
  init.outcomes = std::make_shared<std::vector<cell_outcome>>();
  init.waiter = caf::actor{self};
  auto outcomes = init.outcomes;
  auto client = sys.spawn(sweep_client, std::move(init));
  self->monitor(head);
  uint64_t id = 0;
  std::string stop_token;
  int rc = -1;
  self->request(head, std::chrono::seconds(60), sweep_atom::value, orders, client, cluster::credential{secret})
    .receive([&](uint64_t sweep, cluster::credential& token) { id = sweep; stop_token = std::move(token.text); },
             [&](caf::error& e) { rc = head_refusal(sys, e, "sweep"); });
  if (rc >= 0) {
    self->send_exit(client, caf::exit_reason::user_shutdown);
    return rc;
  }
  // Through the client, which owns the terminal's bar from now on.
  caf::anon_send(client, progress_atom::value, "sweep " + std::to_string(id) + " accepted by the head at " + req.head);
  auto waited = await_finished(self, head, id, stop_token, signals, std::chrono::hours(24 * 30), "sweep",
                               "sweep " + std::to_string(id));
  if (!waited.got) {
    self->send_exit(client, caf::exit_reason::user_shutdown);
    return 1;
  }
  int status = finish_sweep(req, cells, *outcomes);
  if (waited.result.state != job_stage::done) {  // stopped, or its runner on the head failed
    std::fprintf(stderr, "syncpoint sweep: sweep %llu %s: %s; run the same command again to go on\n",
                 static_cast<unsigned long long>(id),
                 waited.result.state == job_stage::stopped ? "stopped early" : "failed", waited.result.message.c_str());
    return waited.interrupted ? 128 + waited.interrupted : 1;
  }
  return status;
}

}  // namespace syncpoint::cli
