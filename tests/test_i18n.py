"""The app in the students' language (sandbox/i18n.py): the .po reader, the catalogue's coverage of every
string the app shows (found in the source with ``ast``, and the engine names, lesson texts and labels
that are translated as they are shown), a lint against untranslated ImGui labels, messages that change
language after they were made, ``--lang``, the system locale, the Portuguese student pages, and a
language switch in a running app (Xvfb, like tests/test_lesson_ui.py)."""

from __future__ import annotations

import ast
import re
import shutil
import string
from pathlib import Path

import numpy as np
import pytest
from app_driver import open_app, send

from sandbox import i18n, lessons, scenes
from sandbox.engine import KIND_NAMES, SETTINGS, STAGE_GROUPS, STAGES, World
from sandbox.i18n import N_, Message, join, read_po, system_language, translate

ROOT = Path(__file__).resolve().parent.parent
SANDBOX = ROOT / "sandbox"
PT = "pt_BR"


@pytest.fixture(autouse=True)
def english_after():
    """Every test leaves the app's language as the other test modules expect it: English."""
    yield
    i18n.set_language("en")


# --- the .po reader --------------------------------------------------------------------------------------

def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.po"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_reader_joins_lines_resolves_escapes_and_skips_header_fuzzy_and_empty(tmp_path):
    path = write(tmp_path, r'''# a comment
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"

#: sandbox/ui/panel.py:10
msgid "Two "
"lines"
msgstr "Duas "
"linhas"

msgid "Say \"hi\"\tnow\\n"
msgstr "Diga \"oi\"\tagora\\n"

msgid "New\nline"
msgstr "Nova\nlinha"

#, fuzzy
msgid "Guess"
msgstr "Palpite"

#, python-format, fuzzy
msgid "Guess again"
msgstr "Outro palpite"

msgid "Untranslated"
msgstr ""
''')
    assert read_po(path) == {"Two lines": "Duas linhas", 'Say "hi"\tnow\\n': 'Diga "oi"\tagora\\n',
                             "New\nline": "Nova\nlinha"}


@pytest.mark.parametrize("body, line, words", [
    ('msgid "a"\nmsgstr "b\n', 2, "quoted string"),
    ('msgid "a"\nmsgstr "b"\nbogus "c"\n', 3, "unknown line"),
    ('msgid "a"\nmsgstr "b" "c"\n', 2, "quoted string"),
    ('msgid "a"\nmsgstr "\\q"\n', 2, "unknown escape"),
    ('"stray"\n', 1, "outside an entry"),
    ('msgstr "b"\n', 1, "without a msgid"),
    ('msgid "a"\nmsgid "b"\nmsgstr "c"\n', 2, "without its msgstr"),
])
def test_a_malformed_catalogue_names_its_file_and_line(tmp_path, body, line, words):
    path = write(tmp_path, body)
    with pytest.raises(ValueError, match=rf"x\.po:{line}: .*{words}"):
        read_po(path)


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt is not installed")
def test_the_reader_agrees_with_gnu_msgfmt_on_every_catalogue(tmp_path):
    """Each catalogue compiled by GNU msgfmt (which also checks it) and read back by the standard library's
    ``gettext`` gives exactly what the pure-Python reader gives."""
    import gettext
    import subprocess

    for po in sorted((i18n.LOCALE_DIR / PT / "LC_MESSAGES").glob("*.po")):
        mo = tmp_path / (po.stem + ".mo")
        subprocess.run(["msgfmt", "--check", "-o", str(mo), str(po)], check=True, capture_output=True)
        with open(mo, "rb") as f:
            compiled = {k: v for k, v in gettext.GNUTranslations(f)._catalog.items() if k}
        assert read_po(po) == compiled, po.name


def test_a_catalogue_that_ends_inside_an_entry_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"x\.po: the last msgid has no msgstr"):
        read_po(write(tmp_path, 'msgid "a"\n'))


# --- choosing the language -------------------------------------------------------------------------------

