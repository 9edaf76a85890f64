/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Catalogues to draw over an image: the file read whole and told apart by
 * its contents, CSV, ECSV and SExtractor ASCII tables read here, and the
 * position columns recognised by the names and units the field uses. */
#include "sky-overlay-private.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Files bigger than this are not catalogues anyone draws over an image. */
#define MAX_OVERLAY_BYTES ((size_t) 1 << 30)
#define MAX_COLUMNS 4096

/* ------------------------------------------------------------ the list */

/* The list's capacity is 16, then doubles: it is full when n is 0 or a
 * power of two from 16 up. */
SkyShape *
sky_overlay_push (SkyOverlay *o)
{
  if (o->n == 0 || (o->n >= 16 && (o->n & (o->n - 1)) == 0))
    {
      int64_t cap = o->n ? 2 * o->n : 16;
      SkyShape *grown = realloc (o->shapes, (size_t) cap * sizeof *grown);
      if (grown == NULL)
        return NULL;
      o->shapes = grown;
    }
  memset (&o->shapes[o->n], 0, sizeof o->shapes[0]);
  return &o->shapes[o->n++];
}

void
sky_overlay_clear (SkyOverlay *o)
{
  if (o == NULL)
    return;
  for (int64_t i = 0; i < o->n; i++)
    {
      free (o->shapes[i].vx);
      free (o->shapes[i].vy);
      free (o->shapes[i].text);
    }
  free (o->shapes);
  free (o->path);
  memset (o, 0, sizeof *o);
}

/* ------------------------------------------------------------- values */

static const char *
skip_space (const char *s)
{
  while (*s == ' ' || *s == '\t')
    s++;
  return s;
}

double
sky_parse_sexagesimal (const char *text, int hours)
{
  double part[3] = { 0, 0, 0 };
  int nparts = 0, negative = 0;
  const char *s = skip_space (text);
  char *end;

  if (*s == '-' || *s == '+')
    {
      negative = *s == '-';
      s++;
    }
  while (nparts < 3)
    {
      s = skip_space (s);
      if (!isdigit ((unsigned char) *s) && *s != '.')
        break;
      errno = 0;
      part[nparts] = strtod (s, &end);
      if (end == s || errno == ERANGE || part[nparts] < 0)
        return NAN;
      nparts++;
      s = end;
      /* Separators: colons, blanks, or the letters of 12h34m56s and
       * -29d00m28s (and the marks ' " of degrees-minutes-seconds). */
      if (*s == ':' || *s == 'h' || *s == 'd' || *s == 'm' || *s == 's' || *s == '\''
          || *s == '"')
        s++;
    }
  s = skip_space (s);
  if (nparts == 0 || *s != '\0')
    return NAN;
  if (nparts > 1 && (part[1] >= 60 || part[2] >= 60))
    return NAN;
  {
    double v = part[0] + part[1] / 60.0 + part[2] / 3600.0;
    if (hours && nparts > 1)
      v *= 15.0;
    return negative ? -v : v;
  }
}

/* A cell as a number: the whole text a float, else sexagesimal (then in
 * degrees already, *sexagesimal set). *ok is 0 for text that is neither;
 * an empty cell, "nan" or "--" (astropy's masked value) is NaN with *ok 1. */
static double
cell_value (const char *cell, int hours_if_sexagesimal, int *ok, int *sexagesimal)
{
  const char *s = skip_space (cell);
  char *end;
  double v;

  *ok = 1;
  *sexagesimal = 0;
  if (*s == '\0' || strcmp (s, "--") == 0 || strcasecmp (s, "nan") == 0
      || strcasecmp (s, "null") == 0)
    return NAN;
  errno = 0;
  v = strtod (s, &end);
  end = (char *) skip_space (end);
  if (end != s && *end == '\0' && errno != ERANGE)
    return v;
  v = sky_parse_sexagesimal (s, hours_if_sexagesimal);
  if (isnan (v))
    *ok = 0;
  *sexagesimal = 1;
  return v;
}

/* ------------------------------------------------------------ columns */

typedef struct {
  const char *x, *y;
  SkyOverlayFrame frame;
  double offset;        /* pixels: -1 for FITS 1-based */
} PairName;

