#!/usr/bin/env bash
# scripts/test-container.sh BUILD: builds the image of deploy/container/Containerfile with podman
# and runs deploy/kubernetes/job.yaml's Job in it: 3 containers on one podman network, each with the
# variables the Indexed Job gives its pod, as close to a Kubernetes cluster as one machine comes
# (issue 62, step 7; docs/launch.md, "Kubernetes"). Fails, naming what is wrong, when:
#   - the image does not build, or its entrypoint is not the installed command;
#   - a rank exits non-zero, or the Job does not end within its deadline;
#   - rank 0 wrote no summary where --out names it, on the results volume.
# Exits 77 (skipped, never passed) where containers cannot start: no root, no podman, no
# mmdebstrap, or podman cannot run a container or make a network here.
#
# What is real and what stands in:
#   - debian:12 is a Debian 12 root that mmdebstrap makes from this machine's own apt sources (no
#     registry is reached), imported into a podman store of the test's own (BUILD/container/store).
#     It holds the package's Depends already, so that the image's own `apt-get install` of the
#     .deb only unpacks it (the root is kept: a later run makes it again only when Depends change).
#   - The Containerfile's last stage is built as written, but for where the .deb comes from: the
#     build stage compiles the whole tree (tens of minutes on 2 cores), so the .deb that
#     scripts/test-package.sh made from this build stands in for it (COPY from the context).
#   - The pods are containers named as the Job names them (syncpoint-train-0..2), on a network
#     whose DNS answers the headless Service's names (syncpoint-train-0.syncpoint-head); the
#     Secret's token is a fresh random one; the volume claim is BUILD/container/results.
#   - The command and the variables are read from job.yaml, not copied.
set -euo pipefail
if [ $# -ne 1 ] || [ ! -f "$1/CMakeCache.txt" ]; then
  echo "usage: scripts/test-container.sh BUILD   (a configured and built build folder)" >&2
  exit 2
fi
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "$1" && pwd)
WORK=$BUILD/container
fail() { echo "test-container: $*" >&2; exit 1; }
skip() { echo "test-container: skipped: $*" >&2; exit 77; }
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$BUILD/CMakeCache.txt")
deb=$BUILD/package/syncpoint_${version}_amd64.deb
[ -f "$deb" ] || fail "no $deb: scripts/test-package.sh makes it (the test suite runs it first)"
[ "$(id -u)" -eq 0 ] || skip "needs root (a podman store and network of the test's own)"
command -v podman > /dev/null || skip "no podman (scripts/setup.sh installs it)"
command -v mmdebstrap > /dev/null || skip "no mmdebstrap (scripts/setup.sh installs it)"
mkdir -p "$WORK"
store=(--root "$WORK/store" --runroot "$WORK/run")  # (a store of the test's own: nothing of the machine's is touched)
podman() { command podman "${store[@]}" "$@"; }

# The Job, as job.yaml declares it: the container's command, its variables, the mount.
mapfile -t job < <(/usr/bin/python3 - "$SRC/deploy/kubernetes/job.yaml" <<'EOF'
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
spec = job["spec"]
pod = spec["template"]["spec"]
c = pod["containers"][0]
print(spec["completions"]); print(job["metadata"]["name"]); print(pod["subdomain"])
print(c["volumeMounts"][0]["mountPath"]); print(c["image"])
print(" ".join(e["name"] for e in c["env"] if "valueFrom" in e))
for e in c["env"]:
    if "value" in e: print("env:" + e["name"] + "=" + e["value"])
for arg in c["command"]: print("arg:" + arg)
EOF
)
[ ${#job[@]} -ge 8 ] || fail "deploy/kubernetes/job.yaml does not read as a Job with a command (python3-yaml: above)"
ranks=${job[0]} name=${job[1]} subdomain=${job[2]} mount=${job[3]} image=${job[4]} secrets=${job[5]}
[ "$secrets" = SYNCPOINT_TOKEN ] || fail "job.yaml's variables from Secrets are '$secrets', not SYNCPOINT_TOKEN as this test gives"
env=() command=()
for line in "${job[@]:6}"; do
  case $line in env:*) env+=(-e "${line#env:}") ;; arg:*) command+=("${line#arg:}") ;; esac
