# shellcheck shell=bash
# Sourced by the scripts that start processes on this machine (scripts/test-slurm.sh,
# scripts/chaos.sh): a free port, and a wait for an event with a hang's deadline.

# A TCP port no socket of this machine holds now.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 20000))
    grep -qi "$(printf ':%04X ' "$p")" /proc/net/tcp /proc/net/tcp6 2> /dev/null || { echo "$p"; return; }
  done
}

# Waits (up to $2 s: a hang's deadline) for the command $1 to succeed, looking every 0.2 s.
await() {
  local deadline=$((SECONDS + $2))
  until eval "$1"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
