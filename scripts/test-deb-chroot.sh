#!/usr/bin/env bash
# scripts/test-deb-chroot.sh DEB [ROOT]: installs DEB with apt into a bare Debian root (debootstrap
# --variant=minbase bookworm: nothing of syncpoint's dependencies in it) and runs the installed
# command there: `syncpoint --version` and a short virtual-clock training on generated data.
# Not part of the test command: it downloads ~300 MB and takes minutes. Needs root (chroot,
# mounts) and debootstrap (apt-get install debootstrap). ROOT defaults to a fresh temporary folder,
# removed at the end; /proc is mounted into it for the run and unmounted on exit.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1" ]; then
  echo "usage: scripts/test-deb-chroot.sh DEB [ROOT]   (DEB: a syncpoint_*.deb made by cpack)" >&2
  exit 2
fi
[ "$(id -u)" -eq 0 ] || { echo "test-deb-chroot: needs root (chroot)" >&2; exit 2; }
command -v debootstrap > /dev/null || { echo "test-deb-chroot: needs debootstrap (apt-get install debootstrap)" >&2; exit 2; }
DEB=$(realpath "$1")
KEEP=${2:-}
ROOT=${2:-$(mktemp -d /tmp/syncpoint-chroot.XXXXXX)}
cleanup() {
  umount -R "$ROOT/proc" 2> /dev/null || true
  if [ -z "$KEEP" ]; then
    rm -rf --one-file-system "$ROOT" "$ROOT.debootstrap.log" "$ROOT.install.log"
  fi
}
trap cleanup EXIT
t0=$(date +%s)
debootstrap --variant=minbase bookworm "$ROOT" http://deb.debian.org/debian > "$ROOT.debootstrap.log" 2>&1 ||
  { tail -20 "$ROOT.debootstrap.log" >&2; echo "test-deb-chroot: debootstrap failed" >&2; exit 1; }
t1=$(date +%s)
mount -t proc proc "$ROOT/proc"
cp "$DEB" "$ROOT/tmp/"
echo "test-deb-chroot: a bare root in $((t1 - t0)) s, $(chroot "$ROOT" dpkg-query -W | wc -l) packages; installing $(basename "$DEB")"
chroot "$ROOT" apt-get update -qq
chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "/tmp/$(basename "$DEB")" > "$ROOT.install.log" 2>&1 ||
  { tail -30 "$ROOT.install.log" >&2; echo "test-deb-chroot: apt-get install failed" >&2; exit 1; }
t2=$(date +%s)
echo "test-deb-chroot: installed in $((t2 - t1)) s: $(chroot "$ROOT" dpkg-query -W | wc -l) packages, $(du -sh --exclude=proc "$ROOT" | cut -f1)"
chroot "$ROOT" syncpoint --version
chroot "$ROOT" sh -c 'cd /tmp && syncpoint train --protocol ssp --workers 2 --model softmax --dataset synthetic \
  --train-limit 2000 --test-limit 500 --epochs 1 --iter-cost 5 --progress=false --out /tmp/run' | tail -3
chroot "$ROOT" test -s /tmp/run/summary.json
echo "test-deb-chroot: the installed command trained in the bare root ($(( $(date +%s) - t0 )) s in all)"
