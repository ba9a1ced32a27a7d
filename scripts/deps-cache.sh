# Sourced by the dependency scripts (fetch-cudnn-frontend.sh, fetch-sass-tools.sh): where
# fetched dependencies are cached, outside the repository. KOKKOSATTN_DEPS_CACHE (default
# /var/cache/kokkos-attention/deps, which the build root sees too), else, when that is not
# writable, ~/.cache/kokkos-attention/deps. An entry is complete once it holds `.complete`.

deps_caches() {
  printf '%s\n' "${KOKKOSATTN_DEPS_CACHE:-/var/cache/kokkos-attention/deps}" \
    "${HOME:-/tmp}/.cache/kokkos-attention/deps"
}

# deps_find ENTRY: prints the first cache's ENTRY that is complete; status 1 if none is.
deps_find() {
  local c
  while read -r c; do
    if [[ -f $c/$1/.complete ]]; then
      printf '%s\n' "$c/$1"
      return 0
    fi
  done < <(deps_caches)
  return 1
}

# deps_writable_cache: prints the first cache that exists (or can be made) and is writable.
deps_writable_cache() {
  local c
  while read -r c; do
    if mkdir -p "$c" 2>/dev/null && [[ -w $c ]]; then
      printf '%s\n' "$c"
      return 0
    fi
  done < <(deps_caches)
  return 1
}

# deps_check_configured BUILD_DIR KOKKOS_ROOT [CACHE_ENTRY=VALUE...]: fails unless BUILD_DIR's
# CMake cache found Kokkos under KOKKOS_ROOT and holds each CACHE_ENTRY=VALUE. A tree configured
# earlier keeps its cached Kokkos_DIR whatever Kokkos_ROOT says now (seen: a "cuda" tree holding
# the host's Kokkos built without a line of CUDA and reported OK).
deps_check_configured() {
  local build=$1 root=$2 cache=$1/CMakeCache.txt want got
  shift 2
  got=$(sed -n 's/^Kokkos_DIR:[A-Z]*=//p' "$cache")
  [[ $got == "$root"/* ]] || {
    printf 'ERROR: %s found Kokkos at %s, not under %s (delete the tree or its CMakeCache.txt)\n' \
      "$build" "${got:-nothing}" "$root" >&2
    return 1
  }
  for want in "$@"; do
    got=$(sed -n "s/^${want%%=*}:[A-Z]*=//p" "$cache")
    [[ $got == "${want#*=}" ]] || {
      printf 'ERROR: %s has %s=%s, expected %s\n' "$build" "${want%%=*}" "${got:-unset}" \
        "${want#*=}" >&2
      return 1
    }
  done
}

# deps_claim ENTRY PRINT_ONLY: the start of a cached build, from a script's top level (it may
# exit the script). ENTRY cached (also once another caller building it finishes): prints its
# prefix, exits 0. Not cached and PRINT_ONLY 1: exits 1. Else holds ENTRY's lock in the
# writable cache and sets deps_prefix (where ENTRY installs; removed on exit unless it holds
# .complete) and deps_work (a fresh scratch directory beside it, removed on exit unless
# KOKKOSATTN_KEEP_WORK=1, to read a failed build's logs).
deps_claim() {
  local entry=$1 print_only=$2 cache found
  if found=$(deps_find "$entry"); then
    printf '[deps] cached: %s\n' "$found" >&2
    printf '%s\n' "$found"
    exit 0
  fi
  [[ $print_only == 0 ]] || exit 1
  cache=$(deps_writable_cache) || { printf '[deps] ERROR: no writable cache\n' >&2; exit 1; }
  exec 9>"$cache/$entry.lock" # one build per entry at a time
  flock 9
  if found=$(deps_find "$entry"); then
    printf '%s\n' "$found"
    exit 0
  fi
  deps_work=$(mktemp -d "$cache/.$entry.XXXXXX")
  deps_prefix=$cache/$entry
  trap deps_release EXIT
}

deps_release() {
  [[ ${KOKKOSATTN_KEEP_WORK:-0} == 1 ]] || rm -rf --one-file-system "$deps_work"
  [[ -f $deps_prefix/.complete ]] || rm -rf --one-file-system "$deps_prefix"
}
