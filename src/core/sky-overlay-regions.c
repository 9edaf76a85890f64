/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DS9 region files (version 4): circle, ellipse, box, polygon, point, text
 * and line in the image, physical, fk5, icrs, j2000 and galactic frames, a
 * frame for the lines after it or for one shape ("fk5;circle(...)"),
 * sexagesimal or decimal positions, sizes with DS9's marks (" ' d r p i),
 * properties after '#' (text={...}), DS9's "# text(...)" lines. Shapes DS9
 * has that have no single place on a picture (vector, ruler, compass,
 * projection, pandas) are counted in nskipped, not drawn. */
#include "sky-overlay-private.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ARGS 4096

typedef struct {
  const char *file;
  int64_t line;
  SkyOverlayFrame frame;
  int frame_set;
} RegionState;

static const char *const skipped_shapes[] = {
  "vector", "ruler", "compass", "projection", "panda", "epanda", "bpanda", "segment",
  "composite", NULL,
};

static int
set_frame (RegionState *st, const char *word)
{
  if (strcasecmp (word, "image") == 0 || strcasecmp (word, "physical") == 0)
    st->frame = SKY_FRAME_PIXEL;
  else if (strcasecmp (word, "fk5") == 0 || strcasecmp (word, "icrs") == 0
           || strcasecmp (word, "j2000") == 0)
    st->frame = SKY_FRAME_EQUATORIAL;
  else if (strcasecmp (word, "galactic") == 0)
    st->frame = SKY_FRAME_GALACTIC;
  else if (strcasecmp (word, "fk4") == 0 || strcasecmp (word, "b1950") == 0
           || strcasecmp (word, "ecliptic") == 0 || strcasecmp (word, "linear") == 0
           || strcasecmp (word, "amplifier") == 0 || strcasecmp (word, "detector") == 0)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: the %s frame is not read (image, "
                     "physical, fk5, icrs, j2000 or galactic)", st->file, (long long) st->line,
                     word);
  else
    return -1;   /* not a frame */
  st->frame_set = 1;
  return SKY_OK;
}

/* A position coordinate: a number (degrees in sky frames, 1-based pixels in
 * image ones) or sexagesimal text. */
static int
coordinate (const RegionState *st, const char *text, int is_lng, double *out)
{
  int sexagesimal = strpbrk (text, ":hms") != NULL
                    || (strchr (text, 'd') != NULL && strchr (text, 'm') != NULL);
  double v;
  char *end;

  if (sexagesimal)
    v = sky_parse_sexagesimal (text, is_lng && st->frame == SKY_FRAME_EQUATORIAL
                                     && strchr (text, 'd') == NULL);
  else
    {
      v = strtod (text, &end);
      if (end == text || (*end != '\0' && strcasecmp (end, "d") != 0
                          && strcasecmp (end, "i") != 0 && strcasecmp (end, "p") != 0))
        v = NAN;
    }
  if (!isfinite (v))
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: \"%s\" is not a coordinate", st->file,
                     (long long) st->line, text);
  if (st->frame == SKY_FRAME_PIXEL)
    v -= 1.0;   /* DS9's image pixels count from 1 */
  else if (!is_lng && fabs (v) > 90.0)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: latitude %s is beyond the poles",
                     st->file, (long long) st->line, text);
  *out = v;
  return SKY_OK;
}

/* A size: pixels in image frames, arcseconds in sky frames (a bare number
 * is degrees there, as DS9 reads it). */
static int
size_value (const RegionState *st, const char *text, double *out)
{
  char *end;
  double v = strtod (text, &end), scale;

  if (end == text || !isfinite (v) || v < 0)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: \"%s\" is not a size", st->file,
                     (long long) st->line, text);
  if (st->frame == SKY_FRAME_PIXEL)
    scale = 1.0;
  else
    scale = *end == '"' ? 1.0 : *end == '\'' ? 60.0 : *end == 'r' ? 3600.0 * 180.0 / M_PI
                                                                  : 3600.0;
  if (*end != '\0' && strchr ("\"'drpi", *end) == NULL)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: \"%s\" is not a size", st->file,
                     (long long) st->line, text);
  if ((*end == 'p' || *end == 'i') && st->frame != SKY_FRAME_PIXEL)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: a size in pixels (\"%s\") in a sky "
                     "frame is not read", st->file, (long long) st->line, text);
  *out = v * scale;
  return SKY_OK;
}

