#!/usr/bin/env bash
# Create (or confirm) the Debian 13 "trixie" build root that kokkos-attention
# builds and tests in.
#
#   scripts/buildroot-setup.sh            # set up if missing or out of date
#   scripts/buildroot-setup.sh --force    # rebuild unconditionally
#   scripts/buildroot-setup.sh --quiet    # say nothing when up to date
#   scripts/buildroot-setup.sh --print-root
#
# Why: Debian 12's Kokkos is unusable; Kokkos 5.2 exists only as Debian sid
# binaries that need glibc >= 2.38, so we build inside a trixie root.
#
# The root lives OUTSIDE the repository, at
#   ${KOKKOSATTN_BUILDROOT:-/var/cache/kokkos-attention/buildroot}
# and carries a stamp holding a hash of scripts/buildroot/packages.txt and of
# this script; it is rebuilt only when that hash changes. A new root is built
# in a temporary sibling directory and renamed into place at the end, so an
# interrupted setup never looks like a good one.
#
# Needs root (mmdebstrap in root mode, chroot). Reaches only the Debian
# archive (trixie for the root, sid for the two Kokkos packages).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
pkglist="$here/buildroot/packages.txt"

ROOT=${KOKKOSATTN_BUILDROOT:-/var/cache/kokkos-attention/buildroot}
MIRROR=${KOKKOSATTN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
# Kokkos from sid. The runtime package name pins the 5.2 ABI.
KOKKOS_PACKAGES=(libkokkos5.2 libkokkos-dev)
KOKKOS_VERSION_PREFIX=5.2.
STAMP_NAME=.kokkosattn-buildroot-stamp

log() { printf '[buildroot] %s\n' "$*" >&2; }
die() { printf '[buildroot] ERROR: %s\n' "$*" >&2; exit 1; }

force=0 quiet=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --quiet) quiet=1 ;; # no message when already up to date
    --print-root) echo "$ROOT"; exit 0 ;;
    -h|--help) sed -n '2,21p' "$self"; exit 0 ;;
    *) die "unknown argument: $arg" ;;
  esac
done

[[ -f $pkglist ]] || die "package list not found: $pkglist"
want_hash=$(cat "$pkglist" "$self" | sha256sum | cut -d' ' -f1)

stamp_ok() {
  [[ -f "$ROOT/$STAMP_NAME" ]] &&
    [[ "$(sed -n 's/^hash=//p' "$ROOT/$STAMP_NAME")" == "$want_hash" ]] &&
    [[ -x "$ROOT/usr/bin/cmake" ]]
}

# ---- warm path: nothing to do ------------------------------------------------
if [[ $force == 0 ]] && stamp_ok; then
  [[ $quiet == 1 ]] || log "build root up to date: $ROOT ($(sed -n 's/^kokkos=//p' "$ROOT/$STAMP_NAME"))"
  exit 0
fi

# ---- cold path ---------------------------------------------------------------
[[ $EUID == 0 ]] || die "setting up the build root needs root (mmdebstrap, chroot); run as root"

parent=$(dirname "$ROOT")
mkdir -p "$parent"

# One setup at a time per root; others wait, then find it up to date.
exec 9>"$ROOT.lock"
if ! flock -n 9; then
  log "another setup of $ROOT is running; waiting for it..."
  flock 9
fi
if [[ $force == 0 ]] && stamp_ok; then
  log "build root up to date: $ROOT (set up by a concurrent run)"
  exit 0
fi

