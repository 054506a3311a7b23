#!/usr/bin/env bash
# scripts/check-layers.sh [SRC]: fails on an #include that runs from a lower
# layer to a higher one (docs/architecture.md, "Layers"), printing each as
# FILE:LINE. Layers, from the ground up:
#  -1 include/syncpoint/          the public headers: they include only <syncpoint/...>,
#                                 CAF, Torch and the standard library, never the tree
#   0 core/                       the vocabulary every layer shares
#   1 models/, protocols/         each on core only (not on each other)
#   2 actors/                     on core, models and protocols
#   3 runtime/records/            files: checkpoints, runs, models, summaries
#   4 runtime/job/                the job plan and the one-process job, checkpointing
#   5 runtime/studies/            simulate, tune-switch, sweeps and their specs, spread, compare's runs
#   6 runtime/report/             the comparison and sweep pages, their charts and tables, what they conclude
#   7 runtime/cluster/net/        endpoints, TLS files and their errors, the file limit
#   8 runtime/cluster/dataplane/  the bulk channel, shared-memory rings, packing, the data plane
#   9 runtime/cluster/wire/       the cluster's typed interfaces and messages, connecting to the head
#  10 runtime/cluster/jobs/       the job runner and its parts, placement, sweeps, the watchers
#  11 runtime/cluster/control/    the head, its journal and slots, nodes, a sweep's cells on a node
#  12 runtime/cluster/client/     submitting from a program, launching from a launcher's ranks
#  13 runtime/cluster/dashboard/  the hub, its views, pages and HTTP server
#  14 cli/ bench/ examples/ tests/ fuzz/   on anything, except that bench/ includes nothing of cli/
#                                 (a benchmark measures the library, not the command's code)
#  15 python/                     the Python package's extension: on anything, and nothing on it
# A file may include its own folder's files (by a root-relative path, or by its
# bare name); a file or an include in no layer is an error too, so a new folder
# gets a layer here first.
#
# scripts/check-layers.sh --links [SRC]: fails when a benchmark links test code:
# a target of CMakeLists.txt whose first source is in bench/ that compiles a
# tests/ file or reaches, through target_link_libraries, a target that does.
# `--self-test` checks that a planted upward include and a planted link are caught.
set -euo pipefail

