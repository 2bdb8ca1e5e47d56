#version 330 core
// A sphere in the shadow map: its disc, at the depth of its centre.

in vec2 v_corner;

void main() {
    if (dot(v_corner, v_corner) > 1.0) discard;
}