static const PairName sky_pairs[] = {
  { "ra", "dec", SKY_FRAME_EQUATORIAL, 0 },
  { "raj2000", "dej2000", SKY_FRAME_EQUATORIAL, 0 },
  { "raj2000", "decj2000", SKY_FRAME_EQUATORIAL, 0 },
  { "_raj2000", "_dej2000", SKY_FRAME_EQUATORIAL, 0 },
  { "ra_icrs", "de_icrs", SKY_FRAME_EQUATORIAL, 0 },
  { "ra_icrs", "dec_icrs", SKY_FRAME_EQUATORIAL, 0 },
  { "alpha_j2000", "delta_j2000", SKY_FRAME_EQUATORIAL, 0 },
  { "ra_deg", "dec_deg", SKY_FRAME_EQUATORIAL, 0 },
  { "glon", "glat", SKY_FRAME_GALACTIC, 0 },
  { "_glon", "_glat", SKY_FRAME_GALACTIC, 0 },
};

static const PairName pixel_pairs[] = {
  { "x_image", "y_image", SKY_FRAME_PIXEL, -1 },
  { "xwin_image", "ywin_image", SKY_FRAME_PIXEL, -1 },
  { "x", "y", SKY_FRAME_PIXEL, 0 },
  { "x_centroid", "y_centroid", SKY_FRAME_PIXEL, 0 },
  { "xcentroid", "ycentroid", SKY_FRAME_PIXEL, 0 },
  { "x_pix0", "y_pix0", SKY_FRAME_PIXEL, 0 },
};

static int
find_column (const char *const *names, int ncols, const char *want)
{
  for (int i = 0; i < ncols; i++)
    if (names[i] != NULL && strcasecmp (names[i], want) == 0)
      return i;
  return -1;
}

static int
find_pair (const char *const *names, int ncols, const PairName *pairs, int npairs,
           const PairName **found, int *xi, int *yi)
{
  for (int p = 0; p < npairs; p++)
    {
      *xi = find_column (names, ncols, pairs[p].x);
      *yi = find_column (names, ncols, pairs[p].y);
      if (*xi >= 0 && *yi >= 0)
        {
          *found = &pairs[p];
          return 1;
        }
    }
  return 0;
}

/* Degrees per unit of an angle column: 1 for deg or none, 15 for hours,
 * 180/pi for radians; 0 for a unit that is not an angle. */
static double
angle_scale (const char *unit, int *hours)
{
  *hours = 0;
  if (unit == NULL || *unit == '\0' || strcasecmp (unit, "deg") == 0
      || strcasecmp (unit, "degree") == 0 || strcasecmp (unit, "degrees") == 0
      || strcasecmp (unit, "\"d:m:s\"") == 0 || strcasecmp (unit, "d:m:s") == 0)
    return 1.0;
  if (strcasecmp (unit, "h") == 0 || strcasecmp (unit, "hour") == 0
      || strcasecmp (unit, "hourangle") == 0 || strcasecmp (unit, "hourangles") == 0
      || strcasecmp (unit, "h:m:s") == 0 || strcasecmp (unit, "\"h:m:s\"") == 0)
    {
      *hours = 1;
      return 15.0;
    }
  if (strcasecmp (unit, "rad") == 0 || strcasecmp (unit, "radian") == 0)
    return 180.0 / M_PI;
  return 0.0;
}

