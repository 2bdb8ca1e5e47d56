#version 330 core
// The outline pass: the grown shape's back faces in one flat colour (selected / grabbed).

uniform vec4 u_outline_color;
out vec4 f_color;

void main() {
    f_color = u_outline_color;
}