/* The text of text={...} or text="..." in a properties string. */
static char *
property_text (const char *props)
{
  const char *at = props ? strstr (props, "text=") : NULL;
  const char *end;
  char close;

  if (at == NULL)
    return NULL;
  at += 5;
  close = *at == '{' ? '}' : *at == '"' ? '"' : *at == '\'' ? '\'' : 0;
  if (close == 0 || (end = strchr (at + 1, close)) == NULL)
    return NULL;
  return strndup (at + 1, (size_t) (end - at - 1));
}

static int
parse_shape (RegionState *st, SkyOverlay *o, char *cmd, const char *props)
{
  char *open = strchr (cmd, '('), *close = strrchr (cmd, ')');
  char *args[MAX_ARGS];
  int nargs = 0, status, exclude = 0;
  SkyShape *s;
  char *word = cmd;

  if (*word == '-' || *word == '+')
    {
      exclude = *word == '-';
      word++;
    }
  if (open == NULL || close == NULL || close < open)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: \"%s\" is not a frame or a shape",
                     st->file, (long long) st->line, cmd);
  *open = '\0';
  *close = '\0';
  while (*word == ' ')
    word++;
  for (size_t len = strlen (word); len > 0 && word[len - 1] == ' '; len--)
    word[len - 1] = '\0';
  for (int i = 0; skipped_shapes[i]; i++)
    if (strcasecmp (word, skipped_shapes[i]) == 0)
      {
        o->nskipped++;
        return SKY_OK;
      }
  /* Arguments: commas or blanks; text(x,y,{text}) keeps its braces. */
  {
    char *p = open + 1;
    while (*p && nargs < MAX_ARGS)
      {
        while (*p == ' ' || *p == ',' || *p == '\t')
          p++;
        if (*p == '\0')
          break;
        args[nargs++] = p;
        if (*p == '{' || *p == '"')
          {
            char want = *p == '{' ? '}' : '"';
            char *e = strchr (p + 1, want);
            p = e ? e + 1 : p + strlen (p);
          }
        else
          while (*p && *p != ' ' && *p != ',' && *p != '\t')
            p++;
        if (*p)
          *p++ = '\0';
      }
  }
  if (!st->frame_set)
    return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: %s before any frame (image, fk5, icrs, "
                     "galactic...)", st->file, (long long) st->line, word);
  s = sky_overlay_push (o);
  if (s == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", st->file);
  s->frame = st->frame;
  s->exclude = exclude;
  s->text = property_text (props);
  {
    struct { const char *name; SkyShapeKind kind; int nsizes; int min_args; } kinds[] = {
      { "circle", SKY_SHAPE_CIRCLE, 1, 3 }, { "annulus", SKY_SHAPE_CIRCLE, 1, 3 },
      { "ellipse", SKY_SHAPE_ELLIPSE, 2, 4 }, { "box", SKY_SHAPE_BOX, 2, 4 },
      { "point", SKY_SHAPE_POINT, 0, 2 }, { "text", SKY_SHAPE_TEXT, 0, 2 },
      { "polygon", SKY_SHAPE_POLYGON, 0, 6 }, { "line", SKY_SHAPE_POLYGON, 0, 4 },
    };
    int k = -1;
    for (int i = 0; i < (int) (sizeof kinds / sizeof kinds[0]); i++)
      if (strcasecmp (word, kinds[i].name) == 0)
        k = i;
    if (k < 0)
      {
        o->n--;
        free (s->text);
        return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: unknown shape \"%s\"", st->file,
                         (long long) st->line, word);
      }
    s->kind = kinds[k].kind;
    if (nargs < kinds[k].min_args || (s->kind == SKY_SHAPE_POLYGON && nargs % 2))
      {
        o->n--;
        free (s->text);
        return sky_fail (SKY_ERR_FORMAT, "%s: line %lld: %s needs %s%d arguments, it has %d",
                         st->file, (long long) st->line, word,
                         s->kind == SKY_SHAPE_POLYGON ? "an even number of, at least " : "",
                         kinds[k].min_args, nargs);
      }
    if (s->kind == SKY_SHAPE_POLYGON)
      {
        s->nvertices = nargs / 2;
        s->vx = malloc ((size_t) s->nvertices * sizeof (double));
        s->vy = malloc ((size_t) s->nvertices * sizeof (double));
        if (s->vx == NULL || s->vy == NULL)
          return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", st->file);
        for (int v = 0; v < s->nvertices; v++)
          if ((status = coordinate (st, args[2 * v], 1, &s->vx[v])) != SKY_OK
              || (status = coordinate (st, args[2 * v + 1], 0, &s->vy[v])) != SKY_OK)
            return status;
        /* The centre: the vertices' mean, longitudes taken near the first. */
        for (int v = 0; v < s->nvertices; v++)
          {
            double dx = s->vx[v] - s->vx[0];
            if (st->frame != SKY_FRAME_PIXEL)
              dx = remainder (dx, 360.0);
            s->x += (s->vx[0] + dx) / s->nvertices;
            s->y += s->vy[v] / s->nvertices;
          }
        return SKY_OK;
      }
    if ((status = coordinate (st, args[0], 1, &s->x)) != SKY_OK
        || (status = coordinate (st, args[1], 0, &s->y)) != SKY_OK)
      return status;
    if (kinds[k].nsizes >= 1 && (status = size_value (st, args[2], &s->a)) != SKY_OK)
      return status;
    s->b = s->a;
    if (kinds[k].nsizes >= 2 && (status = size_value (st, args[3], &s->b)) != SKY_OK)
      return status;
    if (kinds[k].nsizes >= 2 && nargs > 4)
      s->angle = strtod (args[nargs - 1], NULL);
    if (s->kind == SKY_SHAPE_TEXT && s->text == NULL && nargs > 2)
      s->text = strndup (args[2] + 1, strlen (args[2]) >= 2 ? strlen (args[2]) - 2 : 0);
  }
  return SKY_OK;
}

