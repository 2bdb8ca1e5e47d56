#version 330 core
// A full-screen triangle; the fragment shader turns each pixel into a view direction.

uniform mat4 u_inv_view_proj;

out vec3 v_dir;

void main() {
    vec2 ndc = vec2(float((gl_VertexID & 1) * 4 - 1), float((gl_VertexID >> 1) * 4 - 1));
    vec4 far_point = u_inv_view_proj * vec4(ndc, 1.0, 1.0);
    vec4 near_point = u_inv_view_proj * vec4(ndc, -1.0, 1.0);
    v_dir = far_point.xyz / far_point.w - near_point.xyz / near_point.w;
    gl_Position = vec4(ndc, 0.999999, 1.0);
}
