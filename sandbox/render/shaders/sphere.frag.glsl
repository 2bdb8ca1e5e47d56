#version 330 core
// Ray-traced sphere (ray-sphere intersection, e.g. Ericson 2004, §5.3.2) with exact depth and smooth
// normals. Alpha is the pixel's coverage of the silhouette, turned into MSAA samples by
// alpha-to-coverage, so that the edge is anti-aliased like a mesh's.

in vec3 v_world;
flat in vec3 v_center;
flat in float v_radius;
flat in vec3 v_color;
flat in int v_flags;

uniform mat4 u_view_proj;
uniform float u_px_per_rad;

out vec4 f_color;

void main() {
    vec3 d = normalize(v_world - u_eye);
    vec3 m = u_eye - v_center;
    float b = dot(m, d);
    float miss2 = dot(m, m) - b * b;                      // squared distance of the ray from the centre
    float r2 = v_radius * v_radius;
    float dist_px = (v_radius - sqrt(miss2)) * u_px_per_rad / max(-b, 1e-4);
    float coverage = clamp(dist_px + 0.5, 0.0, 1.0);
    if (coverage <= 0.0) discard;
    float t = -b - sqrt(max(r2 - miss2, 0.0));
    vec3 p = u_eye + t * d;
    vec3 n = normalize(p - v_center);
    vec4 clip = u_view_proj * vec4(p, 1.0);
    gl_FragDepth = 0.5 * clip.z / clip.w + 0.5;
    f_color = vec4(shade_body(v_color, v_flags, n, p).rgb, coverage);
}