# Remove leftovers of earlier runs: temp dirs of runs killed hard (we hold the
# lock, so none is in progress) and previous roots no process uses any more.
in_use() { # is any process chrooted into (or working in) directory $1?
  local l
  for l in /proc/[0-9]*/root /proc/[0-9]*/cwd; do
    case "$(readlink "$l" 2>/dev/null)" in "$1" | "$1"/*) return 0 ;; esac
  done
  return 1
}
for d in "$parent"/.buildroot-work.* "$parent"/.buildroot-new.* "$parent"/.buildroot-old.*; do
  [[ -d $d ]] || continue
  if in_use "$d"; then log "keeping $d for now (still in use)"; continue; fi
  rm -rf --one-file-system "$d"
done

t_start=$SECONDS
if [[ -e $ROOT ]]; then
  log "build root at $ROOT is out of date (package list or setup script changed); rebuilding"
else
  log "no build root at $ROOT yet; creating it (first time only, a few minutes)"
fi

if ! command -v mmdebstrap >/dev/null; then
  command -v apt-get >/dev/null || die "mmdebstrap is missing and apt-get is unavailable; install mmdebstrap"
  log "installing mmdebstrap on the host (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    mmdebstrap debian-archive-keyring >/dev/null
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -f $keyring ]] || die "$keyring missing; apt-get install debian-archive-keyring"

work=$(mktemp -d "$parent/.buildroot-work.XXXXXX")
newroot=$(mktemp -d "$parent/.buildroot-new.XXXXXX")
cleanup() {
  local rc=$?
  # newroot is only still here if we failed before the final rename.
  [[ -n ${newroot:-} && -d $newroot ]] && rm -rf --one-file-system "$newroot"
  [[ -n ${work:-} && -d $work ]] && rm -rf --one-file-system "$work"
  if [[ $rc != 0 ]]; then log "setup FAILED (exit $rc); nothing was left at $ROOT that looks valid"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. Fetch the Kokkos .debs from sid with a private apt configuration (the
#    host's sources and package state are not touched).
log "step 1/4: fetching ${KOKKOS_PACKAGES[*]} from Debian sid"
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
cat >"$work/sid.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: sid
Components: main
Signed-By: $keyring
EOF
apt_sid=(-o "Dir::Etc::sourcelist=$work/sid.sources" -o "Dir::Etc::sourceparts=-"
  -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
  -o "Dir::State::status=/dev/null" -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
apt-get "${apt_sid[@]}" -qq update
for p in "${KOKKOS_PACKAGES[@]}"; do
  v=$(apt-cache "${apt_sid[@]}" policy "$p" | sed -n 's/^ *Candidate: //p')
  [[ -n $v && $v != "(none)" ]] || die "package $p not found in sid (Kokkos 5.2 may have moved on; update KOKKOS_PACKAGES)"
  [[ $v == "$KOKKOS_VERSION_PREFIX"* ]] || die "sid has $p $v, expected $KOKKOS_VERSION_PREFIX*"
done
(cd "$work/debs" && apt-get "${apt_sid[@]}" -qq download "${KOKKOS_PACKAGES[@]}")
kokkos_version=$(dpkg-deb -f "$work"/debs/libkokkos-dev_*.deb Version)
log "  got Kokkos $kokkos_version: $(cd "$work/debs" && echo *.deb)"

# 2. Script run inside the new root: install the Kokkos debs (deps from
#    trixie) and repair Kokkos' broken CMake export.
cat >"$work/kokkos-install.sh" <<'EOF'
#!/bin/sh
set -eu
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends /tmp/kokkos-debs/*.deb
# KokkosTargets-*.cmake references static archives no package ships
# (libkokkosalgorithms.a, libkokkossimd.a); find_package(Kokkos) fails on
# them. Create empty archives for every referenced-but-missing file.
cfgdir=$(dirname "$(ls /usr/lib/*/cmake/Kokkos/KokkosConfig.cmake | head -n1)")
prefix=$(cd "$cfgdir/../../../.." && pwd)
for f in $(sed -n 's/.*"\${_IMPORT_PREFIX}\([^"]*\.a\)".*/\1/p' "$cfgdir"/KokkosTargets-*.cmake | sort -u); do
  if [ ! -e "$prefix$f" ]; then
    echo "  repairing Kokkos export: creating empty $prefix$f"
    ar rcs "$prefix$f"
  fi
done
rm -rf /tmp/kokkos-debs
# Smoke test: find_package(Kokkos) must configure.
d=$(mktemp -d)
mkdir "$d/src"
cat >"$d/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(kokkos_probe LANGUAGES CXX)
find_package(Kokkos 5 REQUIRED)
message(STATUS "KOKKOS_PROBE version=${Kokkos_VERSION} devices=${Kokkos_DEVICES} dir=${Kokkos_DIR}")
CM
cmake -S "$d/src" -B "$d/build" -G Ninja >"$d/log" 2>&1 || { cat "$d/log"; exit 1; }
grep KOKKOS_PROBE "$d/log" | sed 's/^-- KOKKOS_PROBE/  find_package(Kokkos) OK:/'
rm -rf "$d"
EOF

# 3. Build the root.
pkgs=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$pkglist" | grep -v '^$' | paste -sd, -)
log "step 2/4: creating Debian $SUITE root with mmdebstrap (packages: $pkgs)"
mmdebstrap --variant=apt --include="$pkgs" \
  --customize-hook="mkdir -p \"\$1/tmp/kokkos-debs\" \"\$1/usr/local/cuda\"" \
  --customize-hook="cp $work/debs/*.deb \"\$1/tmp/kokkos-debs/\"" \
  --customize-hook="cp $work/kokkos-install.sh \"\$1/tmp/kokkos-install.sh\"" \
  --customize-hook='echo "[buildroot] step 3/4: installing Kokkos into the root" >&2' \
  --customize-hook='chroot "$1" sh /tmp/kokkos-install.sh' \
  --customize-hook='rm -f "$1/tmp/kokkos-install.sh"' \
  "$SUITE" "$newroot" "$MIRROR"

# 4. Stamp and move into place.
log "step 4/4: finalising"
gxx=$(chroot "$newroot" g++ -dumpfullversion)
cmv=$(chroot "$newroot" cmake --version | sed -n '1s/cmake version //p')
{
  echo "hash=$want_hash"
  echo "kokkos=Kokkos $kokkos_version (Debian sid)"
  echo "suite=$SUITE"
  echo "gxx=$gxx"
  echo "cmake=$cmv"
  echo "created=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$newroot/$STAMP_NAME"
chmod 755 "$newroot"
if [[ -e $ROOT ]]; then
  old=$(mktemp -d "$parent/.buildroot-old.XXXXXX")
  mv -T "$ROOT" "$old/root"
  mv -T "$newroot" "$ROOT"
  newroot=
  # Commands still running in the old root (other shells, parallel builds)
  # keep it alive; then a later setup removes it.
  if in_use "$old"; then
    log "previous root is still in use; it will be removed by a later setup ($old)"
  else
    log "removing previous root"
    rm -rf --one-file-system "$old"
  fi
else
  mv -T "$newroot" "$ROOT"
  newroot=
fi
log "build root ready at $ROOT in $((SECONDS - t_start)) s: Kokkos $kokkos_version, g++ $gxx, cmake $cmv"