/* One command of a line: "global ...", a frame word, or a shape. */
static int
parse_command (RegionState *st, SkyOverlay *o, char *cmd, const char *props)
{
  int status;

  while (*cmd == ' ' || *cmd == '\t')
    cmd++;
  for (size_t len = strlen (cmd); len > 0 && isspace ((unsigned char) cmd[len - 1]); len--)
    cmd[len - 1] = '\0';
  if (*cmd == '\0' || strncasecmp (cmd, "global", 6) == 0)
    return SKY_OK;
  status = set_frame (st, cmd);
  if (status >= 0)
    return status;
  return parse_shape (st, o, cmd, props);
}

int
sky_overlay_parse_regions (const char *name, const char *text, SkyOverlay *out)
{
  char *copy = strdup (text), *save = NULL;
  RegionState st = { .file = name, .line = 0, .frame = SKY_FRAME_PIXEL, .frame_set = 0 };
  int status = SKY_OK;
  int64_t lineno = 0;

  if (copy == NULL)
    return sky_fail (SKY_ERR_MEMORY, "%s: out of memory", name);
  out->is_regions = 1;
  /* strtok_r would skip empty lines and so miscount them: split by hand. */
  for (char *line = copy; line != NULL && status == SKY_OK; )
    {
      char *next = strchr (line, '\n'), *hash, *props = NULL;
      if (next)
        *next++ = '\0';
      st.line = ++lineno;
      while (*line == ' ' || *line == '\t')
        line++;
      /* DS9 writes text and some shapes as comments: "# text(1,2) text={a}". */
      if (line[0] == '#')
        {
          char *rest = line + 1;
          while (*rest == ' ')
            rest++;
          if (strncasecmp (rest, "text(", 5) == 0 || strncasecmp (rest, "composite(", 10) == 0
              || strncasecmp (rest, "vector(", 7) == 0)
            line = rest;
          else
            {
              line = next;
              continue;
            }
        }
      /* Properties after a '#' outside braces. */
      {
        int depth = 0;
        for (hash = line; *hash; hash++)
          {
            depth += *hash == '{';
            depth -= *hash == '}';
            if (*hash == '#' && depth <= 0)
              {
                *hash = '\0';
                props = hash + 1;
                break;
              }
          }
      }
      /* DS9's commented shapes have their properties after the ')'. */
      if (props == NULL && strrchr (line, ')') != NULL && strchr (strrchr (line, ')'), '='))
        props = strrchr (line, ')') + 1;
      for (char *cmd = strtok_r (line, ";", &save); cmd && status == SKY_OK;
           cmd = strtok_r (NULL, ";", &save))
        status = parse_command (&st, out, cmd, props);
      line = next;
    }
  free (copy);
  return status;
}
