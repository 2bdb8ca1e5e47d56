// Shared by mesh.frag and ground.frag (the renderer inserts this file after their #version line).
// Lighting is computed in linear RGB and encoded once, in finish(). pow() is avoided on purpose: it is
// the slowest instruction on software rasterisers (Mesa llvmpipe), so gamma is 2 (square / square root)
// and the specular lobe uses repeated squaring.

uniform vec3 u_eye;
uniform vec3 u_light_dir;          // unit vector towards the sun
uniform mat4 u_light_vp;           // world -> light clip space of the shadow map
uniform sampler2DShadow u_shadow_map;
uniform float u_shadows;           // 1: shadows on
uniform float u_shadow_texel;      // world size of one shadow-map texel
uniform float u_shadow_bias;       // depth bias, in the shadow map's normalised depth
uniform float u_grid;              // 1: draw the grid on the ground and on static bodies
uniform vec3 u_sky_zenith;
uniform vec3 u_sky_horizon;
uniform float u_fog_density;

const vec3 SUN = vec3(1.0, 0.95, 0.88) * 2.2;
const vec3 GROUND_BOUNCE = vec3(0.30, 0.27, 0.24);

// Percentage-closer filtering (Reeves et al. 1987): 9 hardware-filtered depth comparisons on a
// 3x3 grid, each itself a bilinear blend of 4 texels, so the penumbra is smooth. The receiver is moved
// along its normal by a texel ("normal offset") so that lit surfaces do not shadow themselves.
float shadow_factor(vec3 p, vec3 n) {
    if (u_shadows < 0.5) return 1.0;
    float ndl = dot(n, u_light_dir);
    vec3 q = p + n * u_shadow_texel * (1.5 + 2.0 * (1.0 - abs(ndl)));
    vec4 lp = u_light_vp * vec4(q, 1.0);
    vec3 s = lp.xyz / lp.w * 0.5 + 0.5;
    if (s.x <= 0.0 || s.x >= 1.0 || s.y <= 0.0 || s.y >= 1.0 || s.z >= 1.0) return 1.0;
    vec2 texel = 1.0 / vec2(textureSize(u_shadow_map, 0));
    float sum = 0.0;
    for (int i = -1; i <= 1; ++i) {
        for (int j = -1; j <= 1; ++j) {
            vec2 o = vec2(float(i), float(j)) * texel * 1.5;
            sum += texture(u_shadow_map, vec3(s.xy + o, s.z - u_shadow_bias));
        }
    }
    return sum / 9.0;
}

// Anti-aliased grid lines: distance to the nearest line in screen pixels via fwidth, so lines stay
// one pixel wide at any distance, and fade out before they get denser than the pixels (no moire).
float grid_line(vec2 coord, float spacing, float width_px) {
    vec2 c = coord / spacing;
    vec2 d = max(fwidth(c), vec2(1e-6));
    vec2 g = abs(fract(c - 0.5) - 0.5) / d;
    float line = 1.0 - clamp(min(g.x, g.y) - 0.5 * width_px + 0.5, 0.0, 1.0);
    return line * (1.0 - smoothstep(0.15, 0.45, max(d.x, d.y)));
}

// The ground's look at a point: a light tile with 1 m lines, 10 m major lines and the x (red) and
// z (blue) axes; `uv` are the two world coordinates in the surface's plane.
vec3 grid_albedo(vec3 base, vec2 uv, vec2 axis_uv_is_xz) {
    if (u_grid < 0.5) return base;
    float minor = grid_line(uv, 1.0, 1.0);
    float major = grid_line(uv, 10.0, 1.6);
    vec3 c = mix(base, base * 0.72, minor * 0.55);
    c = mix(c, base * 0.50, major * 0.75);
    if (axis_uv_is_xz.x > 0.5) {
        vec2 a = abs(uv) / max(fwidth(uv), vec2(1e-6));
        float x_axis = 1.0 - clamp(a.y - 0.9, 0.0, 1.0);   // the line z = 0 is the x axis
        float z_axis = 1.0 - clamp(a.x - 0.9, 0.0, 1.0);
        c = mix(c, vec3(0.55, 0.06, 0.05), x_axis * 0.8);
        c = mix(c, vec3(0.05, 0.12, 0.55), z_axis * 0.8);
    }
    return c;
}

// x^64 by six squarings.
float pow64(float x) {
    x *= x; x *= x; x *= x; x *= x; x *= x; return x * x;
}

// Blinn-Phong (exponent 64, normalised) with a hemisphere ambient (sky above, ground bounce below)
// and a Schlick-like rim.
vec3 shade(vec3 albedo, vec3 n, vec3 p, float shadow, float spec_strength) {
    vec3 v = normalize(u_eye - p);
    float ndl = max(dot(n, u_light_dir), 0.0);
    vec3 h = normalize(u_light_dir + v);
    float spec = pow64(max(dot(n, h), 0.0)) * spec_strength * 3.0;
    vec3 ambient = mix(GROUND_BOUNCE, u_sky_zenith * 1.1, 0.5 + 0.5 * n.y);
    float rim = 1.0 - max(dot(n, v), 0.0);
    rim *= rim;
    rim *= rim;
    return albedo * (ambient * 0.55 + SUN * ndl * shadow) + SUN * spec * ndl * shadow
           + u_sky_horizon * rim * 0.12;
}

vec3 srgb_to_linear(vec3 c) { return c * c; }

// Fog towards the horizon colour, then a gentle filmic curve and the sRGB encoding.
vec4 finish(vec3 color, vec3 p) {
    float dist = length(p - u_eye);
    float f = dist * u_fog_density;
    color = mix(color, u_sky_horizon, 1.0 - exp(-f * f));
    color = color / (1.0 + 0.15 * color);
    return vec4(sqrt(color), 1.0);
}

// A body's final colour at world point p with unit normal n. Flags: 1 hovered, 2 selected,
// 4 grabbed, 8 asleep, 16 static (static bodies carry the ground's grid, projected along the
// face's dominant axis).
vec4 shade_body(vec3 srgb, int flags, vec3 n, vec3 p) {
    vec3 albedo = srgb_to_linear(srgb);
    float spec = 0.35;
    if ((flags & 16) != 0) {
        vec3 a = abs(n);
        bool up = a.y >= a.x && a.y >= a.z;
        vec2 uv = up ? p.xz : (a.x >= a.z ? p.zy : p.xy);
        albedo = grid_albedo(albedo, uv, vec2(up ? 1.0 : 0.0, 0.0));
        spec = 0.08;
    }
    if ((flags & 8) != 0) {
        float grey = dot(albedo, vec3(0.2126, 0.7152, 0.0722));
        // muted, not grey: a settled pile should still read as coloured bodies
        albedo = mix(albedo, vec3(grey), 0.45) * 0.75;
    }
    if ((flags & 2) != 0) albedo = mix(albedo, vec3(1.0, 0.55, 0.08), 0.30);
    if ((flags & 4) != 0) albedo = mix(albedo, vec3(0.10, 0.75, 1.0), 0.45);
    vec3 color = shade(albedo, n, p, shadow_factor(p, n), spec);
    if ((flags & 1) != 0) {
        float rim = 1.0 - max(dot(n, normalize(u_eye - p)), 0.0);
        rim *= rim;
        color = color * 1.25 + vec3(0.9, 0.9, 1.0) * rim * 0.6;
    }
    return finish(color, p);
}
