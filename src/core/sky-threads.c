/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A minimal fork-join helper: the stages split their work into row bands and
 * run them on plain POSIX threads. Threads are started per call; at tens of
 * microseconds that is far below the cost of any stage worth splitting. */
#include "sky-core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#define SKY_MAX_THREADS 256

typedef struct {
  void (*fn) (void *ctx, int task);
  void *ctx;
  int ntasks;
  atomic_int next;
} ForkJoin;

static void *
worker (void *data)
{
  ForkJoin *fj = data;

  for (;;)
    {
      int task = atomic_fetch_add (&fj->next, 1);
      if (task >= fj->ntasks)
        break;
      fj->fn (fj->ctx, task);
    }
  return NULL;
}

int
sky_default_threads (void)
{
  const char *env = getenv ("SKYSIFT_THREADS");
  long n = 0;

  if (env != NULL && *env != '\0')
    n = strtol (env, NULL, 10);
  if (n <= 0)
    n = sysconf (_SC_NPROCESSORS_ONLN);
  if (n <= 0)
    n = 1;
  return n > SKY_MAX_THREADS ? SKY_MAX_THREADS : (int) n;
}

void
sky_parallel_for (int ntasks, int nthreads, void (*fn) (void *ctx, int task), void *ctx)
{
  pthread_t threads[SKY_MAX_THREADS];
  ForkJoin fj = { fn, ctx, ntasks, 0 };
  int started = 0;

  if (ntasks <= 0)
    return;
  if (nthreads <= 0)
    nthreads = sky_default_threads ();
  if (nthreads > SKY_MAX_THREADS)
    nthreads = SKY_MAX_THREADS;
  if (nthreads > ntasks)
    nthreads = ntasks;

  /* A thread that cannot be started only means fewer workers: the caller's
   * thread runs whatever is left. */
  for (int i = 1; i < nthreads; i++)
    if (pthread_create (&threads[started], NULL, worker, &fj) == 0)
      started++;
  worker (&fj);
  for (int i = 0; i < started; i++)
    pthread_join (threads[i], NULL);
}