int
sky_overlay_pick_columns (const char *file, const char *const *names,
                          const char *const *units, int ncols, int prefer_sky,
                          SkyColumnPick *pick, SkyOverlay *out)
{
  const PairName *found = NULL;
  int xi = -1, yi = -1, got;

  memset (pick, 0, sizeof *pick);
  if (prefer_sky)
    got = find_pair (names, ncols, sky_pairs, (int) (sizeof sky_pairs / sizeof sky_pairs[0]),
                     &found, &xi, &yi)
          || find_pair (names, ncols, pixel_pairs,
                        (int) (sizeof pixel_pairs / sizeof pixel_pairs[0]), &found, &xi, &yi);
  else
    got = find_pair (names, ncols, pixel_pairs,
                     (int) (sizeof pixel_pairs / sizeof pixel_pairs[0]), &found, &xi, &yi)
          || find_pair (names, ncols, sky_pairs, (int) (sizeof sky_pairs / sizeof sky_pairs[0]),
                        &found, &xi, &yi);
  if (!got)
    {
      char have[256] = "";
      size_t len = 0;
      for (int i = 0; i < ncols && len < sizeof have - 8; i++)
        len += (size_t) snprintf (have + len, sizeof have - len, "%s%s", i ? ", " : "",
                                  names[i] ? names[i] : "?");
      if (len >= sizeof have - 8)
        snprintf (have + sizeof have - 8, 8, "...");
      return sky_fail (SKY_ERR_FORMAT, "%s: no position columns (ra/dec, RAJ2000/DEJ2000, "
                       "ALPHA_J2000/DELTA_J2000, glon/glat, X_IMAGE/Y_IMAGE or x/y) among "
                       "its columns: %s", file, ncols ? have : "none");
    }
  pick->x = xi;
  pick->y = yi;
  pick->frame = found->frame;
  pick->offset = found->offset;
  pick->x_scale = pick->y_scale = 1.0;
  snprintf (out->x_column, sizeof out->x_column, "%s", names[xi]);
  snprintf (out->y_column, sizeof out->y_column, "%s", names[yi]);
  if (found->frame == SKY_FRAME_PIXEL)
    snprintf (out->units, sizeof out->units, "%s",
              found->offset < 0 ? "pixel (FITS, 1-based)" : "pixel (0-based)");
  else
    {
      const char *xu = units ? units[xi] : NULL, *yu = units ? units[yi] : NULL;
      int x_hours, y_hours;
      pick->x_scale = angle_scale (xu, &x_hours);
      pick->y_scale = angle_scale (yu, &y_hours);
      if (pick->x_scale == 0 || pick->y_scale == 0 || y_hours)
        return sky_fail (SKY_ERR_FORMAT, "%s: column %s has unit \"%s\", not an angle "
                         "(deg, hourangle or rad)", file,
                         pick->x_scale == 0 ? names[xi] : names[yi],
                         pick->x_scale == 0 ? xu : yu);
      /* Sexagesimal RA is hours unless the unit says degrees. */
      pick->x_hours = found->frame == SKY_FRAME_EQUATORIAL
                      && (x_hours || xu == NULL || *xu == '\0');
      snprintf (out->units, sizeof out->units, "%s", x_hours ? "hourangle, deg"
                : pick->x_scale != 1.0 ? "rad" : "deg");
    }
  return SKY_OK;
}

int
sky_overlay_add_row (SkyOverlay *o, const SkyColumnPick *pick, const char *xs, const char *ys,
                     const char *file, int64_t line)
{
  int xok, yok, x_sexagesimal, y_sexagesimal;
  double x = cell_value (xs, pick->x_hours, &xok, &x_sexagesimal);
  double y = cell_value (ys, 0, &yok, &y_sexagesimal);
  SkyShape *s;

  if (!xok || !yok)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: \"%s\" is not a number or a position",
                     file, (long long) line, !xok ? xs : ys);
  if (isnan (x) || isnan (y))
    return SKY_OK;
  if (pick->frame == SKY_FRAME_PIXEL)
    {
      x += pick->offset;
      y += pick->offset;
    }
  else
    {
      /* A sexagesimal cell is already in degrees. */
      if (!x_sexagesimal)
        x *= pick->x_scale;
      if (!y_sexagesimal)
        y *= pick->y_scale;
      if (fabs (y) > 90.0)
        return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: latitude %g is beyond the poles",
                         file, (long long) line, y);
    }
  s = sky_overlay_push (o);
  if (s == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", file);
  s->kind = SKY_SHAPE_POINT;
  s->frame = pick->frame;
  s->x = x;
  s->y = y;
  return SKY_OK;
}

/* ------------------------------------------------------------ tables */

/* Splits line at delim (' ': runs of blanks and tabs) into at most max
 * fields, in place; double quotes keep delimiters. Returns the count. */
static int
split_fields (char *line, char delim, char **fields, int max)
{
  int n = 0;
  char *p = line;

  if (delim == ' ')
    p = (char *) skip_space (p);
  while (*p != '\0' && n < max)
    {
      if (*p == '"')
        {
          p++;
          fields[n++] = p;
          while (*p != '\0' && !(*p == '"' && p[1] != '"'))
            {
              if (*p == '"')
                memmove (p, p + 1, strlen (p));   /* "" inside quotes is " */
              p++;
            }
          if (*p == '"')
            *p++ = '\0';
        }
      else
        {
          fields[n++] = p;
          while (*p != '\0' && (delim == ' ' ? (*p != ' ' && *p != '\t') : *p != delim))
            p++;
        }
      if (*p == '\0')
        break;
      if (delim == ' ')
        {
          *p++ = '\0';
          p = (char *) skip_space (p);
        }
      else
        {
          char *sep = strchr (p, delim);
          if (sep == NULL)
            break;
          *sep = '\0';
          p = sep + 1;
          if (*p == '\0' && n < max)
            fields[n++] = p;   /* a last, empty field */
        }
    }
  return n;
}

