#!/usr/bin/env bash
# Run a command inside the kokkos-attention Debian 13 build root.
#
#   scripts/in-root.sh CMD [ARGS...]     e.g. scripts/in-root.sh cmake --preset default
#   scripts/in-root.sh                   interactive shell
#
# * sets the root up first (scripts/buildroot-setup.sh; ~0.02 s when warm),
#   unless KOKKOSATTN_SKIP_SETUP=1
# * bind-mounts the repository at the SAME absolute path, so build trees and
#   compile_commands.json are valid both inside and outside; also binds the
#   host's /tmp, and the current directory if it is outside the repository
#   (extra paths: KOKKOSATTN_EXTRA_BINDS="/a:/b")
# * mounts /proc, /dev, /sys; binds the host CUDA toolkit at /usr/local/cuda
#   when the host has /usr/local/cuda
# * keeps the current directory, passes a whitelist of environment variables
#   (KOKKOSATTN_*, KOKKOS_*, OMP_*, CTEST_*, CI, TERM, HOME, ...), sets PATH
#   to include /usr/local/cuda/bin
# * exits with the command's exit code
#
# All mounts live in a private mount namespace (unshare), so they vanish when
# the command ends and concurrent invocations do not interfere.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
self="$here/$(basename "${BASH_SOURCE[0]}")"
repo=$(cd "$here/.." && pwd -P)
ROOT=${KOKKOSATTN_BUILDROOT:-/var/cache/kokkos-attention/buildroot}

die() { printf '[in-root] ERROR: %s\n' "$*" >&2; exit 125; }

if [[ ${1:-} != --inside-namespace ]]; then
  [[ $EUID == 0 ]] || die "needs root (chroot + mount); run as root"
  if [[ ${KOKKOSATTN_SKIP_SETUP:-0} != 1 ]]; then
    "$here/buildroot-setup.sh" --quiet || die "build root setup failed"
  fi
  [[ -x $ROOT/usr/bin/env ]] || die "no build root at $ROOT (run scripts/buildroot-setup.sh)"
  exec unshare --mount --propagation private -- "$self" --inside-namespace "$PWD" "$@"
fi
shift
cwd=$1
shift

mounted=()
cleanup() {
  # The namespace dies with us and takes its mounts along; this is belt and braces.
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -l "${mounted[i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT

bind() { # bind SRC DEST-INSIDE-ROOT (recursive bind mount)
  local src=$1 dst=$ROOT$2
  if [[ -d $src ]]; then mkdir -p "$dst"; else
    mkdir -p "$(dirname "$dst")"
    [[ -e $dst ]] || : >"$dst"
  fi
  mount --rbind "$src" "$dst"
  mounted+=("$dst")
}

mount -t proc proc "$ROOT/proc"
mounted+=("$ROOT/proc")
bind /dev /dev
bind /sys /sys
[[ -d /tmp ]] && bind /tmp /tmp
if [[ -d /usr/local/cuda ]]; then
  bind "$(readlink -f /usr/local/cuda)" /usr/local/cuda
fi
bind "$repo" "$repo"
# Third-party headers fetched on the host (scripts/fetch-cudnn-frontend.sh), same path inside.
deps=${KOKKOSATTN_DEPS_CACHE:-/var/cache/kokkos-attention/deps}
[[ -d $deps ]] && bind "$deps" "$deps"

# Paths that must never be bind-mounted over the root's own system folders.
is_system_path() {
  case "$1" in
    / | /usr | /usr/* | /etc | /etc/* | /bin* | /sbin* | /lib* | /var | /var/lib* | /var/cache* | \
      /proc* | /sys* | /dev* | /boot* | /run*) return 0 ;;
  esac
  return 1
}
inside_bound() { # is $1 at or below an already-bound path?
  local p
  for p in "$repo" /tmp "${extra[@]}"; do
    [[ -n $p && ($1 == "$p" || $1 == "$p"/*) ]] && return 0
  done
  return 1
}
extra=()
IFS=: read -r -a req <<<"${KOKKOSATTN_EXTRA_BINDS:-}"
for p in "${req[@]}"; do
  [[ -z $p ]] && continue
  p=$(cd "$p" && pwd -P) || die "KOKKOSATTN_EXTRA_BINDS: no such directory: $p"
  is_system_path "$p" && die "KOKKOSATTN_EXTRA_BINDS: refusing to bind system path $p"
  bind "$p" "$p"
  extra+=("$p")
done
cwd_real=$(cd "$cwd" && pwd -P)
if ! inside_bound "$cwd_real"; then
  if is_system_path "$cwd_real"; then
    [[ $cwd_real != / ]] && printf '[in-root] note: %s is a system folder; running in / inside the root\n' "$cwd" >&2
    cwd_real=/
  else
    bind "$cwd_real" "$cwd_real"
  fi
fi

# Environment: whitelist only.
envs=(
  "PATH=/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  "KOKKOSATTN_IN_ROOT=1"
  "LANG=C.UTF-8"
)
while IFS= read -r name; do
  case "$name" in
    KOKKOSATTN_IN_ROOT) ;;
    KOKKOSATTN_* | KOKKOS_* | OMP_* | CTEST_* | GTEST_* | DOCTEST_* | CUDA_VISIBLE_DEVICES | \
      NVIDIA_* | CI | TERM | HOME | USER | LOGNAME | COLUMNS | LINES | NO_COLOR | CLICOLOR* | \
      CMAKE_BUILD_PARALLEL_LEVEL | CMAKE_GENERATOR | VERBOSE | SOURCE_DATE_EPOCH | TZ)
      envs+=("$name=${!name}") ;;
  esac
done < <(compgen -e)

chroot "$ROOT" /usr/bin/env -i "${envs[@]}" /bin/sh -c 'cd "$1" && shift && exec "$@"' in-root \
  "$cwd_real" "${@:-/bin/bash}" && rc=0 || rc=$?
exit "$rc"
