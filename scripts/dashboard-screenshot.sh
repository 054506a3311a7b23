#!/usr/bin/env bash
# scripts/dashboard-screenshot.sh [OUT]: the head's dashboard as a person sees
# it. Starts a head and two nodes on loopback, submits a long sync-switch job
# with a straggler and the PS sharded on the nodes, waits until the job's page
# has figures, and has headless Chromium take screenshots of the cluster page
# and the job's page (OUT/cluster.png, OUT/job.png; default build/dashboard-shots),
# then stops the job and shoots the ended job's page (OUT/job-ended.png).
# Not part of the test command (it needs a browser): run it after changing a
# page, and look at the pictures. Installs Debian's chromium if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build/dashboard-shots}")
bin=build/syncpoint
[ -x "$bin" ] || { echo "dashboard-screenshot: build first (scripts/setup.sh)" >&2; exit 2; }
if ! command -v chromium > /dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium > /dev/null
fi
mkdir -p "$out"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  wait 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# Waits (up to 120 s: a hang's deadline) until FILE has a line matching PATTERN.
await() {
  for _ in $(seq 1200); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.1; done
  echo "dashboard-screenshot: no '$2' in $1" >&2; cat "$1" >&2; exit 1
}

# Waits (the same deadline) until the job's own clock, in its eval lines on the
# submitter's stderr, has passed SECONDS: a run of that length is on the page.
await_run_time() {
  for _ in $(seq 1200); do
    grep "\] eval " "$work/submit.err" 2> /dev/null |
      awk -v s="$1" '{ sub(/.*t= */, ""); if ($1 + 0 >= s) found = 1 } END { exit !found }' && return 0
    sleep 0.1
  done
  echo "dashboard-screenshot: the job did not run $1 s" >&2; cat "$work/submit.err" >&2; exit 1
}

# Waits (the same deadline) until the dashboard's PATH answers with a body
# matching PATTERN (plain HTTP on loopback, through bash's /dev/tcp).
await_page() {
  local hostport=${url#http://}; hostport=${hostport%/}
  for _ in $(seq 1200); do
    if exec 3<> "/dev/tcp/${hostport%:*}/${hostport#*:}"; then
      printf 'GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n' "$1" "$hostport" >&3
      grep -q "$2" <&3 && { exec 3<&-; return 0; }
      exec 3<&-
    fi 2> /dev/null
    sleep 0.1
  done
  echo "dashboard-screenshot: $1 never matched '$2'" >&2; exit 1
}

"$bin" head --port 0 --dashboard any --runs "$work/runs" > "$work/head.out" 2> "$work/head.err" & pids+=($!)
await "$work/head.out" "dashboard: http"
head=$(grep -o "listening on [0-9.]*:[0-9]*" "$work/head.out" | cut -d' ' -f3)
url=$(grep -o "dashboard: http[^ ;]*" "$work/head.out" | cut -d' ' -f2)
for n in a b; do
  "$bin" node --join "$head" --name "$n" --slots 2 > "$work/node-$n.out" 2>&1 & pids+=($!)
  await "$work/node-$n.out" "joined the head"
done
"$bin" submit --head "$head" --protocol sync-switch --workers 3 --model mlp --dataset synthetic \
  --train-limit 4000 --test-limit 1000 --epochs 100000 --max-time 600 --lr 0.05 --eval-every 5 \
  --lr-schedule cosine --lr-epochs 600 --straggler 2:x3 --ps-placement nodes --ps-shards 2 --progress > "$work/submit.out" 2> "$work/submit.err" &
submitter=$!; pids+=("$submitter")
# 35 s of run give the charts a shape and fill most of the timeline's minute.
await_run_time 35
shoot() {  # URL FILE HEIGHT
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --user-data-dir="$work/chromium" --hide-scrollbars \
    --window-size=1280,"$3" --virtual-time-budget=4000 --screenshot="$2" "$1" 2> /dev/null
  echo "dashboard-screenshot: $2"
}
shoot "$url" "$out/cluster.png" 700
shoot "${url}jobs/1" "$out/job.png" 2000
kill -INT "$submitter"
await "$work/submit.err" "stopped early"
# The ended job's view, published by the hub, lists the files its watcher wrote.
await_page /api/jobs/1 '"files": \["'
shoot "${url}jobs/1" "$out/job-ended.png" 700