static char *
trim (char *s)
{
  size_t len;
  s = (char *) skip_space (s);
  len = strlen (s);
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
    s[--len] = '\0';
  return s;
}

/* The unit of an ECSV datatype line: "unit: deg" or unit: "deg". */
static void
ecsv_column (const char *line, char *name, size_t nsize, char *unit, size_t usize)
{
  const char *keys[2] = { "name:", "unit:" };
  char *outs[2] = { name, unit };
  size_t sizes[2] = { nsize, usize };

  for (int k = 0; k < 2; k++)
    {
      const char *at = strstr (line, keys[k]);
      size_t len = 0;
      if (at == NULL)
        continue;
      at = skip_space (at + 5);
      if (*at == '"' || *at == '\'')
        {
          char q = *at++;
          while (at[len] != '\0' && at[len] != q)
            len++;
        }
      else
        while (at[len] != '\0' && at[len] != ',' && at[len] != '}' && at[len] != ' '
               && at[len] != '\r')
          len++;
      if (len >= sizes[k])
        len = sizes[k] - 1;
      memcpy (outs[k], at, len);
      outs[k][len] = '\0';
    }
}

typedef struct {
  char *names[MAX_COLUMNS];
  char *units[MAX_COLUMNS];
  int ncols;
} Columns;

static void
columns_clear (Columns *c)
{
  for (int i = 0; i < c->ncols; i++)
    {
      free (c->names[i]);
      free (c->units[i]);
    }
  c->ncols = 0;
}

int
sky_overlay_parse_table (const char *name, const char *text, int prefer_sky, SkyOverlay *out)
{
  char *copy = strdup (text), *save = NULL;
  char *fields[MAX_COLUMNS];
  Columns cols = { .ncols = 0 };
  char delim = 0;
  int ecsv = strncmp (text, "# %ECSV", 7) == 0, sextractor = 0, header_done = 0;
  int status = SKY_OK;
  int64_t lineno = 0;
  SkyColumnPick pick;

  if (copy == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", name);
  if (ecsv)
    delim = ' ';
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      lineno++;
      line = trim (line);
      if (*line == '\0')
        continue;
      if (line[0] == '#')
        {
          char *rest = trim (line + 1);
          int num, consumed = 0;
          char colname[128];
          if (ecsv && strncmp (rest, "- ", 2) == 0 && cols.ncols < MAX_COLUMNS)
            {
              char cname[128] = "", cunit[64] = "";
              ecsv_column (rest, cname, sizeof cname, cunit, sizeof cunit);
              cols.names[cols.ncols] = strdup (cname);
              cols.units[cols.ncols++] = strdup (cunit);
            }
          else if (ecsv && strncmp (rest, "unit:", 5) == 0 && cols.ncols > 0)
            {
              char cname[8], cunit[64] = "";
              ecsv_column (rest, cname, sizeof cname, cunit, sizeof cunit);
              free (cols.units[cols.ncols - 1]);
              cols.units[cols.ncols - 1] = strdup (cunit);
            }
          else if (ecsv && strncmp (rest, "delimiter:", 10) == 0)
            {
              const char *d = skip_space (rest + 10);
              delim = (*d == '\'' || *d == '"') ? d[1] : d[0];
            }
          else if (!ecsv && !header_done
                   && sscanf (rest, "%d %127s%n", &num, colname, &consumed) == 2
                   && num >= 1 && num <= MAX_COLUMNS && (sextractor || cols.ncols == 0))
            {
              /* SExtractor: "#   2 X_IMAGE  description  [pixel]"; a
               * vector column takes the numbers up to the next one. */
              char *unit = strrchr (rest, '[');
              sextractor = 1;
              while (cols.ncols < num - 1)
                {
                  cols.names[cols.ncols] = NULL;
                  cols.units[cols.ncols++] = NULL;
                }
              cols.names[cols.ncols] = strdup (colname);
              if (unit != NULL && strchr (unit, ']'))
                {
                  *strchr (unit, ']') = '\0';
                  cols.units[cols.ncols++] = strdup (unit + 1);
                }
              else
                cols.units[cols.ncols++] = NULL;
            }
          continue;
        }
      if (!header_done)
        {
          header_done = 1;
          if (sextractor)
            delim = ' ';
          else
            {
              int n;
              if (!ecsv)
                delim = strchr (line, ',') ? ',' : strchr (line, '\t') ? '\t' : ' ';
              n = split_fields (line, delim, fields, MAX_COLUMNS);
              if (!ecsv)
                {
                  columns_clear (&cols);
                  for (int i = 0; i < n; i++)
                    {
                      cols.names[i] = strdup (trim (fields[i]));
                      cols.units[i] = NULL;
                    }
                  cols.ncols = n;
                }
              else if (n != cols.ncols)
                {
                  status = sky_fail (SKY_ERR_FORMAT, "%s: line %lld: %d column names where "
                                     "the ECSV header declares %d", name, (long long) lineno,
                                     n, cols.ncols);
                  goto exit;
                }
            }
          status = sky_overlay_pick_columns (name, (const char *const *) cols.names,
                                             (const char *const *) cols.units, cols.ncols,
                                             prefer_sky, &pick, out);
          if (status != SKY_OK || !sextractor)
            continue;
        }
      if (status != SKY_OK)
        goto exit;
      {
        int n = split_fields (line, delim, fields, MAX_COLUMNS);
        if (n <= pick.x || n <= pick.y)
          {
            status = sky_fail (SKY_ERR_FORMAT, "%s: line %lld: %d fields, too few for "
                               "columns %s and %s", name, (long long) lineno, n,
                               out->x_column, out->y_column);
            goto exit;
          }
        status = sky_overlay_add_row (out, &pick, fields[pick.x], fields[pick.y], name, lineno);
        if (status != SKY_OK)
          goto exit;
      }
    }
  if (status == SKY_OK && !header_done)
    status = sky_fail (SKY_ERR_FORMAT, "%s: no table: no header line with column names",
                       name);
exit:
  columns_clear (&cols);
  free (copy);
  return status;
}