done
[ ${#command[@]} -gt 1 ] || fail "job.yaml's container has no command"

# debian:12: a root from this machine's apt sources, with the package's Depends (alternatives: the first).
depends=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/[[:space:]]//g' | grep . | sort | tr '\n' ',')
root_id=$(printf '%s\n' "$depends" | sha256sum | cut -c1-16)
if [ "$(podman image inspect --format '{{index .Labels "root"}}' docker.io/library/debian:12 2>/dev/null)" != "$root_id" ]; then
  podman rmi -a -f > /dev/null 2>&1 || true  # (this store's images only; its root stays mounted while podman runs)
  t0=$(date +%s)
  # (the host's downloaded packages are lent to it: only what this machine lacks is fetched)
  mmdebstrap --variant=apt --include="${depends%,}" --skip=cleanup/apt/lists \
    --setup-hook='mkdir -p "$1"/var/cache/apt/archives' \
    --setup-hook='for f in /var/cache/apt/archives/*.deb; do [ -f "$f" ] || continue; ln "$f" "$1"/var/cache/apt/archives/ 2> /dev/null || cp "$f" "$1"/var/cache/apt/archives/; done' \
    bookworm "$WORK/root.tar" > "$WORK/mmdebstrap.log" 2>&1 ||
    { tail -30 "$WORK/mmdebstrap.log" >&2; fail "mmdebstrap could not make a Debian 12 root from this machine's apt sources"; }
  podman import --change "LABEL root=$root_id" --change 'CMD ["bash"]' "$WORK/root.tar" docker.io/library/debian:12 \
    > "$WORK/import.log" 2>&1 || { cat "$WORK/import.log" >&2; fail "podman could not import the root"; }
  rm -f "$WORK/root.tar"
  echo "test-container: debian:12 made from this machine's apt sources in $(( $(date +%s) - t0 )) s"
fi
# Where podman's own runtime cannot start a container (this machine: crun refuses its cgroups,
# mounted half v1 and half v2, and runc is refused the rlimits podman asks for, above what the
# sandbox lets a process raise), runc runs it with the limits it inherits: a wrapper drops the
# rlimits from the container's config.json and calls runc.
runtime=()
try_run() { podman "${runtime[@]}" run --rm --network none docker.io/library/debian:12 true 2>&1; }
if ! out=$(try_run); then
  command -v runc > /dev/null || skip "podman cannot run a container here ($out), and there is no runc to try"
  cat > "$WORK/runc-without-rlimits" <<'WRAPPER'
#!/bin/sh
# runc, less the container's rlimits (written by scripts/test-container.sh)
bundle= prev=
for a in "$@"; do
  [ "$prev" = --bundle ] && bundle=$a
  case $a in --bundle=*) bundle=${a#--bundle=} ;; esac
  prev=$a
done
if [ -n "$bundle" ] && [ -f "$bundle/config.json" ]; then
  /usr/bin/python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); c.get("process", {}).pop("rlimits", None); json.dump(c, open(sys.argv[1], "w"))' \
    "$bundle/config.json" || exit 1
fi
exec runc "$@"
WRAPPER
  chmod +x "$WORK/runc-without-rlimits"
  runtime=(--runtime "$WORK/runc-without-rlimits")
  again=$(try_run) || skip "podman cannot run a container here ($out), nor through runc without rlimits ($again)"
  echo "test-container: containers run through runc without podman's rlimits (podman's own runtime: $(tail -1 <<< "$out"))"
fi
podman() { command podman "${store[@]}" "${runtime[@]}" "$@"; }

# The image: the Containerfile's last stage, the .deb from the context instead of the build stage.
rm -rf "$WORK/context" && mkdir -p "$WORK/context"
cp "$deb" "$WORK/context/"
awk '/^FROM /{stage=$0} stage!="" && stage !~ / AS build$/' "$SRC/deploy/container/Containerfile" |
  sed 's|^COPY --from=build /out/|COPY |' > "$WORK/context/Containerfile"
grep -q '^COPY syncpoint_\*_amd64.deb /tmp/$' "$WORK/context/Containerfile" ||
  fail "the Containerfile's last stage no longer copies the build stage's .deb as this test expects"
t0=$(date +%s)
podman build --pull=never --network=host -t "$image" -f "$WORK/context/Containerfile" "$WORK/context" \
  > "$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log" >&2; fail "the image does not build"; }
echo "test-container: built $image in $(( $(date +%s) - t0 )) s"
podman image prune -f > /dev/null 2>&1 || true  # (the previous run's image, untagged now)
grep -q "^syncpoint $version" <<< "$(podman run --rm --network none "$image" --version)" ||
  fail "the image's entrypoint is not syncpoint $version"

# The Job: its pods as containers, on a network of their own.
net=syncpoint-test-$$
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
cleanup() {
  for ((i = 0; i < ranks; i++)); do podman rm -f -t 0 "$name-$i" > /dev/null 2>&1 || true; done
  podman network rm -f "$net" > /dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM  # (ctest's timeout: the EXIT trap then removes the containers)
cleanup
out=$(podman network create "$net" 2>&1) || skip "podman cannot make a network here: $out"
rm -rf "$WORK/results" "$WORK/podman.log" && mkdir -p "$WORK/results"
t0=$(date +%s)
for ((i = 0; i < ranks; i++)); do
  podman run -d --name "$name-$i" --hostname "$name-$i" --network "$net" \
    --network-alias "$name-$i.$subdomain" -v "$WORK/results:$mount" \
    "${env[@]}" -e SYNCPOINT_TOKEN="$token" -e JOB_COMPLETION_INDEX="$i" \
    --entrypoint "${command[0]}" "$image" "${command[@]:1}" > /dev/null 2>> "$WORK/podman.log" ||
    { cat "$WORK/podman.log" >&2; fail "podman could not start $name-$i"; }
done
status=0
for ((i = 0; i < ranks; i++)); do
  code=$(timeout 600 "$(command -v podman)" "${store[@]}" "${runtime[@]}" wait "$name-$i") || code="no end within 600 s"
  podman logs "$name-$i" > "$WORK/rank$i.log" 2>&1 || true
  if [ "$code" != 0 ]; then
    echo "test-container: $name-$i ended with $code; its log:" >&2
    tail -20 "$WORK/rank$i.log" >&2
    status=1
  fi
done
[ "$status" -eq 0 ] || fail "the Job did not succeed (logs in $WORK/rank*.log)"
out_dir=$(printf '%s\n' "${command[@]}" | sed -n '/^--out$/{n;p}')
checkpoints=$(printf '%s\n' "${command[@]}" | sed -n '/^--checkpoint-dir$/{n;p}')
summary=$WORK/results/${out_dir#"$mount"/}/summary.json
[ -s "$summary" ] || fail "rank 0 wrote no $out_dir/summary.json on the volume"
accuracy=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["final_accuracy"])' "$summary")
taken=$(find "$WORK/results/${checkpoints#"$mount"/}" -type f 2> /dev/null | wc -l)
echo "test-container: the Job's $ranks ranks ran in $(( $(date +%s) - t0 )) s: final accuracy $accuracy, $taken checkpoint files"
