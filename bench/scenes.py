"""The standard scenes on our engine and on the peers, in one run: ``python -m bench.scenes``.

Runs S1 (1 000 and 4 096 bodies), S2, S3, S4 and S5 of ``shared/SCENES.md`` on sandbox and, when they are
installed, pybullet and Rapier (``rapier3d``), each run a fresh process, engines interleaved so that a slow
spell of the machine hits them all alike. Prints ms per step, each scene's quality figures, and the ratios
ours / pybullet and ours / Rapier. Options: ``--engines``, ``--repeats`` (median of that many runs),
``--only S1 S2 ...``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics

from bench.peers import PEERS_DIR, run_scene

RUNS = [  # (scene, n, steps, extra args, label)
    ("S1", 1000, 600, [], "S1 pile 1000"),
    ("S1", 4096, 300, [], "S1 pile 4096"),
    ("S2", 20, 600, [], "S2 pyramid"),
    ("S3", 4000, 600, [], "S3 spheres"),
    ("S4", 1, 60, [], "S4 bullet"),
    ("S5", 1, 120, [], "S5 bounce"),
]
MODULES = {"pybullet": "pybullet", "rapier": "rapier3d"}


def figures(r: dict) -> str:
    """One scene's quality figures as a short cell."""
    if "error" in r:
        return f"ERROR: {r['error']}"
    s = r["scene"]
    if s == "S1":
        return (f"ground pen. end {r['max_ground_penetration'] * 100:.2f} cm, peak "
                f"{r['peak_ground_penetration'] * 100:.1f} cm; "
                f"cubes' median speed {r['median_speed_cubes']:.4f} m/s")
    if s == "S2":
        return f"max drift {r['max_drift'] * 100:.2f} cm, top {r['top_drift'] * 100:.2f} cm"
    if s == "S3":
        return (f"pair pen. {r['max_pair_penetration'] * 100:.2f} cm, ground pen. "
                f"{r['max_ground_penetration'] * 100:.2f} cm, escaped {r['escaped']}")
    if s == "S4":
        return "; ".join(f"{k}: {v.split(' ')[0]}" for k, v in r.items() if k.startswith(("ccd", "no_ccd")))
    if s == "S5":
        if r.get("apex") is None or "ratio" not in r:
            return "no rebound measured"
        return f"apex {r['apex']:.3f} m vs e²h {r['theory']:.3f} m (ratio {r['ratio']:.3f})"
    return ""


def main() -> None:
    engines = ["sandbox"] + [e for e, mod in MODULES.items() if importlib.util.find_spec(mod)]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engines", nargs="+", default=engines)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--only", nargs="+", help="scenes to run, e.g. S1 S2")
    a = ap.parse_args()
    if not (PEERS_DIR / "common.py").exists():
        raise SystemExit(f"the peers' harness is not at {PEERS_DIR} (set SANDBOX_PEERS)")
    print(f"engines: {', '.join(a.engines)}; {a.repeats} run(s) per row, median ms/step\n")
    head = "| scene | engine | ms/step | ours / engine | figures |"
    print(head)
    print("|---|---|---|---|---|")
    for scene, n, steps, extra, label in RUNS:
        if a.only and scene not in a.only:
            continue
        runs: dict[str, list[dict]] = {e: [] for e in a.engines}
        for _ in range(a.repeats):
            for e in a.engines:
                runs[e].append(run_scene(e, scene, n, steps, extra))
        med: dict[str, float] = {}
        best: dict[str, dict] = {}
        for e, rs in runs.items():
            ok = sorted((r for r in rs if "error" not in r), key=lambda r: r.get("ms_per_step", 0.0))
            best[e] = ok[len(ok) // 2] if ok else rs[0]
            if ok and "ms_per_step" in ok[0]:
                med[e] = statistics.median(r["ms_per_step"] for r in ok)
        for e in a.engines:
            ms = f"{med[e]:.2f}" if e in med else "-"
            ours = med.get("sandbox")
            ratio = f"{ours / med[e]:.2f}" if ours and e in med and e != "sandbox" else ""
            print(f"| {label} | {e} | {ms} | {ratio} | {figures(best[e])} |", flush=True)


if __name__ == "__main__":
    main()