@pytest.mark.parametrize("environ, want", [
    ({}, "en"),
    ({"LANG": "C.UTF-8"}, "en"),
    ({"LANG": "POSIX"}, "en"),
    ({"LANG": "pt_BR.UTF-8"}, PT),
    ({"LANG": "pt_PT.UTF-8"}, PT),  # any Portuguese gets the Brazilian catalogue
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LANG": "de_DE.UTF-8"}, "en"),  # no German catalogue: English
    ({"LC_ALL": "pt_BR.UTF-8", "LANG": "en_US.UTF-8"}, PT),
    ({"LC_MESSAGES": "pt_BR@euro", "LANG": "en_US"}, PT),
    ({"LANGUAGE": "pt_BR:en", "LANG": "en_US.UTF-8"}, PT),
    ({"LANGUAGE": ":C", "LANG": "pt_BR.UTF-8"}, PT),
    ({"SANDBOX_LANG": "en", "LANG": "pt_BR.UTF-8"}, "en"),  # the sandbox's own variable wins
    ({"SANDBOX_LANG": "pt_BR", "LANG": "en_US.UTF-8"}, PT),
])
def test_the_system_language(environ, want):
    assert system_language(environ) == want


def test_set_language_switches_and_refuses_unknown_codes():
    i18n.set_language(PT)
    assert i18n.language() == PT and i18n._("Language") == "Idioma"
    i18n.set_language("en")
    assert i18n._("Language") == "Language"
    with pytest.raises(ValueError, match="unknown language 'xx'"):
        i18n.set_language("xx")
    assert i18n.language() == "en"


@pytest.mark.parametrize("text, want", [("en", "en"), ("pt_BR", PT), ("pt-BR", PT), ("PT_br", PT)])
def test_lang_on_the_command_line(text, want):
    from sandbox.__main__ import parse_args

    args, _scene = parse_args(["--lang", text])
    assert args.lang == want


@pytest.mark.parametrize("text", ["xx", "pt", "", "english"])
def test_a_bad_lang_exits_with_status_2_and_one_line(text, capsys):
    from sandbox.__main__ import parse_args

    with pytest.raises(SystemExit) as exit_info:
        parse_args(["--lang", text])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--lang" in err and "en, pt_BR" in err


# --- messages made now, shown later --------------------------------------------------------------------

def test_a_message_is_its_english_text_and_is_shown_in_the_language_current_when_drawn():
    m = N_("ground penetration {mm:.1f} mm (bar: 10 mm)", mm=1.234)
    assert m == "ground penetration 1.2 mm (bar: 10 mm)" and isinstance(m, str)
    verdict = lessons.verdict(True, m)
    assert verdict.startswith("PASS: ")
    assert translate(verdict, PT) == "PASSOU: penetração no chão 1.2 mm (limite: 10 mm)"
    assert translate(verdict, "en") == verdict
    i18n.set_language(PT)
    assert i18n._(verdict) == "PASSOU: penetração no chão 1.2 mm (limite: 10 mm)"


def test_nested_messages_and_joins_are_translated_piece_by_piece():
    parts = [N_("{name}: lowest corner {low:.3f} m, {speed:.3f} m/s", name=N_("aligned"), low=1.0, speed=0.0),
             "x {not a field}"]
    joined = join("; ", parts)
    assert joined == "aligned: lowest corner 1.000 m, 0.000 m/s; x {not a field}"
    assert translate(joined, PT) == "alinhada: canto mais baixo 1.000 m, 0.000 m/s; x {not a field}"


def test_a_session_error_changes_language_with_the_app():
    from sandbox.session import Session

    session = Session()
    assert not session.load_scene("no such scene")
    message = session.errors[-1]
    assert message.startswith("loading scene 'no such scene': ValueError: unknown scene")
    assert translate(message, PT).startswith("carregando a cena 'no such scene': ValueError: unknown scene")


# --- the catalogue covers the app --------------------------------------------------------------------------

def marked_strings() -> dict[str, list[str]]:
    """Every string constant passed as the first argument of a call to ``_`` or ``N_`` under sandbox/,
    with where it is (``file:line``)."""
    found: dict[str, list[str]] = {}
    for path in sorted(SANDBOX.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "N_")
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                found.setdefault(node.args[0].value, []).append(where)
    return found


