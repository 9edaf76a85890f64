/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The core's coordinate grid and contours as JSON, for the Python tests
 * that hold them against astropy and matplotlib (test-grid.py,
 * test-contours.py):
 *
 *   sky-geometry-dump grid IMAGE.fits [X0 Y0 X1 Y1]
 *   sky-geometry-dump contour IMAGE.fits LEVEL...
 *   sky-geometry-dump contour-time IMAGE.fits REPEAT LEVEL...
 *
 * contour-time traces each level REPEAT times and prints, per level, the
 * path count and the median time of one trace in ms (for
 * bench/bench-contours.py); the grid's time over the whole image likewise.
 *
 * The grid covers the whole image (-0.5 to n - 0.5) unless a rectangle is
 * given; pixels are 0-based. */
#include "sky-core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *edge_names[] = { "x0", "x1", "y0", "y1" };

static void
print_points (const double *x, const double *y, int64_t a, int64_t b)
{
  printf ("\"x\": [");
  for (int64_t i = a; i < b; i++)
    printf ("%s%.17g", i > a ? ", " : "", x[i]);
  printf ("], \"y\": [");
  for (int64_t i = a; i < b; i++)
    printf ("%s%.17g", i > a ? ", " : "", y[i]);
  printf ("]");
}

static int
dump_grid (const SkyImage *img, int argc, char **argv)
{
  SkyWcs *wcs = NULL;
  SkyGrid g;
  double r[4] = { -0.5, -0.5, (double) img->nx - 0.5, (double) img->ny - 0.5 };
  double north[2], east[2];

  if (argc == 4)
    for (int i = 0; i < 4; i++)
      r[i] = strtod (argv[i], NULL);
  if (sky_wcs_new (img, &wcs) != SKY_OK || sky_wcs_grid (wcs, r[0], r[1], r[2], r[3], &g) != SKY_OK)
    {
      fprintf (stderr, "sky-geometry-dump: %s\n", sky_last_error ());
      sky_wcs_free (wcs);
      return 1;
    }
  printf ("{\"rect\": [%.17g, %.17g, %.17g, %.17g], \"step\": [%.17g, %.17g], "
          "\"lng_hours\": %d, \"pole\": %d,\n \"lines\": [", r[0], r[1], r[2], r[3], g.step[0],
          g.step[1], g.lng_hours, g.pole_inside);
  for (int l = 0; l < g.nlines; l++)
    printf ("%s\n  {\"axis\": %d, \"value\": %.17g, \"text\": \"%s\"}", l ? "," : "",
            g.lines[l].axis, g.lines[l].value, g.lines[l].text);
  printf ("],\n \"crossings\": [");
  for (int c = 0; c < g.ncrossings; c++)
    printf ("%s\n  {\"line\": %d, \"edge\": \"%s\", \"x\": %.17g, \"y\": %.17g}", c ? "," : "",
            g.crossings[c].line, edge_names[g.crossings[c].edge], g.crossings[c].x,
            g.crossings[c].y);
  printf ("],\n \"paths\": [");
  for (int p = 0; p < g.npaths; p++)
    {
      printf ("%s\n  {\"line\": %d, ", p ? "," : "", g.path_line[p]);
      print_points (g.px, g.py, g.path_start[p], g.path_start[p + 1]);
      printf ("}");
    }
  printf ("]");
  if (sky_wcs_north_east (wcs, 0.5 * (r[0] + r[2]), 0.5 * (r[1] + r[3]), north, east) == SKY_OK)
    printf (",\n \"north\": [%.17g, %.17g], \"east\": [%.17g, %.17g]", north[0], north[1],
            east[0], east[1]);
  printf ("}\n");
  sky_grid_free (&g);
  sky_wcs_free (wcs);
  return 0;
}

