#version 330 core
// Drawn last, at the far plane, only where nothing else was: a vertical gradient from the horizon colour to the zenith colour, with a soft glow around the sun.

in vec3 v_dir;

uniform vec3 u_sky_zenith;
uniform vec3 u_sky_horizon;
uniform vec3 u_light_dir;

out vec4 f_color;

void main() {
    vec3 d = normalize(v_dir);
    vec3 c = mix(u_sky_horizon, u_sky_zenith, sqrt(clamp(d.y, 0.0, 1.0)));
    float sun = max(dot(d, u_light_dir), 0.0);
    sun *= sun; sun *= sun; sun *= sun; sun *= sun; sun *= sun; sun *= sun;
    c += vec3(1.0, 0.9, 0.7) * sun * 0.35;
    c = c / (1.0 + 0.15 * c);
    f_color = vec4(sqrt(c), 1.0);
}
