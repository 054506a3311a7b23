#!/usr/bin/env bash
# scripts/test-slurm.sh BUILD: `syncpoint launch` under a real Slurm (issue 46).
# Starts a Slurm of its own on this machine: munged with its own key and
# socket, slurmctld and slurmd with a slurm.conf for this host, their state
# under a temporary folder, their ports free ones. Then, with srun and sbatch:
#   1. a 3-task job trains bsp with 2 workers on the real clock: accuracy and
#      files, and each node's slots from --cpus-per-task;
#   2. the same on the virtual clock (rank 0 runs it; the others have nothing to do);
#   3. an open job, scancel'led once its first evaluation is in the output: it
#      ends cleanly, with its files written, and every task exits 143;
#   4. examples/slurm/train.sbatch with --signal=USR1@80 and no periodic
#      checkpoint: Slurm's warning takes one, and the job, requeued, resumes
#      from it (cred_expire=5 below: Slurm holds a requeued job back that long);
#   5. examples/slurm/head-restart.sbatch: the head SIGKILLed mid-job comes
#      back in the same allocation, its nodes (the same processes) and the
#      submitter wait for it, and the job goes on from its newest checkpoint.
# Exit 77 (counted as skipped by ctest, never as passed) when Slurm cannot run
# here, after printing the exact error. Kills what it started, by pid.
set -euo pipefail
source "$(dirname "$0")/process-helpers.sh"
build=$(realpath "${1:?usage: scripts/test-slurm.sh BUILD}")
bin=$build/syncpoint
[ -x "$bin" ] || { echo "test-slurm: no $bin (build first)" >&2; exit 2; }

skip() { echo "test-slurm: SKIPPED: $*" >&2; exit 77; }
fail() { echo "test-slurm: FAILED: $*" >&2; exit 1; }

for tool in munged munge slurmctld slurmd srun sbatch scancel squeue sinfo; do
  command -v "$tool" > /dev/null || skip "$tool is not installed (scripts/setup.sh installs slurm-wlm and munge)"
done
[ "$(id -u)" = 0 ] || skip "slurmd runs as root (it starts jobs as their users); this is user $(id -un)"
getent passwd munge > /dev/null || skip "no user munge (Debian's munge package creates it)"

work=$(mktemp -d /tmp/syncpoint-slurm.XXXXXX)
chmod 755 "$work"
pids=()

# Whether none of the processes named is alive.
all_gone() {
  local p
  for p in "$@"; do kill -0 "$p" 2> /dev/null && return 1; done
  return 0
}