/* ------------------------------------------------------------- loading */

static int
looks_like_regions (const char *text)
{
  static const char *const starts[] = {
    "# Region file format", "global ", "fk5", "fk4", "icrs", "galactic", "image", "physical",
    "j2000", "circle(", "ellipse(", "box(", "polygon(", "point(", "text(", "# vector", NULL,
  };
  const char *line = text;

  /* The first line that is not blank decides. */
  while (*line == '\n' || *line == '\r' || *line == ' ')
    line++;
  for (int i = 0; starts[i]; i++)
    if (strncasecmp (line, starts[i], strlen (starts[i])) == 0)
      return 1;
  return 0;
}

int
sky_overlay_load (const char *path, int prefer_sky, SkyOverlay *out)
{
  FILE *fp;
  char *text = NULL;
  size_t size = 0, cap = 0;
  int status;

  memset (out, 0, sizeof *out);
  fp = fopen (path, "rb");
  if (fp == NULL)
    return sky_fail (SKY_ERR_IO, "%s: %s", path, strerror (errno));
  for (;;)
    {
      size_t got;
      if (size + 65536 + 1 > cap)
        {
          char *grown;
          cap = cap ? 2 * cap : 131072;
          if (cap > MAX_OVERLAY_BYTES)
            {
              fclose (fp);
              free (text);
              return sky_fail (SKY_ERR_SIZE, "%s: over 1 GiB, too big for an overlay", path);
            }
          grown = realloc (text, cap);
          if (grown == NULL)
            {
              fclose (fp);
              free (text);
              return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
            }
          text = grown;
        }
      got = fread (text + size, 1, 65536, fp);
      size += got;
      if (got < 65536)
        break;
    }
  if (ferror (fp))
    {
      fclose (fp);
      free (text);
      return sky_fail (SKY_ERR_IO, "%s: read error", path);
    }
  fclose (fp);
  text[size] = '\0';
  if (size == 0)
    status = sky_fail (SKY_ERR_FORMAT, "%s: the file is empty", path);
  else if (memchr (text, '\0', size) != NULL)
    status = sky_fail (SKY_ERR_FORMAT, "%s: binary data, not a catalogue or a region file "
                       "(CSV, ECSV, VOTable, SExtractor ASCII or DS9 regions)", path);
  else if (strncmp (text, "<?xml", 5) == 0 || strstr (text, "<VOTABLE") != NULL)
    status = sky_overlay_parse_votable (path, text, size, prefer_sky, out);
  else if (looks_like_regions (text))
    status = sky_overlay_parse_regions (path, text, out);
  else
    status = sky_overlay_parse_table (path, text, prefer_sky, out);
  free (text);
  if (status == SKY_OK)
    {
      out->path = strdup (path);
      if (out->path == NULL)
        status = sky_fail (SKY_ERR_MEMORY, "%s: out of memory", path);
    }
  if (status != SKY_OK)
    sky_overlay_clear (out);
  return status;
}
