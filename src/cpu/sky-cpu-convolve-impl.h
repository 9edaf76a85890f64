/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The convolution loops for one element type, included by
 * sky-cpu-convolve.c once with T = float and once with T = double. Every
 * inner loop is an axpy over a contiguous row (out[j] += w * in[j - l]),
 * which the compiler vectorises; output rows are cut into blocks, one task
 * each. */

#define FN(name) SKY_CONCAT (name, SUFFIX)
#define SKY_CONCAT(a, b) SKY_CONCAT_ (a, b)
#define SKY_CONCAT_(a, b) a##_##b

typedef struct {
  const T *in;
  int64_t nx, ny;
  const T *kernel;     /* ky x kx, direct path */
  const T *row, *col;  /* kx and ky factors, separable path */
  int kx, ky;
  T *out;
  int64_t out_nx, out_ny, x0, y0; /* output window in full coordinates */
  int64_t rows_per_task;
  int failed;
} FN (Conv2d);

/* out[j] += w * in_row[j + x0 - l] for the j whose input column exists. */
static inline void
FN (axpy_row) (T *restrict out, const T *restrict in_row, int64_t nx, int64_t out_nx,
               int64_t x0, int l, T w)
{
  int64_t j0 = l - x0, j1 = l - x0 + nx;
  const T *restrict src;

  if (j0 < 0)
    j0 = 0;
  if (j1 > out_nx)
    j1 = out_nx;
  src = in_row + x0 - l;
  for (int64_t j = j0; j < j1; j++)
    out[j] += w * src[j];
}

SKY_VECTOR_CLONES static void
FN (direct_task) (void *ctx, int task)
{
  FN (Conv2d) *c = ctx;
  int64_t i0 = task * c->rows_per_task, i1 = i0 + c->rows_per_task;

  if (i1 > c->out_ny)
    i1 = c->out_ny;
  for (int64_t i = i0; i < i1; i++)
    {
      T *out = c->out + i * c->out_nx;
      memset (out, 0, (size_t) c->out_nx * sizeof *out);
      for (int k = 0; k < c->ky; k++)
        {
          int64_t ii = c->y0 + i - k;
          if (ii < 0 || ii >= c->ny)
            continue;
          for (int l = 0; l < c->kx; l++)
            FN (axpy_row) (out, c->in + ii * c->nx, c->nx, c->out_nx, c->x0, l,
                           c->kernel[k * c->kx + l]);
        }
    }
}

/* Rows first, then columns: kx + ky operations per pixel instead of
 * kx * ky. The row-convolved input rows live in a ring of ky rows, so each
 * is computed once per task and the columns read them while in cache. */
SKY_VECTOR_CLONES static void
FN (separable_task) (void *ctx, int task)
{
  FN (Conv2d) *c = ctx;
  int64_t i0 = task * c->rows_per_task, i1 = i0 + c->rows_per_task, next_in;
  T *ring;

  if (i1 > c->out_ny)
    i1 = c->out_ny;
  ring = malloc ((size_t) c->ky * (size_t) c->out_nx * sizeof *ring);
  if (ring == NULL)
    {
      c->failed = 1;
      return;
    }
  next_in = c->y0 + i0 - (c->ky - 1);
  if (next_in < 0)
    next_in = 0;
  for (int64_t i = i0; i < i1; i++)
    {
      T *restrict out = c->out + i * c->out_nx;
      int64_t last_in = c->y0 + i < c->ny - 1 ? c->y0 + i : c->ny - 1;

      for (; next_in <= last_in; next_in++)
        {
          T *dst = ring + (next_in % c->ky) * c->out_nx;
          memset (dst, 0, (size_t) c->out_nx * sizeof *dst);
          for (int l = 0; l < c->kx; l++)
            FN (axpy_row) (dst, c->in + next_in * c->nx, c->nx, c->out_nx, c->x0, l, c->row[l]);
        }
      memset (out, 0, (size_t) c->out_nx * sizeof *out);
      for (int k = 0; k < c->ky; k++)
        {
          int64_t ii = c->y0 + i - k;
          const T *restrict src;
          T w = c->col[k];
          if (ii < 0 || ii >= c->ny)
            continue;
          src = ring + (ii % c->ky) * c->out_nx;
          for (int64_t j = 0; j < c->out_nx; j++)
            out[j] += w * src[j];
        }
    }
  free (ring);
}