check() {
  local dirs=()
  for d in include core models protocols compressors actors runtime cli bench examples tests fuzz python; do
    [ -d "$1/$d" ] && dirs+=("$d")
  done
  (cd "$1" && find "${dirs[@]}" \( -name '*.hpp' -o -name '*.cpp' -o -name '*.h' \) -print | sort | xargs awk '
  function layer(p) {
    if (p ~ /^include\//) return -1
    if (p ~ /^core\//) return 0
    if (p ~ /^(models|protocols|compressors)\//) return 1
    if (p ~ /^actors\//) return 2
    if (p ~ /^runtime\/records\//) return 3
    if (p ~ /^runtime\/job\//) return 4
    if (p ~ /^runtime\/studies\//) return 5
    if (p ~ /^runtime\/report\//) return 6
    if (p ~ /^runtime\/cluster\/net\//) return 7
    if (p ~ /^runtime\/cluster\/dataplane\//) return 8
    if (p ~ /^runtime\/cluster\/wire\//) return 9
    if (p ~ /^runtime\/cluster\/jobs\//) return 10
    if (p ~ /^runtime\/cluster\/control\//) return 11
    if (p ~ /^runtime\/cluster\/client\//) return 12
    if (p ~ /^runtime\/cluster\/dashboard\//) return 13
    if (p ~ /^(cli|bench|examples|tests|fuzz)\//) return 14
    if (p ~ /^python\//) return 15
    return -2
  }
  function folder(p) { sub(/\/[^\/]*$/, "", p); sub(/^protocols\/.*/, "protocols", p); return p }
  FNR == 1 { file = FILENAME; from = layer(file)
             if (from < -1) { printf "%s: a file in no layer (give its folder a layer in check-layers.sh)\n", file; bad = 1 } }
  from == -1 && /^[ \t]*#[ \t]*include[ \t]*("|<(core|models|protocols|actors|runtime|cli|bench|examples|tests|fuzz|python)\/)/ {
    printf "%s:%d: a public header includes the tree (%s): only <syncpoint/...>, CAF, Torch and the standard library\n", file, FNR, $0
    bad = 1; next
  }
  /^[ \t]*#[ \t]*include[ \t]*"/ {
    inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
    if (inc !~ /\//) { dir = file; sub(/\/[^\/]*$/, "", dir); inc = dir "/" inc }  # beside the file
    to = layer(inc)
    if (to < -1) { printf "%s:%d: #include \"%s\" names no project folder\n", file, FNR, inc; bad = 1; next }
    if (file ~ /^bench\// && inc ~ /^cli\//) {
      printf "%s:%d: #include \"%s\": a benchmark includes the command'"'"'s code (put what it needs in the library)\n", file, FNR, inc
      bad = 1; next
    }
    if (to < from || folder(inc) == folder(file) || (from == 14 && to == 14)) next
    printf "%s:%d: #include \"%s\" runs up (layer %d includes layer %d)\n", file, FNR, inc, from, to; bad = 1
  }
  END { exit bad }')
}

# The targets of $1/CMakeLists.txt, their sources and the targets they link,
# read from add_library, add_executable, target_sources and
# target_link_libraries (variables and generator expressions are not targets
# of the tree, and are skipped); prints each bench target that reaches test code.
check_links() {
  awk '
  function flush(   n, i, name, words) {
    n = split(call, words, /[ \t\n()]+/)
    i = 1; while (i <= n && words[i] == "") i++
    cmd = words[i++]; name = words[i++]
    if (cmd != "add_library" && cmd != "add_executable" && cmd != "target_sources" && cmd != "target_link_libraries") return
    targets[name] = 1
    for (; i <= n; i++) {
      w = words[i]
      if (w == "" || w ~ /^(STATIC|SHARED|OBJECT|INTERFACE|PUBLIC|PRIVATE|ALIAS|EXCLUDE_FROM_ALL)$/ || w ~ /[$<>]/) continue
      if (cmd == "target_link_libraries") { links[name] = links[name] " " w; continue }
      if (w ~ /^tests\//) tests_in[name] = 1
      if (cmd != "target_sources" && !(name in home)) home[name] = w  # a target belongs where its first source is
      if (home[name] ~ /^bench\//) bench_in[name] = 1
    }
  }
  function reaches_tests(t, seen,   n, i, parts) {
    if (t in seen) return 0
    seen[t] = 1
    if (t in tests_in) return 1
    n = split(links[t], parts, " ")
    for (i = 1; i <= n; i++)
      if (parts[i] in targets && reaches_tests(parts[i], seen)) return 1
    return 0
  }
  { sub(/#.*/, "") }
  call != "" { call = call " " $0; if (depth_closes()) { flush(); call = "" } ; next }
  /^[ \t]*(add_library|add_executable|target_sources|target_link_libraries)[ \t]*\(/ {
    call = $0; if (depth_closes()) { flush(); call = "" }
  }
  function depth_closes(   o, c, tmp) { tmp = call; o = gsub(/\(/, "(", tmp); c = gsub(/\)/, ")", tmp); return c >= o }
  END {
    for (t in bench_in) {
      delete seen
      if (reaches_tests(t, seen)) { printf "CMakeLists.txt: %s (a benchmark) links or compiles test code (tests/)\n", t; bad = 1 }
    }
    exit bad
  }' "$1/CMakeLists.txt"
}

if [ "${1:-}" = --self-test ]; then
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  mkdir -p "$tree"/{include/syncpoint,core,models,actors,runtime/{records,job,studies,report,cluster/{net,dataplane,wire,jobs,control,client,dashboard}},cli,bench}
  echo '#include <syncpoint/d.hpp>' > "$tree/include/syncpoint/p.hpp"  # public on public: fine
  echo '#include <syncpoint/p.hpp>' > "$tree/core/b.hpp"              # the tree on public: fine
  echo '#include "core/a.hpp"' > "$tree/models/m.hpp"            # down: fine
  echo '#include "runtime/cluster/control/h.hpp"' > "$tree/cli/c.cpp"    # down: fine
  echo '#include "runtime/job/j.hpp"' > "$tree/runtime/cluster/control/h.hpp"  # down: fine
  echo '#include "runtime/records/r.hpp"' > "$tree/runtime/job/j.hpp"  # down: fine
  echo '#include "runtime/cluster/control/h.hpp"' > "$tree/runtime/cluster/dashboard/d.hpp"  # down: fine
  echo '#include "runtime/cluster/dataplane/t.hpp"' > "$tree/runtime/cluster/control/k.hpp"  # down: fine
  echo '#include "runtime/cluster/net/n.hpp"' > "$tree/runtime/cluster/dataplane/t.hpp"  # down: fine
  echo '#include "runtime/cluster/wire/i.hpp"' > "$tree/runtime/cluster/client/s.hpp"  # down: fine
  echo '#include "runtime/studies/s.hpp"' > "$tree/runtime/report/p.hpp"  # down: fine
  echo '#include "runtime/report/p.hpp"' > "$tree/runtime/cluster/jobs/w.hpp"  # down: fine
  echo '#include "runtime/report/p.hpp"' > "$tree/bench/b.cpp"  # down: fine
  printf 'add_library(helper STATIC bench/helper.cpp)\nadd_executable(bench_x bench/x.cpp)\ntarget_link_libraries(bench_x PRIVATE ${LIBS} helper)\nadd_executable(t tests/t.cpp)\ntarget_link_libraries(t PRIVATE helper)\n' > "$tree/CMakeLists.txt"
  check "$tree" || { echo "check-layers: self-test: a clean tree was refused"; exit 1; }
  check_links "$tree" || { echo "check-layers: self-test: clean links were refused"; exit 1; }
  echo '#include "actors/w.hpp"' > "$tree/core/a.hpp"              # up: must be caught
  echo '#include "runtime/cluster/control/h.hpp"' > "$tree/runtime/job/j.hpp"  # up: must be caught
  echo '#include "runtime/cluster/dashboard/d.hpp"' > "$tree/runtime/cluster/control/h.hpp"  # up: caught
  echo '#include "runtime/cluster/wire/i.hpp"' > "$tree/runtime/cluster/dataplane/t.hpp"  # up: caught
  echo '#include "runtime/cluster/control/h.hpp"' > "$tree/runtime/cluster/jobs/w.hpp"  # up: caught
  echo '' > "$tree/runtime/cluster/loose.hpp"                         # in no room: caught
  echo '#include "runtime/job/j.hpp"' > "$tree/runtime/records/r.hpp"  # up: caught
  echo '#include "core/a.hpp"' > "$tree/include/syncpoint/q.hpp"      # public on the tree: caught
  echo '#include <runtime/job/j.hpp>' > "$tree/include/syncpoint/r.hpp"   # the same with <>: caught
  echo '' > "$tree/runtime/loose.hpp"                                 # in no layer: caught
  echo '#include "runtime/cluster/control/h.hpp"' > "$tree/runtime/report/p.hpp"  # up: caught
  echo '#include "cli/c.hpp"' > "$tree/bench/b.cpp"                   # a benchmark on the command: caught
  out=$(check "$tree" || true)
  [[ "$out" == *'core/a.hpp:1: #include "actors/w.hpp" runs up'* &&
     "$out" == *'runtime/job/j.hpp:1: #include "runtime/cluster/control/h.hpp" runs up'* &&
     "$out" == *'runtime/cluster/control/h.hpp:1: #include "runtime/cluster/dashboard/d.hpp" runs up'* &&
     "$out" == *'runtime/cluster/dataplane/t.hpp:1: #include "runtime/cluster/wire/i.hpp" runs up'* &&
     "$out" == *'runtime/cluster/jobs/w.hpp:1: #include "runtime/cluster/control/h.hpp" runs up'* &&
     "$out" == *'runtime/cluster/loose.hpp: a file in no layer'* &&
     "$out" == *'runtime/records/r.hpp:1: #include "runtime/job/j.hpp" runs up'* &&
     "$out" == *'include/syncpoint/q.hpp:1: a public header includes the tree'* &&
     "$out" == *'include/syncpoint/r.hpp:1: a public header includes the tree'* &&
     "$out" == *'runtime/loose.hpp: a file in no layer'* &&
     "$out" == *'runtime/report/p.hpp:1: #include "runtime/cluster/control/h.hpp" runs up'* &&
     "$out" == *"bench/b.cpp:1: #include \"cli/c.hpp\": a benchmark includes the command's code"* ]] \
    || { echo "check-layers: self-test: an upward include was not caught: $out"; exit 1; }
  printf 'add_library(tested STATIC\n  tests/fixture.cpp)\ntarget_link_libraries(helper PUBLIC tested)\n' >> "$tree/CMakeLists.txt"
  out=$(check_links "$tree" || true)
  [[ "$out" == *'bench_x (a benchmark) links or compiles test code'* ]] \
    || { echo "check-layers: self-test: a benchmark linking test code was not caught: $out"; exit 1; }
  echo "check-layers: self-test passed"
  exit 0
fi
if [ "${1:-}" = --links ]; then
  check_links "${2:-$(dirname "$0")/..}" && echo "check-layers: no benchmark links test code"
  exit
fi
check "${1:-$(dirname "$0")/..}" && echo "check-layers: no include runs up"