def patterns(text: str):
    """The catalogue entries a text shown through ``_`` needs: itself, or for a ``Message`` its pattern
    and those of the messages among its values."""
    if not isinstance(text, Message):
        yield str(text)
        return
    yield text.pattern
    for value in (*text.args, *text.values.values()):
        if isinstance(value, Message):
            yield from patterns(value)


def panel_table(name: str):
    """The value of the module-level literal ``name`` in sandbox/ui/panel.py, read from the source (the
    module itself imports pyglet, which needs a display)."""
    tree = ast.parse((SANDBOX / "ui" / "panel.py").read_text(encoding="utf-8"))
    for node in tree.body:
        names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if isinstance(node, ast.Assign) and name in names:
            return ast.literal_eval(node.value)
    raise LookupError(name)


def shown_names() -> set[str]:
    """The engine's and the panel's names that the app passes through ``_`` as it draws them (not string
    constants in a ``_`` call, so ``marked_strings`` cannot see them)."""
    from sandbox.ui import spawn

    names = set(KIND_NAMES) | set(spawn.SHAPES) | set(panel_table("NORMAL_SCALES"))
    for name, _log in panel_table("ADVANCED"):
        names |= {name.replace("_", " ").capitalize(), SETTINGS[name].help}
    for group, _stages in STAGE_GROUPS:
        names |= {group, group.capitalize()}
    names |= {stage.replace("_", " ") for stage in STAGES}
    return names


def lesson_texts() -> set[str]:
    """Every text of every lesson that the Lesson window and the student pages translate."""
    texts = set()
    for lesson in lessons.LESSONS:
        for text in (lesson.title, lesson.concept, lesson.formula, lesson.try_this, lesson.look_at,
                     lesson.expect, *(p["label"] for p in lesson.presets)):
            texts |= set(patterns(text))
    return texts


def lesson_labels() -> dict[str, str]:
    """The label texts every lesson draws on its freshly built scene, before and after one step, with
    the lesson's name (labels depend on the state: "on"/"off", rules, fates)."""
    found = {}
    for lesson in lessons.LESSONS:
        world = World()
        small = {"pile": lambda w: scenes.s1_pile(w, 27), "pyramid": lambda w: scenes.s2_pyramid(w, 3),
                 "spheres": lambda w: scenes.s3_spheres(w, 20),
                 "broadphase": lambda w: scenes.broadphase_field(w, 20)}
        bodies = small.get(lesson.name, scenes.SCENES[lesson.name])(world)
        for _round in range(2):
            for preset in (None, *lesson.presets):
                if preset is not None:
                    lessons.apply_preset(world, preset)
                for label in lesson.labels(world, bodies):
                    for pattern in patterns(label.text):
                        found.setdefault(pattern, lesson.name)
            world.step(lessons.DT)
    return found


SYMBOLS = {"kg", "mm", "cm", "ms", "Hz", "rad", "tan", "sin", "cos", "atan"}
"""Units and functions: written the same in both languages."""


def needs_entry(text: str) -> bool:
    """Whether ``text`` has anything to translate: a word (two letters or more, not a unit) outside its
    format fields. "e²·h = 0.82 m" or "θ = 20°, tan θ = 0.364" has none."""
    try:
        literal = " ".join(part for part, *_rest in string.Formatter().parse(text))
    except ValueError:
        literal = text
    words = "".join(c if c.isalpha() else " " for c in literal).split()
    return any(len(word) > 1 and word not in SYMBOLS for word in words)


def test_every_marked_string_has_a_portuguese_entry():
    pt = i18n.catalogue(PT)
    missing = [f"{where[0]}: {text!r}" for text, where in marked_strings().items()
               if needs_entry(text) and text not in pt]
    assert not missing, "no pt_BR entry for:\n" + "\n".join(missing)


def test_the_names_the_panel_translates_as_it_draws_them_have_entries():
    pt = i18n.catalogue(PT)
    assert not sorted(t for t in shown_names() if needs_entry(t) and t not in pt)


def test_every_lesson_text_and_preset_has_an_entry():
    pt = i18n.catalogue(PT)
    assert not sorted(t for t in lesson_texts() if needs_entry(t) and t not in pt)


def test_every_lesson_label_has_an_entry():
    pt = i18n.catalogue(PT)
    labels = lesson_labels()
    assert len(labels) > 20
    assert not sorted(f"{name}: {t!r}" for t, name in labels.items() if needs_entry(t) and t not in pt)