static int
FN (convolve2d) (const T *in, int64_t nx, int64_t ny, const SkyKernel *kernel,
                 SkyConvolveMode mode, SkyConvolvePath path, int nthreads, T *out,
                 SkyConvolvePath *used)
{
  FN (Conv2d) c = { 0 };
  int64_t out_nx, out_ny, x0, y0, ntasks;
  int swapped, ret, separable;
  T *kernel_values = NULL, *factors = NULL;
  double *col = NULL, *row = NULL;
  SkyKernel as_kernel = { 0 };
  const SkyKernel *k = kernel;
  const T *input = in;
  double *swapped_input = NULL;

  ret = sky_convolve_geometry (nx, ny, kernel, mode, &out_nx, &out_ny, &x0, &y0, &swapped);
  if (ret != SKY_OK)
    return ret;
  if (swapped)
    {
      /* Convolution commutes: the kernel becomes the input and the input
       * the kernel (valid mode with a kernel larger than the image). */
      swapped_input = malloc ((size_t) (nx * ny) * sizeof *swapped_input);
      T *kernel_as_input = malloc ((size_t) kernel->nx * kernel->ny * sizeof *kernel_as_input);
      if (swapped_input == NULL || kernel_as_input == NULL)
        {
          free (swapped_input);
          free (kernel_as_input);
          return sky_fail (SKY_ERR_MEMORY, "convolve: out of memory");
        }
      for (int64_t i = 0; i < nx * ny; i++)
        swapped_input[i] = in[i];
      for (int i = 0; i < kernel->nx * kernel->ny; i++)
        kernel_as_input[i] = (T) kernel->values[i];
      ret = sky_kernel_from_values (&as_kernel, (int) nx, (int) ny, swapped_input);
      free (swapped_input);
      if (ret != SKY_OK)
        {
          free (kernel_as_input);
          return ret;
        }
      input = kernel_as_input;
      nx = kernel->nx;
      ny = kernel->ny;
      k = &as_kernel;
    }

  col = malloc ((size_t) k->ny * sizeof *col);
  row = malloc ((size_t) k->nx * sizeof *row);
  kernel_values = malloc ((size_t) k->nx * k->ny * sizeof *kernel_values);
  factors = malloc ((size_t) (k->nx + k->ny) * sizeof *factors);
  if (!col || !row || !kernel_values || !factors)
    {
      ret = sky_fail (SKY_ERR_MEMORY, "convolve: out of memory");
      goto exit;
    }
  separable = sky_kernel_separate (k, SKY_KERNEL_RANK1_TOLERANCE, col, row);
  if (path == SKY_CONVOLVE_SEPARABLE && !separable)
    {
      ret = sky_fail (SKY_ERR_ARGUMENT, "convolve: the %d x %d kernel is not separable "
                      "(not of rank 1)", k->nx, k->ny);
      goto exit;
    }
  if (path == SKY_CONVOLVE_AUTO)
    path = separable ? SKY_CONVOLVE_SEPARABLE : SKY_CONVOLVE_DIRECT;
  for (int i = 0; i < k->nx * k->ny; i++)
    kernel_values[i] = (T) k->values[i];
  for (int i = 0; i < k->nx; i++)
    factors[i] = (T) row[i];
  for (int i = 0; i < k->ny; i++)
    factors[k->nx + i] = (T) col[i];

  c.in = input;
  c.nx = nx;
  c.ny = ny;
  c.kernel = kernel_values;
  c.row = factors;
  c.col = factors + k->nx;
  c.kx = k->nx;
  c.ky = k->ny;
  c.out = out;
  c.out_nx = out_nx;
  c.out_ny = out_ny;
  c.x0 = x0;
  c.y0 = y0;
  /* Blocks of rows: a few per thread to balance them; a separable block
   * also convolves ky - 1 input rows before its first output row, so its
   * blocks are long. */
  if (path == SKY_CONVOLVE_SEPARABLE)
    {
      int threads = nthreads > 0 ? nthreads : sky_default_threads ();
      c.rows_per_task = (out_ny + 4 * threads - 1) / (4 * threads);
      if (c.rows_per_task < 4 * (int64_t) k->ny)
        c.rows_per_task = 4 * (int64_t) k->ny;
    }
  else
    c.rows_per_task = 16;
  ntasks = (out_ny + c.rows_per_task - 1) / c.rows_per_task;
  sky_parallel_for ((int) ntasks, nthreads,
                    path == SKY_CONVOLVE_SEPARABLE ? FN (separable_task) : FN (direct_task), &c);
  if (c.failed)
    ret = sky_fail (SKY_ERR_MEMORY, "convolve: out of memory for the row blocks");
  if (used != NULL)
    *used = path;

exit:
  if (swapped)
    free ((void *) input);
  sky_kernel_clear (&as_kernel);
  free (col);
  free (row);
  free (kernel_values);
  free (factors);
  return ret;
}

typedef struct {
  const T *a;
  int64_t n;
  const T *v;
  int64_t m;
  T *out;
  int64_t block;
} FN (Conv1d);

SKY_VECTOR_CLONES static void
FN (conv1d_task) (void *ctx, int task)
{
  FN (Conv1d) *c = ctx;
  int64_t j0 = task * c->block, j1 = j0 + c->block, total = c->n + c->m - 1;
  T *restrict out = c->out;

  if (j1 > total)
    j1 = total;
  memset (out + j0, 0, (size_t) (j1 - j0) * sizeof *out);
  for (int64_t m = 0; m < c->m; m++)
    {
      /* out[j] += v[m] * a[j - m] for j in [j0, j1) with 0 <= j - m < n. */
      int64_t lo = j0 > m ? j0 : m, hi = j1 < m + c->n ? j1 : m + c->n;
      const T *restrict src = c->a - m;
      T w = c->v[m];
      for (int64_t j = lo; j < hi; j++)
        out[j] += w * src[j];
    }
}

static int
FN (convolve1d) (const T *a, int64_t n, const T *v, int64_t m, int nthreads, T *out)
{
  FN (Conv1d) c = { a, n, v, m, out, 16384 };
  int64_t total = n + m - 1;

  if (n <= 0 || m <= 0)
    return sky_fail (SKY_ERR_ARGUMENT, "convolve: empty input (%lld and %lld values)",
                     (long long) n, (long long) m);
  sky_parallel_for ((int) ((total + c.block - 1) / c.block), nthreads, FN (conv1d_task), &c);
  return SKY_OK;
}

#undef FN
#undef SKY_CONCAT
#undef SKY_CONCAT_
