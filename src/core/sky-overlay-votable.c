/* SPDX-License-Identifier: GPL-3.0-or-later */
/* VOTable catalogues (TABLEDATA serialisation) through libxml2: the first
 * TABLE's FIELDs name the columns, its TRs hold the rows. Where no column
 * name is one sky_overlay_pick_columns knows, the UCDs say which columns
 * are the position (pos.eq.ra / pos.eq.dec, pos.galactic.lon / lat), as
 * TOPCAT reads them. */
#include "sky-overlay-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define MAX_FIELDS 4096

static int
is_element (const xmlNode *node, const char *name)
{
  return node->type == XML_ELEMENT_NODE && strcmp ((const char *) node->name, name) == 0;
}

static xmlNode *
find_element (xmlNode *node, const char *name)
{
  for (; node; node = node->next)
    {
      xmlNode *found;
      if (is_element (node, name))
        return node;
      if (node->type == XML_ELEMENT_NODE && (found = find_element (node->children, name)))
        return found;
    }
  return NULL;
}

static int
ucd_is (const char *ucd, const char *want)
{
  size_t len = strlen (want);
  return ucd != NULL && strncmp (ucd, want, len) == 0 && (ucd[len] == '\0' || ucd[len] == ';');
}

/* Silences libxml2's own printing: the message goes to sky_last_error. */
static void
quiet (void *ctx, const char *msg, ...)
{
  (void) ctx;
  (void) msg;
}

int
sky_overlay_parse_votable (const char *name, const char *text, size_t size, int prefer_sky,
                           SkyOverlay *out)
{
  xmlDoc *doc;
  xmlNode *table, *data;
  char *names[MAX_FIELDS], *units[MAX_FIELDS], *ucds[MAX_FIELDS];
  int nfields = 0, status = SKY_OK;
  int64_t row = 0;
  SkyColumnPick pick;

  if (size > (size_t) INT32_MAX)
    return sky_fail (SKY_ERR_SIZE, "%s: too big for an XML document", name);
  xmlSetGenericErrorFunc (NULL, quiet);
  doc = xmlReadMemory (text, (int) size, name, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR
                       | XML_PARSE_NOWARNING);
  if (doc == NULL)
    {
      const xmlError *e = xmlGetLastError ();
      char why[200];
      snprintf (why, sizeof why, "%s", e && e->message ? e->message : "parse error");
      why[strcspn (why, "\n")] = '\0';
      return sky_fail (SKY_ERR_FORMAT, "%s: not well-formed XML (line %d: %s)", name,
                       e ? e->line : 0, why);
    }
  table = find_element (xmlDocGetRootElement (doc), "TABLE");
  if (!is_element (xmlDocGetRootElement (doc), "VOTABLE") || table == NULL)
    {
      xmlFreeDoc (doc);
      return sky_fail (SKY_ERR_FORMAT, "%s: XML, but not a VOTable with a TABLE", name);
    }
  for (xmlNode *n = table->children; n; n = n->next)
    if (is_element (n, "FIELD") && nfields < MAX_FIELDS)
      {
        names[nfields] = (char *) xmlGetProp (n, (const xmlChar *) "name");
        units[nfields] = (char *) xmlGetProp (n, (const xmlChar *) "unit");
        ucds[nfields] = (char *) xmlGetProp (n, (const xmlChar *) "ucd");
        nfields++;
      }
  status = sky_overlay_pick_columns (name, (const char *const *) names,
                                     (const char *const *) units, nfields, prefer_sky, &pick,
                                     out);
  if (status != SKY_OK)
    {
      /* By UCD: the main position first, then any. */
      const char *want[2][2] = { { "pos.eq.ra", "pos.eq.dec" },
                                 { "pos.galactic.lon", "pos.galactic.lat" } };
      const char *as[2][2] = { { "ra", "dec" }, { "glon", "glat" } };
      int renamed = 0;
      for (int s = 0; s < 2 && !renamed; s++)
        {
          int xi = -1, yi = -1;
          for (int i = 0; i < nfields; i++)
            {
              if (xi < 0 && ucd_is (ucds[i], want[s][0]))
                xi = i;
              if (yi < 0 && ucd_is (ucds[i], want[s][1]))
                yi = i;
            }
          if (xi >= 0 && yi >= 0)
            {
              xmlFree (names[xi]);
              xmlFree (names[yi]);
              names[xi] = (char *) xmlStrdup ((const xmlChar *) as[s][0]);
              names[yi] = (char *) xmlStrdup ((const xmlChar *) as[s][1]);
              renamed = 1;
            }
        }
      if (renamed)
        status = sky_overlay_pick_columns (name, (const char *const *) names,
                                           (const char *const *) units, nfields, prefer_sky,
                                           &pick, out);
    }
  if (status != SKY_OK)
    goto exit;
  data = find_element (table->children, "DATA");
  if (data != NULL && find_element (data->children, "TABLEDATA") == NULL)
    {
      status = sky_fail (SKY_ERR_FORMAT, "%s: the table is serialised as BINARY, BINARY2 or "
                         "FITS; only TABLEDATA is read (TOPCAT or astropy can convert it)",
                         name);
      goto exit;
    }
  if (data == NULL)
    goto exit;   /* a table with no rows */
  for (xmlNode *tr = find_element (data->children, "TABLEDATA")->children; tr; tr = tr->next)
    {
      xmlChar *cells[2] = { NULL, NULL };
      int col = 0;
      if (!is_element (tr, "TR"))
        continue;
      row++;
      for (xmlNode *td = tr->children; td; td = td->next)
        if (is_element (td, "TD"))
          {
            if (col == pick.x)
              cells[0] = xmlNodeGetContent (td);
            if (col == pick.y)
              cells[1] = xmlNodeGetContent (td);
            col++;
          }
      if (cells[0] == NULL || cells[1] == NULL)
        status = sky_fail (SKY_ERR_FORMAT, "%s: row %lld has %d cells, too few for columns "
                           "%s and %s", name, (long long) row, col, out->x_column,
                           out->y_column);
      else
        status = sky_overlay_add_row (out, &pick, (const char *) cells[0],
                                      (const char *) cells[1], name, xmlGetLineNo (tr));
      xmlFree (cells[0]);
      xmlFree (cells[1]);
      if (status != SKY_OK)
        goto exit;
    }
exit:
  for (int i = 0; i < nfields; i++)
    {
      xmlFree (names[i]);
      xmlFree (units[i]);
      xmlFree (ucds[i]);
    }
  xmlFreeDoc (doc);
  return status;
}
