#version 330 core
// The ground plane: the same grid, lighting and shadows as static bodies' top faces, so that a ground
// box and the plane around it join without a seam.

in vec3 v_world;

uniform vec3 u_ground_color;

out vec4 f_color;

void main() {
    vec3 n = vec3(0.0, 1.0, 0.0);
    vec3 p = vec3(v_world.x, 0.0, v_world.z);
    vec3 albedo = grid_albedo(srgb_to_linear(u_ground_color), p.xz, vec2(1.0, 0.0));
    f_color = finish(shade(albedo, n, p, shadow_factor(p, n), 0.08), v_world);
}
