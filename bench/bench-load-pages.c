/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The floor under every load into new memory: what the kernel's page
 * faults and zeroing cost for an image of MB megabytes, written once across
 * the threads, with the pages obtained in the ways a loader could:
 *
 *   4 KiB pages          plain anonymous memory (MADV_NOHUGEPAGE)
 *   huge pages           sky_alloc_large: 2 MiB aligned, MADV_HUGEPAGE (the loader's)
 *   4 KiB, populated     each thread asks MADV_POPULATE_WRITE for its range first
 *   huge, populated      the same on sky_alloc_large's memory
 *   MAP_POPULATE         the kernel fills the mapping in the mmap call (one thread)
 *   pages already there  the same writes again: the memory's own speed
 *
 * Prints the machine's transparent huge page settings, then per way the
 * median time in ms over ROUNDS rounds and how much of the memory the
 * kernel gave as huge pages (AnonHugePages). Build as bench-load.c:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -Isrc/core bench/bench-load-pages.c \
 *      build/src/core/libsky-core.a $(pkg-config --libs cfitsio wcslib) -lpthread -lm
 *   ./a.out MB ROUNDS
 */
#include "sky-core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define HUGE_PAGE ((size_t) 2 << 20)

enum { PAGES_4K, PAGES_HUGE, PAGES_4K_POPULATED, PAGES_HUGE_POPULATED, PAGES_MAP_POPULATE,
       PAGES_THERE, NWAYS };

static const char *way_names[NWAYS] = {
  "4 KiB pages", "huge pages (the loader's)", "4 KiB, MADV_POPULATE_WRITE per thread",
  "huge, MADV_POPULATE_WRITE per thread", "MAP_POPULATE", "pages already there",
};

typedef struct {
  unsigned char *bytes;
  size_t size;
  int ntasks, populate;
} Touch;

static void
touch_task (void *data, int task)
{
  Touch *t = data;
  /* Ranges on huge-page edges, so that no two threads fault one page. */
  size_t per = (t->size / (size_t) t->ntasks + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  size_t start = per * (size_t) task, end = start + per < t->size ? start + per : t->size;

  if (start >= end)
    return;
  if (t->populate)
    madvise (t->bytes + start, end - start, MADV_POPULATE_WRITE);
  memset (t->bytes + start, 1, end - start);
}

static long
anon_huge_kb (void)
{
  FILE *f = fopen ("/proc/self/smaps_rollup", "r");
  char line[256];
  long kb = -1;

  while (f != NULL && fgets (line, sizeof line, f) != NULL)
    if (strncmp (line, "AnonHugePages:", 14) == 0)
      kb = atol (line + 14);
  if (f != NULL)
    fclose (f);
  return kb;
}

/* One round of one way: ms; *huge_mb, the huge pages it got. */
static double
timed_way (int way, size_t size, unsigned char *there, long *huge_mb)
{
  Touch t = { NULL, size, sky_default_threads (), 0 };
  size_t mapped = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
  int from_mmap = way == PAGES_4K || way == PAGES_4K_POPULATED || way == PAGES_MAP_POPULATE;
  double t0 = sky_now_ms ();

  if (way == PAGES_THERE)
    t.bytes = there;
  else if (from_mmap)
    {
      t.bytes = mmap (NULL, mapped, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | (way == PAGES_MAP_POPULATE ? MAP_POPULATE : 0),
                      -1, 0);
      if (t.bytes == MAP_FAILED)
        exit (1);
      if (way != PAGES_MAP_POPULATE)
        madvise (t.bytes, mapped, MADV_NOHUGEPAGE);
    }
  else if ((t.bytes = sky_alloc_large (size)) == NULL)
    exit (1);
  t.populate = way == PAGES_4K_POPULATED || way == PAGES_HUGE_POPULATED;
  sky_parallel_for (t.ntasks, t.ntasks, touch_task, &t);
  t0 = sky_now_ms () - t0;
  *huge_mb = anon_huge_kb () / 1024;
  if (way == PAGES_THERE)
    *huge_mb = -1;
  else if (from_mmap)
    munmap (t.bytes, mapped);
  else
    free (t.bytes);
  return t0;
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static void
print_setting (const char *path)
{
  char line[256] = "unknown";
  FILE *f = fopen (path, "r");

  if (f != NULL && fgets (line, sizeof line, f) == NULL)
    strcpy (line, "unknown");
  if (f != NULL)
    fclose (f);
  line[strcspn (line, "\n")] = '\0';
  printf ("%s: %s\n", path, line);
}

int
main (int argc, char **argv)
{
  size_t size = argc == 3 ? (size_t) atol (argv[1]) << 20 : 0;
  int rounds = argc == 3 ? atoi (argv[2]) : 0;
  double *t;
  unsigned char *there;

  if (size == 0 || rounds < 1)
    {
      fprintf (stderr, "usage: bench-load-pages MB ROUNDS\n");
      return 2;
    }
  print_setting ("/sys/kernel/mm/transparent_hugepage/enabled");
  print_setting ("/sys/kernel/mm/transparent_hugepage/defrag");
  printf ("threads: %d; %zu MiB; median of %d rounds, the ways in turn\n\n",
          sky_default_threads (), size >> 20, rounds);
  t = calloc ((size_t) (rounds * NWAYS), sizeof *t);
  there = sky_alloc_large (size);
  if (t == NULL || there == NULL)
    return 1;
  memset (there, 0, size);
  {
    long huge[NWAYS] = { 0 };
    for (int r = 0; r < rounds; r++)
      for (int w = 0; w < NWAYS; w++)
        t[w * rounds + r] = timed_way (w, size, there, &huge[w]);
    printf ("| pages | ms | GB/s | huge pages (MiB) |\n| --- | --- | --- | --- |\n");
    for (int w = 0; w < NWAYS; w++)
      {
        double *v = t + w * rounds, med;
        qsort (v, (size_t) rounds, sizeof *v, compare_doubles);
        med = rounds % 2 ? v[rounds / 2] : 0.5 * (v[rounds / 2 - 1] + v[rounds / 2]);
        /* AnonHugePages counts every huge page of the process: the image's
         * own less those of the buffer held for the last way. */
        printf ("| %s | %.1f | %.2f | %ld |\n", way_names[w], med, (double) size / 1e6 / med,
                w == PAGES_THERE ? 0 : huge[w] - (long) (anon_huge_kb () / 1024));
      }
  }
  free (there);
  free (t);
  return 0;
}
