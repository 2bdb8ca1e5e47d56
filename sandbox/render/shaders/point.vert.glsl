#version 330 core
// Debug points: round sprites of a fixed size in pixels.

in vec3 in_pos;
in vec4 in_color;
in float in_size;

uniform mat4 u_view_proj;

out vec4 v_color;
out float v_size;

void main() {
    v_color = in_color;
    v_size = in_size + 2.0;
    gl_PointSize = v_size;
    gl_Position = u_view_proj * vec4(in_pos, 1.0);
    // pulled towards the eye a little, so that marks lying on a surface are not half hidden by it
    gl_Position.z -= 4e-4 * gl_Position.w;
}
