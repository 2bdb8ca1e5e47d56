#version 330 core
// Wire boxes, instanced (GL_LINES, 24 vertices per box): each vertex is one end of one of the 12
// edges, given as which corner of the box it is (0 or 1 per axis: min or max); the box per instance
// is its min and max corners and an RGBA colour. One instance of 10 floats replaces 24 vertices.

in vec3 in_corner;
in vec3 i_a;      // min corner
in vec3 i_b;      // max corner
in vec4 i_color;

uniform mat4 u_view_proj;

out vec4 v_color;

void main() {
    v_color = i_color;
    gl_Position = u_view_proj * vec4(mix(i_a, i_b, in_corner), 1.0);
    // pulled towards the eye a little, like the other debug lines
    gl_Position.z -= 4e-4 * gl_Position.w;
}
