// The image view: limits, stretch and colour map of the float image, with the
// pipeline's mask, labels and outlines on top. Everything the user can change
// is a uniform, so changing it costs one redraw and no upload.
// The #version line and precisions are prepended at run time.
// Keep the stretches in step with src/ui/sky-colormap.c.

uniform sampler2D u_image;    // R32F, mean pyramid as mipmap levels
uniform sampler2D u_cmap;     // 256 x 1 RGBA8
uniform sampler2D u_eq;       // 4096 x 1 R32F, histogram equalisation
uniform usampler2D u_mask;    // R8UI, the segment step's mask
uniform isampler2D u_labels;  // R32I, the label step's labels
#if OVERLAY_BUFFERS
// Desktop OpenGL: the mask and labels in buffer objects, row after row, so
// that CUDA fills them with a plain linear copy (see docs/ui.md); the 2D
// textures above serve images larger than a buffer texture may be.
uniform usamplerBuffer u_mask_buf;
uniform isamplerBuffer u_labels_buf;
uniform bool u_buffers;
#endif

uniform vec2 u_center;        // image coordinates at the view's centre
uniform vec2 u_half;          // half the view in framebuffer pixels
uniform float u_fb_zoom;      // framebuffer pixels per image pixel
uniform float u_flip;         // -1.0 mirrors left-right
uniform ivec2 u_size;         // image size in pixels
uniform int u_lod;            // pyramid level to sample
uniform int u_base_lod;       // pyramid level held in the texture's level 0
uniform float u_lo;
uniform float u_hi;
uniform int u_stretch;        // 0 linear, 1 log, 2 sqrt, 3 asinh, 4 histeq
uniform int u_overlay;        // 1 mask, 2 label tint, 4 outlines
uniform int u_selected;       // label drawn brighter, 0 for none
uniform float u_reach;        // zoomed out: half a screen pixel in image pixels
                              // (at most 4), the footprint searched for sources
uniform vec3 u_background;
uniform vec3 u_blank;

out vec4 frag_color;

float
stretch (float v)
{
  v = clamp (v, 0.0, 1.0);
  if (u_stretch == 1)
    return log (1.0 + 1000.0 * v) / log (1001.0);
  if (u_stretch == 2)
    return sqrt (v);
  if (u_stretch == 3)
    return asinh (10.0 * v) / asinh (10.0);
  if (u_stretch == 4)
    {
      float p = v * 4095.0;
      int i = int (p);
      float a = texelFetch (u_eq, ivec2 (i, 0), 0).r;
      float b = texelFetch (u_eq, ivec2 (min (i + 1, 4095), 0), 0).r;
      return mix (a, b, p - float (i));
    }
  return v;
}

uint
mask_texel (ivec2 q)
{
#if OVERLAY_BUFFERS
  if (u_buffers)
    return texelFetch (u_mask_buf, q.y * u_size.x + q.x).r;
#endif
  return texelFetch (u_mask, q, 0).r;
}

int
label_texel (ivec2 q)
{
#if OVERLAY_BUFFERS
  if (u_buffers)
    return texelFetch (u_labels_buf, q.y * u_size.x + q.x).r;
#endif
  return texelFetch (u_labels, q, 0).r;
}

// Neighbouring labels get far-apart hues (golden ratio steps).
vec3
label_colour (int l)
{
  float h = fract (float (l) * 0.618033988749895);
  vec3 k = clamp (abs (mod (h * 6.0 + vec3 (0.0, 4.0, 2.0), 6.0) - 3.0) - 1.0, 0.0, 1.0);
  return mix (vec3 (1.0), k, 0.9);
}

int
label_at (ivec2 q)
{
  if (q.x < 0 || q.y < 0 || q.x >= u_size.x || q.y >= u_size.y)
    return 0;
  return label_texel (q);
}

void
main ()
{
  vec2 d = gl_FragCoord.xy - u_half;
  vec2 p = u_center + vec2 (d.x * u_flip, d.y) / u_fb_zoom;

  if (p.x < 0.0 || p.y < 0.0 || p.x >= float (u_size.x) || p.y >= float (u_size.y))
    {
      frag_color = vec4 (u_background, 1.0);
      return;
    }

  ivec2 ip = ivec2 (floor (p));
  int lod = max (u_lod, u_base_lod);
  ivec2 lsize = max (u_size >> lod, ivec2 (1));
  float x = texelFetch (u_image, min (ip >> lod, lsize - 1), lod - u_base_lod).r;
  vec3 c;
  if (isnan (x))
    c = u_blank;
  else
    {
      float s = stretch ((x - u_lo) / (u_hi - u_lo));
      c = texelFetch (u_cmap, ivec2 (int (s * 255.0 + 0.5), 0), 0).rgb;
    }

  // Zoomed out, a screen pixel covers several image pixels: show a source
  // where any of them is one, so that small sources stay in the overview.
  bool masked = false;
  int l = 0;
  if (u_reach > 0.0 && (u_overlay & 3) != 0)
    {
      ivec2 a = max (ivec2 (floor (p - u_reach)), ivec2 (0));
      ivec2 b = min (ivec2 (floor (p + u_reach)), u_size - 1);
      for (int y = a.y; y <= b.y; y++)
        for (int x = a.x; x <= b.x; x++)
          {
            if ((u_overlay & 1) != 0 && mask_texel (ivec2 (x, y)) != 0u)
              masked = true;
            if ((u_overlay & 2) != 0)
              {
                int q = label_texel (ivec2 (x, y));
                if (l != u_selected)
                  l = q == u_selected ? q : max (l, q);
              }
          }
    }
  else
    {
      if ((u_overlay & 1) != 0)
        masked = mask_texel (ip) != 0u;
      if ((u_overlay & 6) != 0)
        l = label_texel (ip);
    }

  if (masked)
    c = mix (c, vec3 (0.0, 0.75, 1.0), 0.5);

  if ((u_overlay & 6) != 0)
    {
      if (l > 0)
        {
          if ((u_overlay & 2) != 0)
            c = mix (c, label_colour (l), l == u_selected ? 0.8 : 0.55);
          if ((u_overlay & 4) != 0)
            {
              // A line 1.5 framebuffer pixels wide inside the source's edge.
              vec2 f = p - vec2 (ip);
              float w = 1.5 / u_fb_zoom;
              bool edge = (f.x < w && label_at (ip + ivec2 (-1, 0)) != l)
                          || (f.x > 1.0 - w && label_at (ip + ivec2 (1, 0)) != l)
                          || (f.y < w && label_at (ip + ivec2 (0, -1)) != l)
                          || (f.y > 1.0 - w && label_at (ip + ivec2 (0, 1)) != l);
              if (edge)
                c = l == u_selected ? vec3 (1.0, 0.15, 0.1) : vec3 (1.0, 0.8, 0.0);
            }
        }
    }
  frag_color = vec4 (c, 1.0);
}
