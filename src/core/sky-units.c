/* SPDX-License-Identifier: GPL-3.0-or-later */
/* BUNIT as the unit-aware formats can write it. FITS headers spell units
 * loosely (JY/BEAM, W/m^2-sr, erg/s/cm**2); astropy and VOUnit read only
 * the standard spellings and warn, or refuse the VOTable, on the rest. The
 * header's text is read as a product of known symbols with integer powers
 * and written back as "num.num/(den.den)", a form that the FITS, VOUnit,
 * CDS and astropy grammars all accept. A text that cannot be read that way
 * gives no unit: a wrong unit would be worse than none. */
#include "sky-export-private.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SKY_MAX_FACTORS 8

typedef struct {
  char name[16];  /* prefix and symbol, as written out */
  int power;
} UnitFactor;

/* Symbols that take SI prefixes (FITS standard 4.0, table 4), less those
 * VOUnit deprecates (erg, G, barn, a): astropy warns on them. */
static const char *const prefixable[] = {
  "m", "g", "s", "rad", "sr", "K", "A", "mol", "cd", "Hz", "J", "W", "V", "N", "C", "Ohm",
  "S", "F", "Wb", "T", "H", "lm", "lx", "eV", "Jy", "pc", "yr", "R", "mag", "bit", "byte",
  "Ry", NULL
};

/* Symbols without prefixes. */
static const char *const plain[] = {
  "deg", "arcmin", "arcsec", "mas", "min", "h", "d", "AU", "lyr", "solMass", "solLum",
  "solRad", "count", "photon", "pixel", "adu", "beam", "chan", "voxel", "D", "u", NULL
};

/* Spellings that VOUnit deprecates, and the one it reads. */
static const char *const aliases[][2] = {
  { "pix", "pixel" }, { "ct", "count" }, { "ph", "photon" }, { NULL, NULL }
};

/* Symbols whose case writers often get wrong and that no other symbol
 * matches in another case ("MJY" could be mega or milli: not here). */
static const char *const case_free[] = {
  "Jy", "beam", "pixel", "deg", "sr", "count", "photon", "adu", "mag", "arcsec", "arcmin",
  NULL
};

static const char *const prefixes[] = {
  "da", "Y", "Z", "E", "P", "T", "G", "M", "k", "h", "d", "c", "m", "u", "n", "p", "f", "a",
  "z", "y", NULL
};

static int
in_list (const char *const *list, const char *word, int ignore_case)
{
  for (int i = 0; list[i] != NULL; i++)
    if (ignore_case ? strcasecmp (list[i], word) == 0 : strcmp (list[i], word) == 0)
      return i + 1;
  return 0;
}

/* The symbol word as a known unit, spelled correctly into out; 0 if none. */
static int
known_symbol (const char *word, char *out, size_t size)
{
  int i;

  if (in_list (prefixable, word, 0) || in_list (plain, word, 0))
    {
      snprintf (out, size, "%s", word);
      return 1;
    }
  for (int p = 0; prefixes[p] != NULL; p++)
    {
      size_t n = strlen (prefixes[p]);
      if (strncmp (word, prefixes[p], n) == 0 && word[n] != '\0'
          && in_list (prefixable, word + n, 0))
        {
          snprintf (out, size, "%s", word);
          return 1;
        }
    }
  for (i = 0; aliases[i][0] != NULL; i++)
    if (strcasecmp (word, aliases[i][0]) == 0)
      {
        snprintf (out, size, "%s", aliases[i][1]);
        return 1;
      }
  if ((i = in_list (case_free, word, 1)) > 0)
    {
      snprintf (out, size, "%s", case_free[i - 1]);
      return 1;
    }
  return 0;
}

/* Reads an integer power after a symbol: "2", "-2", "+2", "^2", "^-2",
 * "**2", "**(-2)", "^(-2)". *s is left after it; 1 where none is written. */
static int
read_power (const char **s, int *power)
{
  const char *p = *s;
  int paren = 0, sign = 1, digits = 0;
  long v = 0;

  if (p[0] == '^')
    p++;
  else if (p[0] == '*' && p[1] == '*')
    p += 2;
  else if (!(isdigit ((unsigned char) p[0])
             || ((p[0] == '-' || p[0] == '+') && isdigit ((unsigned char) p[1]))))
    {
      *power = 1;
      return 1;
    }
  if (*p == '(')
    paren = 1, p++;
  if (*p == '-' || *p == '+')
    sign = *p++ == '-' ? -1 : 1;
  while (isdigit ((unsigned char) *p) && digits < 3)
    v = v * 10 + (*p++ - '0'), digits++;
  if (digits == 0 || isdigit ((unsigned char) *p) || (paren && *p++ != ')'))
    return 0;
  *power = (int) (sign * v);
  *s = p;
  return *power != 0;
}

