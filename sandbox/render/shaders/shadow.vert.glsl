#version 330 core
// Bodies into the shadow map: the same instancing as mesh.vert, depth only.

in vec3 in_pos;
in float in_side;
in vec3 i_pos;
in vec4 i_quat;
in vec4 i_scale;

uniform mat4 u_light_vp;

vec3 quat_rotate(vec4 q, vec3 v) {
    vec3 t = 2.0 * cross(q.xyz, v);
    return v + q.w * t + cross(q.xyz, t);
}

void main() {
    vec3 local = in_pos * i_scale.xyz + vec3(0.0, in_side * i_scale.w, 0.0);
    gl_Position = u_light_vp * vec4(i_pos + quat_rotate(i_quat, local), 1.0);
}
