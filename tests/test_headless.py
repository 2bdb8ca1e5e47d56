"""Headless runs (``sandbox run``, ``sandbox/headless.py``): the command as a user runs it, in a subprocess,
and its error handling in-process (faster), down to the files it leaves behind."""

import csv
import io
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import headless
from sandbox.engine import World
from sandbox.headless import ENERGY_COLUMNS
from sandbox.ledger import IMPACT_COLUMNS
from sandbox.scenes import SCENES

ROOT = Path(__file__).resolve().parents[1]


def sandbox_run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m sandbox run ARGS`` in ``cwd``, with this checkout on the path."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "sandbox", "run", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def read_csv(text: str) -> tuple[list[str], list[dict[str, str]]]:
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    return header, [dict(zip(header, r, strict=True)) for r in rows[1:]]


def assert_one_line_error(stderr: str, *words: str) -> None:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("sandbox run: error:"), stderr
    assert "Traceback" not in stderr
    for w in words:
        assert w in lines[0], (w, stderr)


# ----------------------------------------------------------------------------------------------------
# subprocess runs


def test_list_names_a_tab_and_a_title(tmp_path):
    r = sandbox_run("--list", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(SCENES)
    names = []
    for line in lines:
        name, title = line.split("\t")
        assert name and " " not in name
        assert title.strip() and "``" not in title
        names.append(name)
    assert names == [n.replace(" ", "-") for n in SCENES]
    assert "bounce-row" in names
    # every listed name is accepted back, and reaches its builder
    for name, builder in zip(names, SCENES.values(), strict=True):
        assert headless.resolve_scene(name)[1] is builder


def test_csv_has_the_documented_columns_and_one_row_per_step(tmp_path):
    r = sandbox_run("bounce", "--steps", "7", "--csv", "out.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    header, rows = read_csv((tmp_path / "out.csv").read_text())
    assert header[: len(ENERGY_COLUMNS)] == list(ENERGY_COLUMNS)
    stages = header[len(ENERGY_COLUMNS):]
    assert stages == [f"ms_{k}" for k in World().timings]  # every stage the world times, in its order
    assert len(rows) == 7
    assert [int(r["step"]) for r in rows] == list(range(1, 8))
    for k, row in enumerate(rows, 1):
        assert float(row["time"]) == pytest.approx(k / 60)
        assert float(row["total"]) == pytest.approx(float(row["kinetic"]) + float(row["potential"]))
        # the 1 kg ball falls freely (no contact yet): p_y = −m·g·t
        assert float(row["momentum_y"]) == pytest.approx(-9.81 * k / 60, rel=1e-3)
        assert all(float(row[s]) >= 0 for s in stages)
        assert int(row["pairs"]) >= 0 and int(row["manifolds"]) >= 0 and int(row["contact_points"]) >= 0
    assert not [p for p in tmp_path.iterdir() if p.name != "out.csv"]  # no temporary file left


def test_csv_to_stdout_is_only_csv(tmp_path):
    r = sandbox_run("bounce-row", "--steps", "4", "--dt", "1/120", "--csv", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    header, rows = read_csv(r.stdout)
    assert header[: len(ENERGY_COLUMNS)] == list(ENERGY_COLUMNS)
    assert len(rows) == 4
    for row in rows:
        assert all(math.isfinite(float(v)) for v in row.values())
    assert float(rows[-1]["time"]) == pytest.approx(4 / 120)
    assert "4 steps" in r.stderr  # the summary goes to stderr
    assert list(tmp_path.iterdir()) == []


def test_impacts_of_a_bounce(tmp_path):
    r = sandbox_run("bounce", "--steps", "100", "--impacts", "imp.csv", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    header, rows = read_csv((tmp_path / "imp.csv").read_text())
    assert header == list(IMPACT_COLUMNS)
    assert len(rows) == 2  # the bounces at 0.64 s and 1.46 s
    first = rows[0]
    assert first["rule"] == "product" and float(first["combined_e"]) == pytest.approx(0.64)
    assert float(first["measured_e"]) == pytest.approx(0.64, rel=0.03)
    assert float(first["approach_speed"]) == pytest.approx(math.sqrt(2 * 9.81 * 2.0), rel=0.02)
    assert "configured e 0.640" in r.stderr


def test_set_changes_the_fall_and_the_materials(tmp_path):
    r = sandbox_run("bounce", "--steps", "60", "--set", "gravity=0,-1.62,0", "--set", "restitution_rule=min",
                    "--set", "restitution=0.5", "--set", "substeps=8", "--set", "sleeping=off",
                    "--csv", "moon.csv", "--impacts", "-", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    _, rows = read_csv((tmp_path / "moon.csv").read_text())
    # on the moon the ball falls 2 m in 1.57 s: after 1 s it is still falling, at 1.62 m/s
    assert float(rows[-1]["momentum_y"]) == pytest.approx(-1.62, rel=1e-2)
    header, impacts = read_csv(r.stdout)
    assert header == list(IMPACT_COLUMNS) and impacts == []
    r = sandbox_run("bounce", "--steps", "120", "--set", "gravity=0,-1.62,0", "--set", "restitution_rule=min",
                    "--set", "restitution=0.5", "--impacts", "-", cwd=tmp_path)
    _, impacts = read_csv(r.stdout)
    assert len(impacts) == 1
    row = impacts[0]
    # the ball's restitution was set, the static ground's (0.8) was not; min of the two is 0.5
    assert {float(row["restitution_a"]), float(row["restitution_b"])} == {0.5, 0.8}
    assert row["rule"] == "min" and float(row["combined_e"]) == 0.5
    assert float(row["approach_speed"]) == pytest.approx(math.sqrt(2 * 1.62 * 2.0), rel=0.02)


def test_bad_input_in_a_subprocess_is_one_line_and_no_file(tmp_path):
    r = sandbox_run("nosuch", "--steps", "3", "--csv", "x.csv", cwd=tmp_path)
    assert r.returncode == 2
    assert_one_line_error(r.stderr, "nosuch")
    r = sandbox_run("bounce", "--steps", "3", "--csv", "x.csv", "--set", "gravity=0,-1", cwd=tmp_path)
    assert r.returncode == 2
    assert_one_line_error(r.stderr, "gravity")
    assert r.stdout == ""
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------------------
# in-process: every kind of bad input


BAD_SCENE = '{"bodies": [{"shape": "cube", "position": [0, 1, 0]}]}'


@pytest.mark.parametrize("args, words", [
    (["nosuch", "--steps", "3"], ["unknown scene", "nosuch"]),
    (["bounce", "--steps", "0"], ["--steps", "'0'"]),
    (["bounce", "--steps", "-5"], ["--steps", "'-5'"]),
    (["bounce", "--steps", "many"], ["--steps", "'many'"]),
    (["bounce"], ["--steps"]),
    (["--steps", "3"], ["scene"]),
    (["bounce", "--steps", "3", "--dt", "0"], ["--dt"]),
    (["bounce", "--steps", "3", "--dt", "1/0"], ["--dt"]),
    (["bounce", "--steps", "3", "--dt", "fast"], ["--dt"]),
    (["bounce", "--steps", "3", "--csv", "no/such/folder/out.csv"], ["--csv", "does not exist"]),
    (["bounce", "--steps", "3", "--impacts", "."], ["--impacts", "directory"]),
    (["bounce", "--steps", "3", "--csv", "-", "--impacts", "-"], ["standard output"]),
    (["bounce", "--steps", "3", "--csv", "a.csv", "--impacts", "./a.csv"], ["same file"]),
    (["bad.json", "--steps", "3", "--csv", "out.csv"], ["bad scene file", "cube"]),
    (["missing.json", "--steps", "3"], ["bad scene file", "missing.json"]),
    (["bounce", "--steps", "3", "--csv", "out.csv", "--set", "warp=9"], ["unknown key", "'warp'"]),
    (["bounce", "--steps", "3", "--set", "substeps=many"], ["substeps", "integer"]),
    (["bounce", "--steps", "3", "--set", "substeps=0"], ["substeps"]),
    (["bounce", "--steps", "3", "--set", "ccd=perhaps"], ["ccd", "'perhaps'"]),
    (["bounce", "--steps", "3", "--set", "contact_hertz=nan"], ["contact_hertz"]),
    (["bounce", "--steps", "3", "--csv", "out.csv", "--set", "restitution_rule=median"],
     ["restitution_rule", "median"]),
    (["bounce", "--steps", "3", "--set", "gravity=0,x,0"], ["gravity"]),
    (["bounce", "--steps", "3", "--set", "friction=-1"], ["friction"]),
    (["bounce", "--steps", "3", "--set", "gravity"], ["KEY=VALUE"]),
    (["bounce", "--steps", "3", "--frobnicate"], ["--frobnicate"]),
])
def test_bad_input_exits_2_with_one_line(args, words, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text(BAD_SCENE)
    assert headless.main(args) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert_one_line_error(err, *words)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.json"]  # nothing written, no temp file


def test_a_run_that_fails_midway_leaves_no_csv(tmp_path, monkeypatch, capsys):
    """The rows written before the failure stay in the temporary file, which is removed; a file that was
    there before keeps its contents."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old.csv").write_text("old\n")
    real_step = World.step

    def failing_step(self, dt):
        if self.steps == 3:
            raise OSError(28, "No space left on device")
        real_step(self, dt)

    monkeypatch.setattr(World, "step", failing_step)
    assert headless.main(["bounce", "--steps", "10", "--csv", "new.csv", "--impacts", "old.csv"]) == 1
    err = capsys.readouterr().err
    assert "No space left" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv"]
    assert (tmp_path / "old.csv").read_text() == "old\n"


def test_dt_accepts_fractions_and_numbers():
    assert headless.parse_dt("1/120") == pytest.approx(1 / 120)
    assert headless.parse_dt("0.005") == 0.005
    for bad in ("-1/60", "0", "inf", "1/0", "x"):
        with pytest.raises(Exception, match="must be"):
            headless.parse_dt(bad)


def test_set_reads_the_type_of_the_current_value():
    w = World()
    known = headless.world_settings(w)
    assert {"gravity", "substeps", "restitution_rule", "ccd", "linear_damping"} <= set(known)
    assert not {"time", "steps", "cached_manifolds", "bodies", "data"} & set(known)
    headless.apply_settings(w, ["ccd=off", "sleeping=1", "substeps=8", "linear_damping=0.5",
                                "restitution_rule=average", "gravity=0, -1.62, 0", "broadphase=grid"])
    assert w.ccd is False and w.sleeping is True and w.substeps == 8 and w.linear_damping == 0.5
    assert w.restitution_rule == "average" and w.broadphase == "grid"
    assert w.gravity.tolist() == [0.0, -1.62, 0.0]


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_on_a_terminal():
    term = _Terminal()
    bar = headless.Progress(50, "sandbox run bounce", stream=term)
    for k in range(1, 51):
        bar.update(k)
    bar.close()
    text = term.getvalue()
    assert "\r" in text and "50/50 steps" in text  # the last update is always drawn
    assert text.endswith("\r\033[K")  # and the bar erased at the end
    pipe = io.StringIO()
    bar = headless.Progress(50, "sandbox run bounce", stream=pipe)
    for k in range(1, 51):
        bar.update(k)
    bar.close()
    assert pipe.getvalue() == ""


def test_a_first_run_compiles_every_kernel_in_parallel_before_stepping(monkeypatch, capsys):
    """On a cold kernel cache the run compiles as ``sandbox warmup`` does (two processes at once), then
    steps; on a warm one it goes straight to the scratch world."""
    calls = []
    real_step = World.step

    def step(self, dt):
        calls.append("step")
        real_step(self, dt)

    monkeypatch.setattr(World, "step", step)
    monkeypatch.setattr(headless, "compile_parallel", lambda progress=None: calls.append("compile") or 0.0)
    monkeypatch.setattr(headless, "cache_is_warm", lambda: False)
    assert headless.main(["bounce", "--steps", "2"]) == 0
    assert calls[0] == "compile" and calls.count("compile") == 1 and calls[1:] == ["step"] * (len(calls) - 1)
    calls.clear()
    monkeypatch.setattr(headless, "cache_is_warm", lambda: True)
    assert headless.main(["bounce", "--steps", "2"]) == 0
    assert "compile" not in calls and calls
    capsys.readouterr()
