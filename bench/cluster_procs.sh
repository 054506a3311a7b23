# Sourced by the bench scripts that start a head and nodes on this machine
# (loopback): a temporary folder ($tmp), the processes started ($pids,
# killed with the folder removed on exit), and starting them.
#
#   source bench/cluster_procs.sh
#   start_head                # $head: its HOST:PORT (start_head --dashboard any: $url too)
#   start_node a 1            # name, slots
#   stop_all                  # ends them all now
tmp=$(mktemp -d)
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
trap 'stop_all; rm -rf "$tmp"' EXIT
await_line() {  # file, text: wait up to 120 s for a line containing text
  for _ in $(seq 1200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "${0##*/}: no '$2' in $1:" >&2; cat "$1" >&2; exit 1
}
start_head() {  # [head's options]; with --dashboard, $url is its address
  build/syncpoint head --host 127.0.0.1 --port 0 "$@" > "$tmp/head.out" 2> "$tmp/head.err" & pids+=($!)
  await_line "$tmp/head.out" "listening on"
  head=$(sed -n 's/.*listening on \([0-9.]*:[0-9]*\).*/\1/p' "$tmp/head.out" | head -1)
  if [[ " $* " == *" --dashboard "* ]]; then
    await_line "$tmp/head.out" "dashboard: http"
    url=$(grep -o "dashboard: http[^ ;]*" "$tmp/head.out" | cut -d' ' -f2)
  fi
}
start_node() {  # name, slots
  build/syncpoint node --join "$head" --name "$1" --slots "$2" > "$tmp/$1.out" 2> "$tmp/$1.err" & pids+=($!)
  await_line "$tmp/$1.out" "joined the head"
}