# The daemons get SIGTERM and 10 s to end (the hang's deadline), then SIGKILL.
cleanup() {
  [ -n "${SLURM_CONF:-}" ] && scancel --quiet --user=root 2> /dev/null || true
  [ -f "$work/run/munged.pid" ] && pids+=("$(cat "$work/run/munged.pid")")
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  await 'all_gone "${pids[@]}"' 10 || for p in "${pids[@]}"; do kill -9 "$p" 2> /dev/null || true; done
  [ -n "${KEEP_SLURM_WORK:-}" ] && echo "test-slurm: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT

# munged: its own key and socket (the socket's folder open to all, the key's not).
mkdir -p "$work/munge" "$work/run"
chown munge:munge "$work/munge" "$work/run"
chmod 700 "$work/munge"
chmod 755 "$work/run"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 2> /dev/null
chown munge:munge "$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
if ! out=$(runuser -u munge -- munged --socket="$work/run/munge.sock" --key-file="$work/munge/munge.key" \
             --pid-file="$work/run/munged.pid" --log-file="$work/munge/munged.log" \
             --seed-file="$work/munge/munged.seed" 2>&1); then
  skip "munged does not start: $out"
fi
await "[ -S '$work/run/munge.sock' ]" 10 || skip "munged made no socket: $(cat "$work/munge/munged.log" 2> /dev/null)"

host=$(hostname -s)
getent hosts "$host" > /dev/null || skip "this host's name '$host' does not resolve (slurmd finds its node by it)"
mkdir -p "$work/state" "$work/spool" "$work/log"
export SLURM_CONF=$work/slurm.conf
cat > "$SLURM_CONF" << EOF
ClusterName=syncpoint
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/run/munge.sock,cred_expire=5
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/run/slurmctld.pid
SlurmdPidFile=$work/run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmUser=root
ReturnToService=2
KillWait=30
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=60 State=UP
EOF
slurmctld -D -f "$SLURM_CONF" > "$work/log/slurmctld.out" 2>&1 & pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$work/log/slurmd.out" 2>&1 & pids+=($!)
if ! await "[ \"\$(sinfo -h -o %t 2> /dev/null)\" = idle ]" 60; then
  echo "--- slurmctld ---" >&2; tail -20 "$work/log/slurmctld.log" "$work/log/slurmctld.out" >&2 || true
  echo "--- slurmd ---" >&2; tail -20 "$work/log/slurmd.log" "$work/log/slurmd.out" >&2 || true
  skip "the node did not become idle within 60 s: $(sinfo -h -o '%t %E' 2>&1 | head -1)"
fi
echo "test-slurm: Slurm $(sinfo -V | cut -d' ' -f2) up, node $host idle"

job=(--protocol bsp --workers 2 --model softmax --dataset synthetic --train-limit 4000 --test-limit 500
     --lr 0.1 --seed 3 --eval-every 0.5)
# A figure of a summary.json ("final_accuracy": 0.968 -> 0.968).
figure() { grep -o "\"$2\": [^,}]*" "$1/summary.json" | head -1 | cut -d' ' -f2; }
check_run() {  # DIR CLOCK
  [ -f "$1/summary.json" ] && [ -f "$1/trace.jsonl" ] || fail "$1: no summary.json and trace.jsonl"
  [ "$(figure "$1" workers)" = 2 ] || fail "$1: workers $(figure "$1" workers), not 2"
  [ "$(figure "$1" clock)" = "\"$2\"" ] || fail "$1: clock $(figure "$1" clock), not $2"
  awk -v a="$(figure "$1" final_accuracy)" 'BEGIN { exit !(a > 0.8) }' || fail "$1: final accuracy $(figure "$1" final_accuracy) <= 0.8"
  echo "test-slurm: $2 clock: final accuracy $(figure "$1" final_accuracy)"
}

# 1 and 2: srun, 3 tasks on 2 CPUs (--overcommit: Slurm places them on one node anyway).
timeout 300 srun --overcommit -n 3 -c 2 -t 5 "$bin" launch -- "${job[@]}" --epochs 2 --out "$work/real" \
  > "$work/real.out" 2>&1 || { rc=$?; cat "$work/real.out" >&2; fail "srun, real clock: exit $rc"; }
check_run "$work/real" real
grep -q "rank2' joined the head at .* with 2 slots" "$work/real.out" ||
  { cat "$work/real.out" >&2; fail "no node rank 2 with 2 slots (srun -c 2) in the output"; }
timeout 300 srun --overcommit -n 3 -t 5 "$bin" launch -- "${job[@]}" --epochs 2 --clock virtual --out "$work/virtual" \
  > "$work/virtual.out" 2>&1 || { rc=$?; cat "$work/virtual.out" >&2; fail "srun, virtual clock: exit $rc"; }
check_run "$work/virtual" virtual

# 3: scancel mid-job. The job cannot end on its own first (1e5 epochs); its first evaluation proves it runs.
cat > "$work/open.sbatch" << EOF
#!/bin/bash
#SBATCH --ntasks=3 --overcommit --time=10 --output=$work/open.out
srun "$bin" launch -- ${job[*]} --epochs 100000 --max-time 900 --progress --out $work/open
EOF
id=$(sbatch --parsable "$work/open.sbatch") || fail "sbatch refused the job"
await "grep -q '\] eval ' '$work/open.out' 2> /dev/null" 120 || { cat "$work/open.out" >&2; fail "job $id never evaluated"; }
scancel "$id"
await "[ -z \"\$(squeue -h -j $id 2> /dev/null)\" ]" 120 || fail "job $id still in the queue 120 s after scancel"
grep -q "stopped early" "$work/open.out" || { cat "$work/open.out" >&2; fail "scancel: the submitter did not say the job stopped"; }
[ "$(grep -c "the job's exit code is 143" "$work/open.out")" = 2 ] ||
  { cat "$work/open.out" >&2; fail "scancel: the two nodes did not exit with the job's code 143"; }
[ -f "$work/open/summary.json" ] && [ -f "$work/open/trace.jsonl" ] || { cat "$work/open.out" >&2; fail "scancel: no files written"; }
echo "test-slurm: scancel ended job $id cleanly after $(figure "$work/open" samples) samples, files written"

# 4: Slurm's warning before the time limit takes a checkpoint, and the job, requeued, resumes from
# it. No periodic checkpoint (CHECKPOINT_EVERY=0): the one there is the signal's. Slurm sends
# USR1 80 s before the 2-minute limit, give or take its 30 s tick (so 10 to 70 s in, never while
# the processes start); a signal before the run starts is held until it does. Each step waits for
# the event that proves the job got there: the checkpoint, the script's resuming line, an
# evaluation after it.
src=$(cd "$(dirname "$0")/.." && pwd)
id=$(PATH="$build:$PATH" SHARED="$work/shared" CHECKPOINT_EVERY=0 \
     SYNCPOINT_JOB="${job[*]} --epochs 100000 --max-time 900 --progress" \
     sbatch --parsable --overcommit --time=2 --signal=USR1@80 --output="$work/example.out" --open-mode=append \
     "$src/examples/slurm/train.sbatch") || fail "sbatch refused examples/slurm/train.sbatch"
await "ls '$work'/shared/ckpt/checkpoint-*.bin > /dev/null 2>&1" 120 ||
  { cat "$work/example.out" >&2; fail "job $id wrote no checkpoint on Slurm's USR1"; }
grep -q "checkpoint on request (SIGUSR1)" "$work/example.out" ||
  { cat "$work/example.out" >&2; fail "job $id: the checkpoint was not the signal's"; }
scontrol requeue "$id" || fail "scontrol requeue $id refused"
await "grep -q 'train.sbatch: resuming from' '$work/example.out'" 120 || { cat "$work/example.out" >&2; fail "job $id did not restart from its checkpoint"; }
await "sed -n '/train.sbatch: resuming/,\$p' '$work/example.out' | grep -c '\] eval ' > /dev/null" 120 || { cat "$work/example.out" >&2; fail "job $id did not train after its restart"; }
scancel "$id"
await "[ -z \"\$(squeue -h -j $id 2> /dev/null)\" ]" 120 || fail "job $id still in the queue 120 s after scancel"
grep -q '"resumed_from": "' "$work/shared/results/summary.json" || { cat "$work/example.out" >&2; fail "the restarted job's summary does not say it resumed"; }
echo "test-slurm: Slurm's USR1 took a checkpoint, and job $id, requeued, resumed from it"

# 5: the head killed mid-job, started again by the example's loop in the same allocation. An open
# job (it cannot end first); its first checkpoint and a later evaluation prove it runs; after the
# kill, the head's second start, the submitter's reattach and an evaluation after it prove it came
# back; scancel then ends it, as in 3.
hport=$(free_port)
id=$(PATH="$build:$PATH" SHARED="$work/hr" PORT="$hport" CHECKPOINT_EVERY=0.5 \
     SYNCPOINT_JOB="${job[*]} --epochs 100000 --max-time 900 --progress" \
     sbatch --parsable --overcommit --time=5 --output="$work/hr.out" "$src/examples/slurm/head-restart.sbatch") ||
  fail "sbatch refused examples/slurm/head-restart.sbatch"
await "grep -q 'checkpoint at' '$work/hr.out' 2> /dev/null" 120 || { cat "$work/hr.out" >&2; fail "job $id took no checkpoint"; }
await "sed -n '/checkpoint at/,\$p' '$work/hr.out' | grep -q '\] eval '" 120 || { cat "$work/hr.out" >&2; fail "job $id did not evaluate"; }
pkill -KILL -f -- "head --host 0.0.0.0 --port $hport " || fail "no head process on port $hport to kill"
await "grep -q 'starting it again' '$work/hr.out'" 60 || { cat "$work/hr.out" >&2; fail "the example did not start the head again"; }
await "grep -q 'job 1 reattached' '$work/hr.out'" 120 || { cat "$work/hr.out" >&2; fail "the submitter did not reattach"; }
await "sed -n '/job 1 reattached/,\$p' '$work/hr.out' | grep -q '\] eval '" 120 || { cat "$work/hr.out" >&2; fail "job $id did not train after the head came back"; }
[ "$(grep -c 'Waiting up to 300 s for it to come back' "$work/hr.out")" = 2 ] ||
  { cat "$work/hr.out" >&2; fail "the two nodes did not wait for the head"; }
scancel "$id"
await "[ -z \"\$(squeue -h -j $id 2> /dev/null)\" ]" 120 || fail "job $id still in the queue 120 s after scancel"
grep -q '"resumed_from": "' "$work/hr/results/summary.json" || { cat "$work/hr.out" >&2; fail "the job's summary does not say it went on from a checkpoint"; }
echo "test-slurm: the head of job $id, killed mid-job, came back in the same allocation; the job went on from its newest checkpoint"
echo "test-slurm: passed"
