/* The C tests' check: counts a failure and prints the condition with the C API's last error,
 * then goes on (each test returns non-zero when `failures` is). */
#ifndef KOKKOSATTN_TESTS_C_CHECK_H
#define KOKKOSATTN_TESTS_C_CHECK_H

#include <stdio.h>

#include "kokkosattn.h"

static int failures = 0;
#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond,      \
              kattn_last_error());                                                                 \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

#endif