def fields(text: str) -> set[str] | None:
    """The names of the format fields of ``text`` (None when it is no valid pattern)."""
    try:
        return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name is not None}
    except ValueError:
        return None


def test_every_translation_keeps_the_format_fields_of_its_source():
    bad = [(msgid, msgstr) for msgid, msgstr in i18n.catalogue(PT).items() if fields(msgid) != fields(msgstr)]
    assert not bad


def test_no_two_catalogue_files_translate_one_message_differently():
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for path in sorted((i18n.LOCALE_DIR / PT / "LC_MESSAGES").glob("*.po")):
        for msgid, msgstr in read_po(path).items():
            if msgid in seen and seen[msgid][1] != msgstr:
                clashes.append(f"{msgid!r}: {seen[msgid][0]} and {path.name}")
            seen.setdefault(msgid, (path.name, msgstr))
    assert not clashes


# --- a lint: ImGui labels must be translated ---------------------------------------------------------------

TEXT_CALLS = {"text", "text_colored", "text_wrapped", "text_disabled", "bullet_text", "label_text",
              "separator_text", "button", "small_button", "checkbox", "radio_button", "selectable",
              "menu_item", "begin_menu", "begin", "begin_combo", "combo", "collapsing_header", "tree_node",
              "tree_node_ex", "set_tooltip", "set_item_tooltip", "begin_tab_item", "progress_bar",
              "plot_lines", "plot_histogram", "color_edit3", "color_edit4", "add_text"}
TEXT_PREFIXES = ("slider_", "drag_", "input_", "v_slider_")
TEXT_KEYWORDS = ("label", "text", "overlay_text", "overlay")
# which positional argument is the text: text_colored(colour, text), add_text(pos, colour, text)
TEXT_ARG = {"text_colored": 1, "add_text": 2, "progress_bar": 2}


def is_text_call(func: ast.expr) -> bool:
    if not isinstance(func, ast.Attribute):
        return False
    name = func.attr
    if name == "add_text":  # a draw list's method: any receiver
        return True
    receiver = func.value
    return (isinstance(receiver, ast.Name) and receiver.id in ("imgui", "implot")
            and (name in TEXT_CALLS or name.startswith(TEXT_PREFIXES)))