static int
dump_contours (const SkyImage *img, int argc, char **argv)
{
  printf ("{\"levels\": [");
  for (int k = 0; k < argc; k++)
    {
      SkyContour c;
      double level = strtod (argv[k], NULL);

      if (sky_contour_trace (img->pixels, img->nx, img->ny, level, &c) != SKY_OK)
        {
          fprintf (stderr, "sky-geometry-dump: %s\n", sky_last_error ());
          return 1;
        }
      printf ("%s\n {\"level\": %.17g, \"paths\": [", k ? "," : "", level);
      for (int64_t p = 0; p < c.npaths; p++)
        {
          printf ("%s\n  {\"closed\": %d, ", p ? "," : "", c.closed[p]);
          print_points (c.px, c.py, c.path_start[p], c.path_start[p + 1]);
          printf ("}");
        }
      printf ("]}");
      sky_contour_free (&c);
    }
  printf ("]}\n");
  return 0;
}

static double
now_ms (void)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (double) t.tv_sec * 1e3 + (double) t.tv_nsec / 1e6;
}

static int
compare_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

static double
median (double *v, int n)
{
  qsort (v, (size_t) n, sizeof *v, compare_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int
time_contours (const SkyImage *img, int argc, char **argv)
{
  int repeat = argc > 0 ? atoi (argv[0]) : 0;
  double *t;
  SkyWcs *wcs = NULL;

  if (repeat < 1)
    {
      fprintf (stderr, "sky-geometry-dump: contour-time needs a repeat count of 1 or more\n");
      return 2;
    }
  t = malloc ((size_t) repeat * sizeof *t);
  if (t == NULL)
    return 1;
  printf ("{\"levels\": [");
  for (int k = 1; k < argc; k++)
    {
      double level = strtod (argv[k], NULL);
      int64_t npaths = 0;
      for (int r = 0; r < repeat; r++)
        {
          SkyContour c;
          double t0 = now_ms ();
          if (sky_contour_trace (img->pixels, img->nx, img->ny, level, &c) != SKY_OK)
            {
              fprintf (stderr, "sky-geometry-dump: %s\n", sky_last_error ());
              free (t);
              return 1;
            }
          t[r] = now_ms () - t0;
          npaths = c.npaths;
          sky_contour_free (&c);
        }
      printf ("%s{\"level\": %.17g, \"paths\": %lld, \"median_ms\": %.4f}", k > 1 ? ", " : "",
              level, (long long) npaths, median (t, repeat));
    }
  printf ("]");
  if (sky_wcs_new (img, &wcs) == SKY_OK)
    {
      for (int r = 0; r < repeat; r++)
        {
          SkyGrid g;
          double t0 = now_ms ();
          if (sky_wcs_grid (wcs, -0.5, -0.5, (double) img->nx - 0.5, (double) img->ny - 0.5, &g)
              == SKY_OK)
            sky_grid_free (&g);
          t[r] = now_ms () - t0;
        }
      printf (", \"grid_median_ms\": %.4f", median (t, repeat));
      sky_wcs_free (wcs);
    }
  printf ("}\n");
  free (t);
  return 0;
}

int
main (int argc, char **argv)
{
  SkyImage img;
  int ret;

  if (argc < 3 || (strcmp (argv[1], "grid") != 0 && strcmp (argv[1], "contour") != 0
                    && strcmp (argv[1], "contour-time") != 0))
    {
      fprintf (stderr, "usage: sky-geometry-dump grid IMAGE [X0 Y0 X1 Y1] | "
               "contour IMAGE LEVEL... | contour-time IMAGE REPEAT LEVEL...\n");
      return 2;
    }
  if (sky_image_load (argv[2], NULL, &img) != SKY_OK)
    {
      fprintf (stderr, "sky-geometry-dump: %s\n", sky_last_error ());
      return 1;
    }
  if (strcmp (argv[1], "grid") == 0)
    ret = dump_grid (&img, argc - 3, argv + 3);
  else if (strcmp (argv[1], "contour-time") == 0)
    ret = time_contours (&img, argc - 3, argv + 3);
  else
    ret = dump_contours (&img, argc - 3, argv + 3);
  sky_image_clear (&img);
  return ret;
}
