#version 330 core
// Sphere impostors: one quad per sphere, ray-traced in sphere.frag. In the main pass the quad faces
// the eye and is just large enough to hold the sphere's perspective silhouette; in the shadow pass
// (u_shadow_pass = 1) it faces the sun and is the sphere's orthographic silhouette.

in vec2 in_corner;
in vec3 i_pos;
in vec4 i_scale;
in vec3 i_color;
in float i_flags;

uniform mat4 u_view_proj;
uniform mat4 u_light_vp;
uniform vec3 u_eye;
uniform vec3 u_light_dir;
uniform float u_shadow_pass;

out vec3 v_world;
out vec2 v_corner;
flat out vec3 v_center;
flat out float v_radius;
flat out vec3 v_color;
flat out int v_flags;

void main() {
    float r = i_scale.x;
    vec3 axis = u_shadow_pass > 0.5 ? u_light_dir : normalize(u_eye - i_pos);
    vec3 right = normalize(cross(abs(axis.y) < 0.99 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0), axis));
    vec3 up = cross(axis, right);
    float size = r;
    if (u_shadow_pass < 0.5) {
        // the cone from the eye touching the sphere cuts the quad's plane in a circle of this radius
        float d = max(distance(u_eye, i_pos), r * 1.0001);
        size = r * d / sqrt(d * d - r * r) * 1.05;
    }
    v_world = i_pos + (right * in_corner.x + up * in_corner.y) * size;
    v_corner = in_corner * size / r;
    v_center = i_pos;
    v_radius = r;
    v_color = i_color;
    v_flags = int(i_flags + 0.5);
    gl_Position = (u_shadow_pass > 0.5 ? u_light_vp : u_view_proj) * vec4(v_world, 1.0);
}
