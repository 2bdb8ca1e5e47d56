#version 330 core
// Instanced bodies: per-vertex in_pos/in_normal/in_side (see meshes.py), per-instance pose, scale,
// colour and state flags.

in vec3 in_pos;
in vec3 in_normal;
in float in_side;
in vec3 i_pos;
in vec4 i_quat;
in vec4 i_scale;
in vec3 i_color;
in float i_flags;

uniform mat4 u_view_proj;
uniform vec3 u_eye;
uniform float u_grow_px;       // > 0 for the outline pass: grow the shape by this many pixels
uniform float u_px_per_rad;    // viewport height / (2 tan(fov_y / 2))
uniform float u_hull;          // 1 for hull meshes (no scale; grown along the vertex direction)

out vec3 v_world;
out vec3 v_normal;
out vec3 v_color;
flat out int v_flags;

vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

void main() {
    vec3 local = in_pos * i_scale.xyz + vec3(0.0, in_side * i_scale.w, 0.0);
    if (u_grow_px > 0.0) {
        float grow = u_grow_px * distance(u_eye, i_pos) / u_px_per_rad;
        // boxes, spheres and capsules grow by the same width everywhere by enlarging their scale
        local = u_hull > 0.5 ? in_pos + grow * normalize(in_pos)
                             : in_pos * (i_scale.xyz + grow) + vec3(0.0, in_side * i_scale.w, 0.0);
    }
    v_world = i_pos + quat_rotate(i_quat, local);
    v_normal = quat_rotate(i_quat, normalize(in_normal / i_scale.xyz));
    v_color = i_color;
    v_flags = int(i_flags + 0.5);
    gl_Position = u_view_proj * vec4(v_world, 1.0);
}
