// A sweep: a grid of runs over train options, each cell a virtual-clock run
// with a folder of its own (as `train --out` writes it), run by a pool of
// processes. A sweep folder holds sweep.json (the grid) and cells/NAME/ for
// each finished cell; a cell is finished when its folder is there under its
// own name, so a sweep stopped and started again runs only the others.
//
//   sweep_grid g;
//   g.base = {"--model", "mlp", "--epochs", "2"};
//   g.axes = {{"protocol", {"bsp", "elastic-bsp"}}, {"seed", {"1", "2", "3"}}};
//   for (auto& c : cells_of(g))            // 6 cells, the last axis fastest
//     std::cout << c.name << "\n";        // "protocol=bsp seed=1", ...
#pragma once

#include <functional>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace syncpoint {

struct sweep_axis {
  std::string name;                 // a train option, without "--" ("protocol", "straggler", "seed")
  std::vector<std::string> values;  // as given on the command line
};
inline bool operator==(const sweep_axis& a, const sweep_axis& b) { return a.name == b.name && a.values == b.values; }
inline bool operator!=(const sweep_axis& a, const sweep_axis& b) { return !(a == b); }

/// One of several grids in a sweep (scenarios that differ in more than one
/// option, each with its own axes): its cells are named "NAME: a=1 b=2".
struct sweep_part {
  std::string name;
  std::vector<std::string> base;  // train options of this part's cells, after the sweep's
  std::vector<sweep_axis> axes;   // before the sweep's own axes
};

struct sweep_grid {
  std::vector<std::string> base;  // train options every cell shares
  std::vector<sweep_axis> axes;   // with parts: the axes every part has, last (the seeds)
  std::vector<sweep_part> parts;  // empty: the sweep is one grid, base × axes
};

/// Part `p` of `g` as a grid of its own: the shared options then the part's,
/// the part's axes then the shared ones.
sweep_grid part_grid(const sweep_grid& g, size_t p);

struct sweep_cell {
  size_t index = 0;
  std::string name;                // "protocol=bsp straggler=3:x2 seed=1"
  std::string folder;              // "0003_protocol=bsp_straggler=3_x2_seed=1": safe in a path
  std::vector<std::pair<std::string, std::string>> values;  // axis name, value
  std::vector<std::string> args;   // base, then "--axis=value" for each axis
  std::string part;                // its part's name ("" in a sweep of one grid)
};

/// Every combination of the axes' values, the last axis varying fastest;
/// with parts, each part's cells in turn. Throws config_error on an axis
/// with no name, no values, a value given twice, or an axis named twice,
/// and on a part without a name or with the name of another.
std::vector<sweep_cell> cells_of(const sweep_grid& g);

/// sweep.json's text for `g`, and back. from_json throws config_error naming `source`.
std::string grid_json(const sweep_grid& g);
sweep_grid grid_from_json(const std::string& text, const std::string& source);

/// Makes DIR a sweep folder of `g`: writes DIR/sweep.json, or checks that the
/// one there is `g`'s. Throws config_error naming DIR and what differs.
void claim_sweep_dir(const std::string& dir, const sweep_grid& g);

/// DIR/cells/FOLDER if `c` is finished there, else "".
std::string finished_cell(const std::string& dir, const sweep_cell& c);

/// How one cell is started: a process that writes the run's files into
/// `out_dir` and its messages (errors last) to `log_path`, exiting 0 on success.
using cell_launcher =
  std::function<pid_t(const sweep_cell& c, const std::string& out_dir, const std::string& log_path)>;

struct cell_outcome {
  const sweep_cell* cell = nullptr;
  bool ok = false;
  std::string error;  // the last line of the cell's log when it failed
  double seconds = 0;  // wall time
};

struct sweep_progress {
  size_t total = 0, skipped = 0;  // cells in the grid, cells already finished
  size_t done = 0, failed = 0, running = 0;
};

/// The program that runs this process's command again (compare's and a sweep's
/// children, a node's cells): its argv before the command's arguments. By
/// default {"/proc/self/exe"}, this executable; a process whose executable is
/// an interpreter names what runs the command, e.g. {"/usr/bin/python3", "-m",
/// "syncpoint"} (python/syncpoint/__main__.py). Set it before starting children.
void set_this_program(std::vector<std::string> argv_prefix);
std::vector<std::string> this_program();

/// `EXE ARGS...` as a child process (an empty EXE: this_program()): stdin /dev/null, stdout into `stdout_path`,
/// stderr into `stderr_path`; it dies with the calling thread's process. With
/// `own_group`, it leads a process group of its own, so that a terminal's
/// Ctrl-C reaches only its parent (a node, which stops it itself).
/// Returns its pid, or -1.
pid_t launch_process(const std::vector<std::string>& args, const std::string& stdout_path,
                     const std::string& stderr_path, const std::string& exe = "", bool own_group = false);

/// `EXE train ARGS --progress=false --out=OUT_DIR` as a child process: its
/// stdin /dev/null, its stdout into OUT_DIR/stdout.txt (the run's printed
/// summary, kept with its files), its stderr (messages, errors last) into
/// `log_path`. The child dies with the calling thread's process (a sweep
/// killed and started again finds no cell of the old one still writing).
/// Returns its pid, or -1.
pid_t launch_train_process(const std::vector<std::string>& args, const std::string& out_dir,
                           const std::string& log_path, const std::string& exe = "",
                           bool own_group = false);

/// A cell whose process exited with `wait_status`, its files in DIR/cells/FOLDER.partial:
/// renamed to FOLDER when the process exited 0 and wrote summary.json (true), else kept.
bool finish_cell(const std::string& dir, const sweep_cell& c, int wait_status);

/// Why a cell failed: the signal that killed it, else the last line of its stderr.txt.
std::string cell_error(const std::string& dir, const sweep_cell& c, int wait_status);

/// Why a process exited with `wait_status`: the signal that killed it, else the last line of `stderr_path`.
std::string process_error(const std::string& stderr_path, int wait_status);

/// The files a cell's folder holds (those a cluster sweep sends back).
inline constexpr const char* cell_files[] = {"summary.json", "trace.jsonl", "run.json", "stdout.txt", "stderr.txt"};
bool is_cell_file(const std::string& name);

/// "" if `args` may be a cell's train options as a node runs them, else why
/// not: the options that write files elsewhere or leave the virtual clock
/// (--out, --resume, --checkpoint-dir, --save-model, --policy-out, --clock),
/// and --config-file, which could set them, are refused. A string-level
/// check: the node does not parse train options.
std::string cell_args_refusal(const std::vector<std::string>& args);

/// Runs the cells of `cells` not finished in DIR, at most `jobs` at once.
/// A cell runs into DIR/cells/FOLDER.partial and is renamed to FOLDER when
/// its process exits 0; one that fails keeps its stderr.txt there and the others go
/// on. `on_event` hears each start and end (an end once the cells it made room for have started, so
/// its `running` counts them). Returns the outcomes of the cells
/// it ran, in the order they ended.
std::vector<cell_outcome> run_sweep_cells(const std::string& dir, const std::vector<sweep_cell>& cells, int jobs,
                                          const cell_launcher& launch,
                                          const std::function<void(const sweep_progress&, const cell_outcome*)>& on_event);

}  // namespace syncpoint
