// One triangle that covers the view; the fragment shader does the rest.
// The #version line (GL 3.3 core or GLES 3.0) is prepended at run time.
void main ()
{
  vec2 p = vec2 (float ((gl_VertexID << 1) & 2), float (gl_VertexID & 2));
  gl_Position = vec4 (p * 2.0 - 1.0, 0.0, 1.0);
}
