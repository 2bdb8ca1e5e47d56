"""The command line: ``sandbox [--scene NAME_OR_FILE] [--frames N --screenshot PATH] [--width W --height H]
[--debug-draw LIST] [--lang CODE]``; ``sandbox run ...`` for headless runs (``headless.py``) and
``sandbox warmup`` to compile the physics kernels ahead of the first launch (``warmup.py``).

Arguments are checked before any window opens; a bad one prints a message and exits with status 2
(argparse's convention). So does a machine without a display: one line that says how to run headless.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from .cli_args import positive_int
from .i18n import LANGUAGES, parse_language, set_language
from .scene_file import SceneFileError
from .scenes import DEFAULT_SCENE, SCENE_NAMES
from .session import resolve_scene

DEBUG_DRAW = ("contacts", "normals", "aabbs", "broadphase", "velocities")
"""The names ``--debug-draw`` accepts: the panel's Debug draw toggles (``RenderOptions`` fields)."""
MAX_WINDOW_SIDE = 8192
"""The largest window side accepted (pixels): an 8K display is 7680 wide, and the renderer's 4x MSAA,
depth and shadow buffers at this size already take gigabytes (GL implementations commonly stop at
16384 per texture side)."""
NO_DISPLAY_HINT = "to run without a screen, use a virtual one: xvfb-run -a ./run-app ..."


def _window_side(text: str) -> int:
    value = positive_int(text)
    if value > MAX_WINDOW_SIDE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WINDOW_SIDE} pixels, got {value}")
    return value


def _debug_draw(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    bad = [name for name in names if name not in DEBUG_DRAW]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"expected names from {', '.join(DEBUG_DRAW)}, got {text!r}")
    return names


def _language(text: str) -> str:
    try:
        return parse_language(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(LANGUAGES)}, got {text!r}") from None


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad argument is one line on stderr (the message and where to find the usage)
    rather than the whole usage block and the message under it."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``sandbox`` command."""
    parser = _Parser(
        prog="sandbox",
        description="An interactive 3D rigid-body physics sandbox.",
        epilog=f"scenes: {', '.join(n.replace(' ', '-') for n in SCENE_NAMES)}. Press the Help header in the "
               "panel for the controls.")
    parser.add_argument("--scene", default=DEFAULT_SCENE, metavar="NAME_OR_FILE",
                        help=f"a built-in scene name or a JSON scene file (default: {DEFAULT_SCENE})")
    parser.add_argument("--frames", type=positive_int, metavar="N",
                        help="draw N frames (one physics step each), then exit")
    parser.add_argument("--screenshot", metavar="PATH",
                        help="with --frames: save the last frame, panel included, as a PNG")
    parser.add_argument("--width", type=_window_side, default=1280, metavar="W",
                        help=f"window width (1280; at most {MAX_WINDOW_SIDE})")
    parser.add_argument("--height", type=_window_side, default=720, metavar="H",
                        help=f"window height (720; at most {MAX_WINDOW_SIDE})")
    parser.add_argument("--debug-draw", type=_debug_draw, default=(), metavar="LIST",
                        help=f"debug drawing to start with, comma-separated: {','.join(DEBUG_DRAW)}")
    parser.add_argument("--lang", type=_language, default=None, metavar="CODE",
                        help=f"the app's language: {', '.join(LANGUAGES)} (default: the SANDBOX_LANG "
                             "variable, then the system locale; the panel's Language box switches it live)")
    return parser


def _check_screenshot(parser: argparse.ArgumentParser, path: str) -> None:
    p = Path(path)
    if p.suffix.lower() != ".png":
        parser.error(f"--screenshot must name a .png file, got {path!r}")
    if p.is_dir():
        parser.error(f"--screenshot {path!r} is a directory")
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        parser.error(f"--screenshot: folder {str(folder)!r} does not exist")
    existed = p.exists()
    try:
        with open(p, "ab"):
            pass
    except OSError as exc:
        parser.error(f"--screenshot: cannot write {path!r}: {exc.strerror or exc}")
    if not existed:
        p.unlink()


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, object]:
    """Parse and check ``argv``; returns the arguments and the scene (a built-in scene's name, or the
    ``SceneFile`` of a file). Exits with status 2 and a message on any bad argument."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.screenshot is not None:
        if args.frames is None:
            parser.error("--screenshot needs --frames N (which frame to capture)")
        _check_screenshot(parser, args.screenshot)
    try:
        name, scene = resolve_scene(args.scene)  # a built-in name (hyphens or spaces) or a file, read now
    except SceneFileError as exc:
        parser.error(f"bad scene file: {exc}")
    except ValueError:
        names = ", ".join(n.replace(" ", "-") for n in SCENE_NAMES)
        parser.error(f"unknown scene {args.scene!r}; choose one of: {names}, or give a .json scene file")
    return args, (name if name in SCENE_NAMES else scene)


def _no_display(exc: BaseException) -> bool:
    """Whether ``exc`` is pyglet's "cannot connect to a display" (its X11 layer raises its own class at
    import time, the window module another when a window opens: both are named so)."""
    return type(exc).__name__ == "NoSuchDisplayException"


def _say(message: str) -> int:
    print(f"sandbox: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run the sandbox app; returns the exit status (0 on success, 2 when no window can be opened)."""
    rest = sys.argv[1:] if argv is None else argv
    if rest[:1] == ["run"]:  # `sandbox run ...`: a headless run, no window (see headless.py)
        from .headless import main as run_headless

        return run_headless(rest[1:])
    if rest[:1] == ["warmup"]:  # `sandbox warmup`: compile the kernels into numba's cache (see warmup.py)
        from .warmup import main as run_warmup

        return run_warmup(rest[1:])
    args, scene = parse_args(argv)
    if args.lang is not None:
        set_language(args.lang)
    display = f"DISPLAY={os.environ['DISPLAY']!r}" if os.environ.get("DISPLAY") else "DISPLAY is not set"
    try:
        # pyglet connects to the display while it is imported, before any window is asked for
        import moderngl
        import pyglet

        from .app import App
    except Exception as exc:
        if _no_display(exc):
            return _say(f"no display to open a window on ({display}); {NO_DISPLAY_HINT}")
        raise
    try:
        app = App(scene=scene, width=args.width, height=args.height)
    except (pyglet.window.NoSuchDisplayException, pyglet.gl.ContextException, moderngl.Error) as exc:
        if _no_display(exc):
            return _say(f"no display to open a window on ({display}); {NO_DISPLAY_HINT}")
        reason = " ".join(str(exc).split())
        return _say(f"cannot open a {args.width}x{args.height} OpenGL 3.3 window: {reason}")
    except Exception as exc:  # pyglet's X11 layer has its own NoSuchDisplayException class
        if _no_display(exc):
            return _say(f"no display to open a window on ({display}); {NO_DISPLAY_HINT}")
        raise
    for name in args.debug_draw:
        setattr(app.ui.options, name, True)
    try:
        app.run(frames=args.frames, screenshot=args.screenshot)
    except OSError as exc:
        print(f"sandbox: cannot write the screenshot: {exc}", file=sys.stderr)
        return 1
    finally:
        app.close()
    if args.screenshot is not None:
        print(f"sandbox: saved {args.screenshot}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
