#version 330 core
// A disc with a dark rim and an anti-aliased edge.

in vec4 v_color;
in float v_size;

uniform float u_alpha;

out vec4 f_color;

void main() {
    float r = length(gl_PointCoord - 0.5) * v_size;     // pixels from the centre
    float outer = 0.5 * v_size - 1.0;
    float coverage = clamp(outer + 0.5 - r, 0.0, 1.0);
    if (coverage <= 0.0) discard;
    vec3 c = mix(v_color.rgb, v_color.rgb * 0.25, smoothstep(outer - 2.0, outer - 1.0, r));
    f_color = vec4(c, v_color.a * coverage * u_alpha);
}
