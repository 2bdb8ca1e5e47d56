#version 330 core
// Lit mesh bodies (boxes, capsules, hulls); shade_body() in common.glsl does the work.

in vec3 v_world;
in vec3 v_normal;
in vec3 v_color;
flat in int v_flags;

out vec4 f_color;

void main() {
    f_color = shade_body(v_color, v_flags, normalize(v_normal), v_world);
}
