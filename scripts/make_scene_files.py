"""Write every built-in lesson scene as a scene file ``assets/scenes/<name>.json``, from the Python builders
and the lesson records of ``sandbox.lessons`` as they were before the files became the source (run once).

The heavy standard scenes (``scenes.BUILDERS``) keep their builders: their files name it and carry the
rest (world settings, camera, lesson)."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

from sandbox import scenes
from sandbox.engine import World
from sandbox.lessons import LESSONS_BY_NAME, Lesson
from sandbox.scene_file import TOP_KEYS, format_document, save_scene_file

FOLDER = Path(__file__).resolve().parent.parent / "assets" / "scenes"
STEP_SCENES = {"bullet", "tunnelling"}  # their lessons count in steps of 1/60 s: the file sets the step


def description(builder) -> str:
    """The builder's docstring on one line, each ``parameter`` it names replaced by its default value."""
    defaults = {k: p.default for k, p in inspect.signature(builder).parameters.items()
                if p.default is not inspect.Parameter.empty}

    def value(match: re.Match) -> str:
        v = defaults.get(match.group(1), match.group(1))
        return f"{v:g}" if isinstance(v, float) else str(v)

    return " ".join(re.sub(r"``([^`]*)``", value, builder.__doc__).split())


def lesson_entry(lesson: Lesson) -> dict:
    entry = {"title": lesson.title, "concept": lesson.concept, "formula": lesson.formula,
             "try_this": lesson.try_this, "look_at": lesson.look_at, "expect": lesson.expect}
    if lesson.presets:
        entry["presets"] = [{"label": p["label"], "settings": dict(p["settings"])} for p in lesson.presets]
    entry["check"] = lesson.check.__name__.removeprefix("check_")
    if lesson.labels.__name__.startswith("labels_"):
        entry["labels"] = lesson.labels.__name__.removeprefix("labels_")
    entry["engine_refs"] = list(lesson.engine_refs)
    return entry


def main() -> None:
    for name, builder in scenes.SCENES.items():
        lesson = LESSONS_BY_NAME[name]
        camera = {"eye": list(lesson.camera.eye), "target": list(lesson.camera.target)}
        if lesson.camera.fov_y_deg != 60.0:
            camera["fov_y_deg"] = lesson.camera.fov_y_deg
        info = {"name": name, "description": description(builder), "camera": camera,
                "lesson": lesson_entry(lesson)}
        dt = 1.0 / 60.0 if name in STEP_SCENES else None
        path = FOLDER / f"{name.replace(' ', '-')}.json"
        built_in = [k for k, b in scenes.BUILDERS.items() if b is builder]
        if built_in:
            doc = {**info, "builder": built_in[0], "bodies": []}
            if dt is not None:
                doc["dt"] = dt
            path.write_text(format_document({k: doc[k] for k in TOP_KEYS if k in doc}), encoding="utf-8")
        else:
            w = World()
            bodies = builder(w)
            dynamic = [b for b in w.bodies if not b.static]
            if bodies != dynamic:
                rows = {b.index: k for k, b in enumerate(w.bodies)}
                info["lesson"]["bodies"] = [rows[b.index] for b in bodies]
            save_scene_file(w, path, dt=dt, info=info)
        print(path, file=sys.stderr)


if __name__ == "__main__":
    main()