def bare_words(node: ast.expr) -> str | None:
    """The words of a label written as a bare string literal (or f-string) outside its ``##`` id, or
    None when it has none (a call, a variable, an id, numbers, symbols and units: see ``needs_entry``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        literal = node.value
    elif isinstance(node, ast.JoinedStr):
        literal = "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
    else:
        return None
    shown = literal.split("##")[0]
    words = "".join(c if c.isalpha() else " " for c in shown).split()
    return " ".join(w for w in words if len(w) > 1 and w not in SYMBOLS) or None


def untranslated_labels(source: str, filename: str) -> list[str]:
    """Every ImGui text-drawing call in ``source`` whose label is a bare literal with words."""
    found = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if not (isinstance(node, ast.Call) and is_text_call(node.func)):
            continue
        name = node.func.attr
        args = list(node.args)
        index = TEXT_ARG.get(name, 0)
        # the label (a slider's format argument, "%.2f Hz", is its number's, not a label)
        candidates = [args[index]] if len(args) > index else []
        candidates += [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
        for arg in candidates:
            words = bare_words(arg)
            if words:
                found.append(f"{filename}:{node.lineno}: imgui.{name}({words!r} ...)")
    return found


def test_the_lint_finds_bare_labels_and_lets_translated_ones_and_ids_pass():
    bad = '''
imgui.text("Hello")
imgui.text_colored(DIM, "grey words")
imgui.button(f"Restitution##{kind}")
imgui.slider_float("Size (m)", s, 0.0, 1.0, "%.2f")
imgui.plot_lines("##e", data, overlay_text="total energy (J)")
draw.add_text(pos, colour, "label")
imgui.checkbox("Static", on)
'''
    good = '''
imgui.text(_("Hello"))
imgui.text_colored(DIM, _("grey words"))
imgui.button(_("Restitution") + f"##{kind}")
imgui.slider_float(_("Size (m)") + "##size", s, 0.0, 1.0, "%.2f")
imgui.slider_int(_("Step rate"), n, 15, 480, f"%d Hz · dt {dt:.1f} ms")
imgui.plot_lines("##energy", data, overlay_text=_("total energy (J)"))
imgui.begin("##status", None, flags)
imgui.input_text("##load", path)
imgui.text(f"{value:.2f} ms")
imgui.text_colored(DIM, f"  {scale:g}×")
draw.add_text(pos, colour, text)
'''
    assert len(untranslated_labels(bad, "bad.py")) == 7
    assert untranslated_labels(good, "good.py") == []


def test_no_imgui_label_in_the_app_is_a_bare_untranslated_literal():
    found = []
    for path in sorted(SANDBOX.rglob("*.py")):
        found += untranslated_labels(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "wrap these labels in _():\n" + "\n".join(found)


# --- the Portuguese student pages ----------------------------------------------------------------------

def test_the_portuguese_lesson_pages_are_up_to_date():
    folder = ROOT / "docs" / "lessons" / lessons.DOC_FOLDERS[PT]
    for lesson in lessons.LESSONS:
        page = folder / lesson.doc_page
        assert page.read_text(encoding="utf-8") == lessons.lesson_markdown(lesson, PT), \
            "docs/lessons/pt-BR is stale: run python -m sandbox.lessons docs/lessons"
    assert (folder / "index.md").read_text(encoding="utf-8") == lessons.index_markdown(PT)


def test_the_portuguese_pages_are_translated_and_their_links_resolve():
    folder = ROOT / "docs" / "lessons" / lessons.DOC_FOLDERS[PT]
    index = (folder / "index.md").read_text(encoding="utf-8")
    assert index.startswith("# Lições") and "](../index.md)" in index
    assert "](pt-BR/index.md)" in (ROOT / "docs" / "lessons" / "index.md").read_text(encoding="utf-8")
    lesson = lessons.LESSONS_BY_NAME["bounce"]
    page = (folder / lesson.doc_page).read_text(encoding="utf-8")
    assert page.startswith(f"# {translate(lesson.title, PT)}") and "## A ideia" in page
    assert translate(lesson.concept, PT) in page and lesson.concept not in page
    for lesson in lessons.LESSONS:
        page = folder / lesson.doc_page
        for target in re.findall(r"\]\(([^)#]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).resolve().exists(), f"{page.name}: a link to {target} goes nowhere"


# --- switching the language in the running app ---------------------------------------------------------

W, H = 1280, 720


@pytest.fixture(scope="module")
def app():
    i18n.set_language("en")
    yield from open_app("bounce row")
    i18n.set_language("en")


def click(app, rect) -> None:
    """A left click at the middle of ``rect`` (window points, top-left origin), a frame between each
    event, as ImGui needs."""
    from pyglet.window import mouse

    x0, y0, x1, y1 = rect
    x, y = int(0.5 * (x0 + x1)), H - int(0.5 * (y0 + y1))
    send(app, "on_mouse_motion", x, y, 0, 0)
    app.run(frames=1)
    send(app, "on_mouse_press", x, y, mouse.LEFT, 0)
    app.run(frames=1)
    send(app, "on_mouse_release", x, y, mouse.LEFT, 0)
    app.run(frames=1)


def choose_language(app, code: str) -> None:
    """Pick ``code`` in the panel's Language box with the mouse: open the list, click the language."""
    click(app, app.panel.language_rect)
    app.run(frames=1)  # ImGui places a new popup on its second frame
    assert code in app.panel.language_items, "the Language box did not open"
    click(app, app.panel.language_items[code])
    send(app, "on_mouse_motion", 600, 40, 0, 0)
    app.run(frames=2)