static int
add_factor (UnitFactor *f, int *n, const char *name, int power)
{
  for (int i = 0; i < *n; i++)
    if (strcmp (f[i].name, name) == 0)
      {
        f[i].power += power;
        return 1;
      }
  if (*n == SKY_MAX_FACTORS)
    return 0;
  snprintf (f[*n].name, sizeof f[*n].name, "%s", name);
  f[(*n)++].power = power;
  return 1;
}

/* Parses text into factors. After a '/' every further factor divides (as
 * astropy reads "W/m2.sr"); a '-' between two symbols multiplies, as
 * headers such as "W/m^2-sr" mean it; "(...)" may group a denominator. */
static int
parse_unit (const char *text, UnitFactor *f, int *n)
{
  const char *s = text;
  int denominator = 0, in_group = 0, need_symbol = 1;

  *n = 0;
  while (*s)
    {
      char word[16], symbol[16];
      size_t len = 0;
      int power;

      if (*s == ' ' || *s == '.' || (*s == '*' && s[1] != '*')
          || (*s == '-' && isalpha ((unsigned char) s[1])))
        {
          if (*s != ' ')
            {
              if (need_symbol)
                return 0;
              need_symbol = 1;
            }
          s++;
          continue;
        }
      if (*s == '/')
        {
          if (denominator && !in_group && need_symbol)
            return 0;
          denominator = 1, need_symbol = 1, s++;
          continue;
        }
      if (*s == '(' && denominator && !in_group)
        {
          in_group = 1, s++;
          continue;
        }
      if (*s == ')' && in_group)
        {
          in_group = 2, s++;
          continue;
        }
      if (in_group == 2)
        return 0; /* nothing may follow the closed group */
      /* "µ" (U+00B5) and "μ" (U+03BC) are written u */
      if ((unsigned char) s[0] == 0xc2 && (unsigned char) s[1] == 0xb5)
        word[len++] = 'u', s += 2;
      else if ((unsigned char) s[0] == 0xce && (unsigned char) s[1] == 0xbc)
        word[len++] = 'u', s += 2;
      while (isalpha ((unsigned char) *s) && len < sizeof word - 1)
        word[len++] = *s++;
      word[len] = '\0';
      if (len == 0 || isalpha ((unsigned char) *s) || !known_symbol (word, symbol, sizeof symbol)
          || !read_power (&s, &power)
          || !add_factor (f, n, symbol, denominator ? -power : power))
        return 0;
      need_symbol = 0;
    }
  return *n > 0 && !need_symbol && in_group != 1;
}

static void
append_factor (char *out, size_t size, const UnitFactor *f, int power, const char *joiner)
{
  size_t used = strlen (out);

  if (power == 1)
    snprintf (out + used, size - used, "%s%s", joiner, f->name);
  else
    snprintf (out + used, size - used, "%s%s%d", joiner, f->name, power);
}

int
sky_unit_normalise (const char *text, char *out, size_t size)
{
  UnitFactor f[SKY_MAX_FACTORS];
  int n = 0, nnum = 0, nden = 0;

  out[0] = '\0';
  if (text == NULL || text[strspn (text, " ")] == '\0')
    return 1;
  if (!parse_unit (text, f, &n))
    return 0;
  for (int i = 0; i < n; i++)
    nnum += f[i].power > 0, nden += f[i].power < 0;
  if (nnum + nden == 0)
    return 0; /* the powers cancel: a ratio, not a unit */
  for (int i = 0; i < n; i++)
    if (f[i].power > 0)
      append_factor (out, size, &f[i], f[i].power, out[0] ? "." : "");
  if (nnum == 0)
    {
      for (int i = 0; i < n; i++)
        if (f[i].power < 0)
          append_factor (out, size, &f[i], f[i].power, out[0] ? "." : "");
      return 1;
    }
  if (nden > 1)
    strncat (out, "/(", size - strlen (out) - 1);
  for (int i = 0, k = 0; i < n; i++)
    if (f[i].power < 0)
      append_factor (out, size, &f[i], -f[i].power, k++ ? "." : nden > 1 ? "" : "/");
  if (nden > 1)
    strncat (out, ")", size - strlen (out) - 1);
  return strlen (out) < size - 1;
}
