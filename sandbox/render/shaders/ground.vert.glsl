#version 330 core
// A large horizontal quad (corners given in xz about u_offset) at height u_height.

in vec2 in_xz;

uniform mat4 u_view_proj;
uniform float u_height;
uniform vec2 u_offset;

out vec3 v_world;

void main() {
    v_world = vec3(in_xz.x + u_offset.x, u_height, in_xz.y + u_offset.y);
    gl_Position = u_view_proj * vec4(v_world, 1.0);
}
