#version 330 core
// Debug lines (GL_LINES, the width set per draw): world endpoints with an RGBA colour.

in vec3 in_pos;
in vec4 in_color;

uniform mat4 u_view_proj;

out vec4 v_color;

void main() {
    v_color = in_color;
    gl_Position = u_view_proj * vec4(in_pos, 1.0);
    // pulled towards the eye a little, so that marks lying on a surface are not half hidden by it
    gl_Position.z -= 4e-4 * gl_Position.w;
}
