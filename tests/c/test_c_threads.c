/* kattn_last_error() is per thread: two threads fail and succeed in turn (a barrier orders the
 * steps), and each still reads its own message, unchanged by the other's calls. Host memory,
 * one problem per thread (a problem handle is not shared between threads). */
#define _POSIX_C_SOURCE 200809L
#include "kokkosattn.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { B = 1, T = 4, N = 2, H = 8 };
#define QN (B * T * N * H)

static pthread_barrier_t step;
static int failures = 0;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void check(int ok, const char* what, int thread) {
  if (!ok) {
    fprintf(stderr, "test_c_threads: thread %d: %s (last error: %s)\n", thread, what,
            kattn_last_error());
    pthread_mutex_lock(&failures_lock);
    ++failures;
    pthread_mutex_unlock(&failures_lock);
  }
}

/* Thread 0 fails with a bad dtype, thread 1 with a bad role; then thread 1 succeeds (clearing
 * its own message) while thread 0's stays; then thread 0 succeeds too. */
static void* run(void* arg) {
  const int me = *(const int*)arg;
  static float q[2][QN], k[2][QN], v[2][QN], o[2][QN];
  const int64_t e[4] = {B, T, N, H};
  kattn_problem_t p = NULL;
  check(kattn_problem_create(&p) == KATTN_OK, "create", me);
  kattn_status_t s = kattn_problem_set_tensor(p, me == 0 ? KATTN_Q : (kattn_role_t)42, q[me],
                                              me == 0 ? (kattn_dtype_t)99 : KATTN_F32, 4, e, NULL,
                                              KATTN_MEMORY_HOST);
  check(s == KATTN_ERROR_INVALID_ARGUMENT, "bad call refused", me);
  const char* mine = me == 0 ? "dtype" : "role";
  pthread_barrier_wait(&step); /* both have failed */
  check(strstr(kattn_last_error(), mine) != NULL, "own message after both failed", me);
  if (me == 1) {
    check(kattn_problem_set_tensor(p, KATTN_Q, q[me], KATTN_F32, 4, e, NULL, KATTN_MEMORY_HOST) ==
              KATTN_OK,
          "good call", me);
    check(kattn_last_error()[0] == '\0', "cleared by own success", me);
  }
  pthread_barrier_wait(&step); /* thread 1 has succeeded */
  if (me == 0) {
    check(strstr(kattn_last_error(), "dtype") != NULL, "kept while the other succeeded", me);
    check(kattn_problem_set_tensor(p, KATTN_Q, q[me], KATTN_F32, 4, e, NULL, KATTN_MEMORY_HOST) ==
              KATTN_OK,
          "good call", me);
  }
  check(kattn_problem_set_tensor(p, KATTN_K, k[me], KATTN_F32, 4, e, NULL, KATTN_MEMORY_HOST) ==
            KATTN_OK,
        "k", me);
  check(kattn_problem_set_tensor(p, KATTN_V, v[me], KATTN_F32, 4, e, NULL, KATTN_MEMORY_HOST) ==
            KATTN_OK,
        "v", me);
  check(kattn_problem_set_tensor(p, KATTN_OUT, o[me], KATTN_F32, 4, e, NULL, KATTN_MEMORY_HOST) ==
            KATTN_OK,
        "out", me);
  /* Both run at once on their own problems, on the plain C++ reference (a Kokkos execution
   * space instance is not meant to be driven from two host threads at once). */
  check(kattn_problem_set_backend(p, KATTN_BACKEND_REFERENCE) == KATTN_OK, "backend", me);
  pthread_barrier_wait(&step);
  check(kattn_forward(p, NULL) == KATTN_OK, "forward", me);
  check(kattn_last_error()[0] == '\0', "no error after forward", me);
  check(kattn_problem_destroy(p) == KATTN_OK, "destroy", me);
  return NULL;
}

int main(void) {
  pthread_t threads[2];
  int ids[2] = {0, 1};
  if (kattn_initialize() != KATTN_OK) {
    fprintf(stderr, "test_c_threads: kattn_initialize: %s\n", kattn_last_error());
    return 1;
  }
  pthread_barrier_init(&step, NULL, 2);
  for (int i = 0; i < 2; ++i)
    if (pthread_create(&threads[i], NULL, run, &ids[i]) != 0) {
      fprintf(stderr, "test_c_threads: pthread_create failed\n");
      return 1;
    }
  for (int i = 0; i < 2; ++i)
    pthread_join(threads[i], NULL);
  pthread_barrier_destroy(&step);
  kattn_finalize();
  if (failures)
    fprintf(stderr, "test_c_threads: %d failure(s)\n", failures);
  else
    printf("test_c_threads: all checks passed\n");
  return failures ? 1 : 0;
}
