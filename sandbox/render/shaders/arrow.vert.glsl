#version 330 core
// Arrows, instanced (GL_LINES, 6 vertices per arrow: the shaft and a two-stroke head). Per instance:
// the origin, the vector (the arrow is origin → origin + vector) and an RGBA colour. The head is
// 0.3 of the length, clamped to [0.02, 0.25] m, drawn in the plane through the shaft that faces the
// eye so that it is always visible. in_code: 0 origin, 1 tip, 2 and 3 the ends of the head strokes.
// A zero vector gives no arrow (its vertices are put outside the clip volume).

in float in_code;
in vec3 i_a;      // origin
in vec3 i_b;      // vector
in vec4 i_color;

uniform mat4 u_view_proj;
uniform vec3 u_eye;

out vec4 v_color;

void main() {
    v_color = i_color;
    float len = length(i_b);
    if (len < 1e-6) {
        gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
        return;
    }
    vec3 d = i_b / len;
    vec3 tip = i_a + i_b;
    vec3 side = cross(d, u_eye - tip);
    if (dot(side, side) < 1e-12) {
        // looking straight along the arrow: any perpendicular will do
        side = cross(d, abs(d.y) < 0.9 ? vec3(0.0, 1.0, 0.0) : vec3(1.0, 0.0, 0.0));
    }
    float head = clamp(0.3 * len, 0.02, 0.25);
    vec3 back = tip - d * head;
    vec3 half_width = normalize(side) * 0.5 * head;
    int code = int(in_code + 0.5);
    vec3 p = code == 0 ? i_a : code == 1 ? tip : code == 2 ? back + half_width : back - half_width;
    gl_Position = u_view_proj * vec4(p, 1.0);
    gl_Position.z -= 4e-4 * gl_Position.w;
}
