/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Large buffers shared by reference, and the pool they return to. */
#include "sky-runner.h"

#include <pthread.h>
#include <stdlib.h>

/* Enough for the mask and labels of two runs of one size: a run being
 * shown and the one replacing it. */
#define POOL_MAX 4

struct SkyBuffer {
  int refs;                  /* atomic */
  size_t size;
  void *data;
  int pooled;                /* returns to the pool, else is freed */
  SkyBuffer *next;           /* in the pool */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static SkyBuffer *pool;
static int pool_count;

static SkyBuffer *
pool_take (size_t size)
{
  SkyBuffer *b = NULL;

  pthread_mutex_lock (&pool_lock);
  for (SkyBuffer **p = &pool; *p; p = &(*p)->next)
    if ((*p)->size == size)
      {
        b = *p;
        *p = b->next;
        pool_count--;
        break;
      }
  pthread_mutex_unlock (&pool_lock);
  return b;
}

static void
pool_give (SkyBuffer *b)
{
  pthread_mutex_lock (&pool_lock);
  if (b->pooled && pool_count < POOL_MAX)
    {
      b->next = pool;
      pool = b;
      pool_count++;
      b = NULL;
    }
  pthread_mutex_unlock (&pool_lock);
  if (b)
    {
      free (b->data);
      free (b);
    }
}

SkyBuffer *
sky_buffer_adopt (void *data, size_t size)
{
  SkyBuffer *b = data ? calloc (1, sizeof *b) : NULL;

  if (b == NULL)
    {
      free (data);
      return NULL;
    }
  b->data = data;
  b->size = size;
  b->refs = 1;
  return b;
}

SkyBuffer *
sky_buffer_new (size_t size)
{
  SkyBuffer *b = pool_take (size);

  if (b != NULL)
    {
      b->next = NULL;
      b->refs = 1;
      return b;
    }
  b = sky_buffer_adopt (sky_alloc_large (size), size);
  if (b != NULL)
    b->pooled = 1;
  return b;
}

SkyBuffer *
sky_buffer_ref (SkyBuffer *buf)
{
  __atomic_add_fetch (&buf->refs, 1, __ATOMIC_RELAXED);
  return buf;
}

void
sky_buffer_unref (SkyBuffer *buf)
{
  if (buf != NULL && __atomic_sub_fetch (&buf->refs, 1, __ATOMIC_ACQ_REL) == 0)
    pool_give (buf);
}

void *
sky_buffer_data (const SkyBuffer *buf)
{
  return buf ? buf->data : NULL;
}