def test_the_language_box_switches_the_panel_lesson_and_labels_at_once(app, tmp_path):
    from sandbox.app import write_png

    app.ui.show_lesson = app.ui.show_panel = True
    assert app.ui.load_scene("bounce row")
    app.session.sim.paused = True
    app.run(frames=2)
    lesson = lessons.LESSONS_BY_NAME["bounce row"]
    assert app.panel.lesson.shown_title == lesson.title
    english = app.read_pixels().astype(int)
    english_labels = sorted(t for _x, _y, t in app.panel.lesson.drawn_labels)
    assert app.window.caption == "sandbox — rigid-body physics"

    choose_language(app, PT)
    assert i18n.language() == PT
    assert app.panel.lesson.shown_title == "Quiques lado a lado" != lesson.title
    assert "Regra de combinação: max" in app.panel.lesson.buttons  # the presets, translated
    assert app.window.caption == "sandbox — física de corpos rígidos"
    portuguese = app.read_pixels().astype(int)
    write_png(tmp_path / "pt.png", portuguese.astype(np.uint8))
    # the panel's words changed (its headers, buttons and labels), and so did the Lesson window's
    x0 = W - 370
    assert np.abs(english[:, x0:] - portuguese[:, x0:]).mean() > 1.0
    lx0, ly0, lx1, ly1 = (int(v) for v in app.panel.lesson.rect)
    assert np.abs(english[ly0:ly1, lx0:lx1] - portuguese[ly0:ly1, lx0:lx1]).mean() > 3.0
    # the labels in the view are the same measurements, in Portuguese where they have words
    assert len(app.panel.lesson.drawn_labels) == len(english_labels)
    assert app.panel.overflow == 0.0  # the longer Portuguese labels still fit at 1280x720

    choose_language(app, "en")
    assert i18n.language() == "en" and app.panel.lesson.shown_title == lesson.title
    assert np.abs(english[:, x0:] - app.read_pixels().astype(int)[:, x0:]).mean() < 1.0


def test_an_open_section_stays_open_when_the_language_changes(app):
    from imgui_bundle import imgui

    app.ui.show_panel = True
    assert app.ui.load_scene("showcase")
    app.session.sim.paused = True
    app.run(frames=1)
    imgui.set_current_context(app.imgui_context)
    panel = imgui.internal.find_window_by_name("###panel")
    world = panel.get_id("###World")  # the header's id: its English title, whatever it shows
    panel.state_storage.set_int(world, 1)  # as a click on the World header leaves it
    app.run(frames=2)
    assert app.panel.overflow > 100.0  # Simulation and World together are taller than the window
    for code in (PT, "en"):
        i18n.set_language(code)
        app.run(frames=2)
        assert panel.state_storage.get_int(world, 0) == 1
        assert app.panel.overflow > 100.0
    panel.state_storage.set_int(world, 0)
    app.run(frames=1)
    assert app.panel.overflow == 0.0


def test_a_check_verdict_made_in_english_is_shown_in_portuguese(app):
    app.ui.show_lesson = app.ui.show_panel = True
    assert app.ui.load_scene("manifold")
    app.session.sim.paused = True
    app.session.start_check()
    verdict = app.session.check.wait(120.0)
    assert verdict.startswith("PASS: points on a face, an edge, a corner: 4, 2, 1")
    i18n.set_language(PT)
    app.run(frames=1)
    assert i18n._(verdict).startswith("PASSOU: pontos numa face, numa aresta, num vértice: 4, 2, 1")
    assert app.panel.lesson.shown_title == "A variedade de contato (manifold)"


class _AllOpen:
    """Stands in for the panel module's ``imgui``: every collapsing header drawn open."""

    def __getattr__(self, name):
        from imgui_bundle import imgui

        return getattr(imgui, name)

    def collapsing_header(self, label, flags=0):
        from imgui_bundle import imgui

        imgui.set_next_item_open(True)
        return imgui.collapsing_header(label, flags)


@pytest.mark.parametrize("code", ["en", PT])
def test_every_label_of_every_section_fits_beside_its_widget(app, monkeypatch, code):
    import sandbox.ui.panel as panel_module

    i18n.set_language(code)
    app.ui.show_panel = True
    assert app.ui.load_scene("showcase")
    app.session.sim.paused = True
    app.session.select(app.session.world.bodies[-1])  # so that "Selected body" has its widgets
    app.ui.options.broadphase = True
    monkeypatch.setattr(panel_module, "imgui", _AllOpen())
    app.run(frames=3)
    monkeypatch.undo()
    assert app.panel.overflow > 1000.0  # every section was open (the panel scrolls)
    assert app.panel.overflow_x == 0.0
    app.ui.options.broadphase = False
