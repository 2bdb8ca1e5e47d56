#version 330 core
// Resolve the multisample colour buffer by averaging its samples. A draw rather than a framebuffer
// blit: software rasterisers run blits on the calling thread and make it wait for the whole frame.

uniform sampler2DMS u_color;
uniform int u_samples;

out vec4 f_color;

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    vec4 sum = vec4(0.0);
    for (int i = 0; i < u_samples; ++i) sum += texelFetch(u_color, p, i);
    f_color = sum / float(u_samples);
}
