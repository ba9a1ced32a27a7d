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
