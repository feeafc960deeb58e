#!/usr/bin/env python3
"""Compares the headline GPU figures of a run with the best measured so far.

bench/results/baseline.json holds, for each figure and each kind of GPU it was measured on
("H200", "H100"), the best value measured so far on that kind with its direction (lower:
seconds; higher: rates and ratios), date, commit and the JSON it comes from. Absolute rates and
even ratios to a same-run ceiling differ between GPU models, so a run is compared only with the
entries of its own kind: the kind comes from each result's machine.gpu (see gpu_kind()). FIGURES
below says where each figure's value is: the JSON file a step of scripts/bench-check writes, the
path to the value inside it, and the configuration that file must describe for the comparison to
mean anything. scripts/bench-check calls this after its runs; it also works on results fetched
from another machine or on the committed JSON:

    scripts/bench_compare.py --results build/bench-check
    scripts/bench_compare.py --results DIR --update            # raise entries that improved
    scripts/bench_compare.py --results DIR --update --archive bench/results/bench-check-h100-DATE
    scripts/bench_compare.py --results bench/results \\
        --results bench/results/graph-study-h200-2026-12-02-scale25    # the committed figures
    scripts/bench_compare.py --list                             # the figures and their sources

A figure passes when now / baseline, taken in the better-is-higher sense (baseline / now for
seconds), is at least 1 - tolerance; a figure with no usable result fails, and a figure with no
entry for the run's GPU kind is new (not a failure). --update raises the entry of the run's kind
when the new value is better, adds one where that kind has none, never lowers one and leaves the
other kinds' entries alone; the entry names its JSON under bench/results/ (a result from
elsewhere is copied into --archive first). Exit status: 0 when nothing failed, 1 when a figure
failed, 2 for a bad baseline file or bad arguments. Standard library only.
"""

import argparse
import dataclasses
import datetime
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
DEFAULT_BASELINE = RESULTS / "baseline.json"
RUN_FILE = "run.json"  # written by scripts/bench-check next to the results


@dataclasses.dataclass(frozen=True)
class Figure:
    """One compared figure and where its value comes from."""

    name: str  # key in baseline.json
    group: str  # what BENCH_CHECK_ONLY names to run it (bfs cc 7a 7b io-e2e)
    step: str  # the step writing STEP.json (STEP.N.json for repetition N >= 2)
    path: str  # the value inside that JSON (see lookup())
    direction: str  # "lower" (seconds) or "higher" (rates, ratios)
    unit: str
    what: str
    # (path, value) pairs the JSON must hold: the configuration the baseline was measured in,
    # and no failed or wrong reads.
    expect: tuple = ()
    # Glob for copies under another name (bench/results/io-e2e-h200-2026-11-30.json), used
    # only where no file of the step is found.
    fallback: str = ""


def _app_figures():
    kron25 = (("graph.vertices", 1 << 25), ("graph.edges", 1 << 30), ("graph.id_bytes", 8))
    backends = [
        # variant, step prefix, --backend, description, configuration
        ("optane-4dev", "bam", "emulated-ssd", "BaM on 4 Optane-like emulated devices",
         (("storage.devices", 4), ("storage.model", "optane"), ("storage.line_bytes", 4096),
          ("storage.cache_mode", "optimized"), ("storage.cache_fraction", 0.125))),
        ("host-memory", "base", "host-memory", "host memory, zero-copy (EMOGI)", ()),
        ("device-memory", "base", "device-memory", "all in GPU memory", ()),
        ("tiled", "base", "tiled", "tiled, buffer 1/8 of the edges",
         (("storage.cache_fraction", 0.125),)),
    ]
    figures = []
    for app in ("bfs", "cc"):
        for variant, prefix, backend, description, config in backends:
            figures.append(Figure(
                name=f"{app}-{variant}", group=app, step=f"{prefix}-kron25-{app}-{variant}",
                path="seconds", direction="lower", unit="s",
                what=f"kron25 {app.upper()}, {description}",
                expect=(("app", app), ("backend", backend)) + kron25 + config))
    return figures


def _point_figures():
    figures = []
    cache = (("configuration.data_bytes", 1 << 30), ("configuration.cache_bytes", 2 << 30),
             ("configuration.cache_mode", "optimized"))
    lines = ((512, "512", "512 B"), (4096, "4k", "4 KiB"))
    for line, tag, size in lines:
        point = f"points[line_bytes={line}]"
        clean = ((f"{point}.failed", 0), (f"{point}.wrong", 0))
        figures.append(Figure(
            name=f"7a-{tag}", group="7a", step="cache-lines",
            path=f"{point}.fraction_of_ceiling", direction="higher", unit="of HBM",
            what=f"7a cache hits, whole random {size} lines, over same-run HBM with that pattern",
            expect=(("benchmark", "cache"), ("figure", "lines")) + cache + clean,
            fallback="cache-lines-h200-*.json"))
    for line, tag, size in lines:
        point = f"points[line_bytes={line}]"
        clean = ((f"{point}.failed", 0), (f"{point}.wrong", 0))
        figures.append(Figure(
            name=f"7b-{tag}", group="7b", step="cache-elements",
            path=f"{point}.fraction_of_hbm_random_8b", direction="higher", unit="of HBM",
            what=f"7b cache hits, random 8 B operator[] on {size} lines, over same-run HBM "
                 "random 8 B",
            expect=(("benchmark", "cache"), ("figure", "elements")) + cache + clean,
            fallback="cache-elements-h200-*.json"))
    for queues, depth in ((512, 256), (128, 1024)):
        point = f"points[queues={queues},depth={depth},queue_map=warp]"
        figures.append(Figure(
            name=f"io-e2e-{queues}x{depth}", group="io-e2e", step="io-e2e",
            path=f"{point}.iops", direction="higher", unit="IOPS",
            what=f"raw I/O end to end, 512 B reads, 1 device, {queues} x {depth}, queue per warp",
            expect=(("benchmark", "io"), ("figure", "e2e"), ("configuration.devices", 1),
                    (f"{point}.io_bytes", 512), (f"{point}.op", "read"),
                    (f"{point}.protocol", "ticket"), (f"{point}.failed", 0),
                    (f"{point}.wrong", 0)),
            fallback="io-e2e-h200-*.json"))
    return figures


FIGURES = _app_figures() + _point_figures()


class BaselineError(Exception):
    """The baseline file is unreadable or disagrees with FIGURES."""


# ---- GPU kinds -------------------------------------------------------------------------------

# Short names of the GPU models the figures have been measured on, by the model name a result's
# machine.gpu starts with. Any other model is a kind of its own under its full name: an H100
# PCIe or NVL (fewer SMs, other memory) must not be compared with the SXM H100's baselines.
GPU_KINDS = {
    "NVIDIA H100 80GB HBM3": "H100",
    "NVIDIA H200": "H200",
}


def gpu_kind(doc):
    """The kind of GPU a result was measured on, from its machine.gpu ("NVIDIA H100 80GB HBM3,
    132 SMs, 79.2 GiB, ..." -> "H100"), or None when it names none (a CPU run)."""
    machine = doc.get("machine") if isinstance(doc, dict) else None
    gpu = machine.get("gpu") if isinstance(machine, dict) else None
    if not isinstance(gpu, str):
        return None
    model = gpu.split(",", 1)[0].strip()
    return GPU_KINDS.get(model, model) or None


# ---- JSON paths ------------------------------------------------------------------------------

_SEGMENT = re.compile(r"([A-Za-z_][\w-]*)?(?:\[([^\]]*)\])?")


def _segments(path):
    """Splits 'points[line_bytes=512].iops' at the dots outside brackets."""
    parts, depth, current = [], 0, ""
    for ch in path:
        if ch == "." and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (ch == "[") - (ch == "]")
        current += ch
    parts.append(current)
    return parts


def _matches(actual, wanted):
    """A selector's text against a JSON scalar: numbers by value, strings by text."""
    if isinstance(actual, bool) or actual is None:
        return str(actual).lower() == wanted.lower()
    if isinstance(actual, (int, float)):
        try:
            return float(actual) == float(wanted)
        except ValueError:
            return False
    return str(actual) == wanted


def lookup(doc, path):
    """The value at `path` in a parsed JSON document.

    A path is dot-separated field names; a name may be followed by a selector on a list:
    [N] (index) or [key=value,key=value] (the one element whose fields have those values).
    Raises LookupError saying which part was missing or ambiguous.
    """
    node = doc
    for segment in _segments(path):
        m = _SEGMENT.fullmatch(segment)
        if not m or not segment:
            raise LookupError(f"bad path {path!r}")
        key, selector = m.groups()
        if key:
            if not isinstance(node, dict) or key not in node:
                raise LookupError(f"no field {key!r} (path {path})")
            node = node[key]
        if selector is None:
            continue
        if not isinstance(node, list):
            raise LookupError(f"{key or 'value'} is not a list (path {path})")
        if selector.strip().isdigit():
            index = int(selector)
            if index >= len(node):
                raise LookupError(f"{key}[{index}] out of range (path {path})")
            node = node[index]
            continue
        conditions = [c.split("=", 1) for c in selector.split(",")]
        if any(len(c) != 2 for c in conditions):
            raise LookupError(f"bad selector [{selector}] (path {path})")
        found = [e for e in node if isinstance(e, dict)
                 and all(k in e and _matches(e[k], v) for k, v in conditions)]
        if len(found) != 1:
            raise LookupError(f"{len(found)} elements of {key} match [{selector}] (path {path})")
        node = found[0]
    return node


def _same_value(actual, wanted):
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        return (isinstance(actual, (int, float)) and not isinstance(actual, bool)
                and math.isclose(actual, wanted, rel_tol=1e-9, abs_tol=1e-12))
    return actual == wanted


# ---- results ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Measured:
    value: float
    file: Path
    doc: dict
    kind: str  # the GPU kind it was measured on (gpu_kind())
    runs: int  # usable files of that kind the value is the best of


def figure_files(figure, result_dirs):
    """The files holding `figure`: STEP.json and STEP.N.json in each directory, else the
    fallback pattern's matches."""
    files = []
    for d in result_dirs:
        files += sorted(Path(d).glob(f"{figure.step}.json"))
        files += sorted(p for p in Path(d).glob(f"{figure.step}.*.json")
                        if re.fullmatch(r"\d+", p.name[len(figure.step) + 1:-len(".json")]))
    if not files and figure.fallback:
        for d in result_dirs:
            files += sorted(Path(d).glob(figure.fallback))
    return files


def better(direction, a, b):
    """Whether value a is strictly better than b."""
    return a < b if direction == "lower" else a > b


def measure(figure, result_dirs, step_status):
    """The best usable value of `figure` over its files for each GPU kind they were measured on
    ({kind: Measured}, empty when none is usable), and the problems met (why none is)."""
    files = figure_files(figure, result_dirs)
    if not files:
        status = step_status.get(figure.step)
        return {}, f"no result ({status})" if status and status != "pass" else "no result"
    best, problems = {}, []
    for f in files:
        stem = f.name[:-len(".json")]
        status = step_status.get(stem)
        if status is not None and status != "pass":
            problems.append(f"{f.name}: its run ended {status}")
            continue
        try:
            doc = json.loads(f.read_text())
        except (OSError, json.JSONDecodeError) as e:
            problems.append(f"{f.name}: unreadable ({e})")
            continue
        try:
            wrong = [f"{p} is {lookup(doc, p)!r}, want {v!r}" for p, v in figure.expect
                     if not _same_value(lookup(doc, p), v)]
            value = lookup(doc, figure.path)
        except LookupError as e:
            problems.append(f"{f.name}: {e}")
            continue
        if wrong:
            problems.append(f"{f.name}: " + "; ".join(wrong))
            continue
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or value <= 0):
            problems.append(f"{f.name}: {figure.path} is {value!r}, not a positive number")
            continue
        kind = gpu_kind(doc)
        if kind is None:
            problems.append(f"{f.name}: machine.gpu names no GPU, so no baseline applies")
            continue
        runs = best[kind].runs + 1 if kind in best else 1
        if kind not in best or better(figure.direction, value, best[kind].value):
            best[kind] = Measured(float(value), f, doc, kind, runs)
        best[kind].runs = runs
    return best, "; ".join(problems)


def ratio(direction, now, base):
    """now against base, greater than 1 when now is better."""
    return base / now if direction == "lower" else now / base


# ---- baseline --------------------------------------------------------------------------------

def load_baseline(path, figures):
    if not Path(path).exists():
        return {"figures": {}}
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise BaselineError(f"{path}: {e}") from e
    entries = doc.get("figures")
    if not isinstance(entries, dict):
        raise BaselineError(f"{path}: no \"figures\" object")
    by_name = {f.name: f for f in figures}
    for name, kinds in entries.items():
        if not isinstance(kinds, dict) or not kinds:
            raise BaselineError(f"{path}: {name}: must map GPU kinds (\"H200\", ...) to entries")
        if "value" in kinds:
            raise BaselineError(f"{path}: {name}: an entry with no GPU kind; put it under the "
                                f"kind it was measured on (figures.{name}.H200 for an H200)")
        for kind, entry in kinds.items():
            value = entry.get("value") if isinstance(entry, dict) else None
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise BaselineError(f"{path}: {name}.{kind}: value must be a positive number")
            direction = entry.get("direction")
            if direction not in ("lower", "higher"):
                raise BaselineError(f"{path}: {name}.{kind}: direction must be lower or higher")
            if name in by_name and by_name[name].direction != direction:
                raise BaselineError(f"{path}: {name}.{kind}: direction {direction}, but the "
                                    f"figure's is {by_name[name].direction}")
    return doc


def repo_relative(path):
    path = Path(path).resolve()
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


def git_head():
    try:
        out = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10, check=True)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def source_commit(args, run, measured):
    """--commit, else the commit bench-check recorded, else this tree's HEAD, else the JSON's."""
    for c in (args.commit, run.get("commit"), git_head(),
              measured.doc.get("machine", {}).get("commit")):
        if c and c != "unknown":
            return c
    return "unknown"


def source_date(run, measured):
    for stamp in (measured.doc.get("machine", {}).get("time_utc"), run.get("time_utc")):
        if isinstance(stamp, str) and re.match(r"\d{4}-\d\d-\d\d", stamp):
            return stamp[:10]
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def default_archive(kind):
    """bench/results/bench-check-<kind>-<UTC date>, as the committed runs are named."""
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    slug = re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")
    return REPO / "bench" / "results" / f"bench-check-{slug}-{today}"


def new_entry(figure, measured, args, run):
    """The baseline entry for `measured` (stored under its GPU kind). Its JSON is recorded where
    it is when it is already under bench/results/, else copied into the archive folder first,
    so that every entry names a file that can be committed beside the baseline."""
    json_path = measured.file.resolve()
    if RESULTS not in json_path.parents:
        archive = Path(args.archive) if args.archive else default_archive(measured.kind)
        if not archive.is_absolute():
            archive = REPO / archive
        archive.mkdir(parents=True, exist_ok=True)
        json_path = archive / measured.file.name
        shutil.copyfile(measured.file, json_path)
    entry = {"what": figure.what, "value": measured.value, "unit": figure.unit,
             "direction": figure.direction, "date": source_date(run, measured),
             "commit": source_commit(args, run, measured), "json": repo_relative(json_path),
             "value_path": figure.path}
    note = args.note
    if note is None and run.get("dirty"):
        note = "measured on a tree with uncommitted changes on top of this commit"
    if note:
        entry["note"] = note
    return entry


# ---- the comparison --------------------------------------------------------------------------

@dataclasses.dataclass
class Row:
    figure: Figure
    status: str  # pass, FAIL, NEW, SKIPPED
    gpu: str = None  # the GPU kind whose baseline applies (None: no result names one)
    base: float = None
    now: float = None
    ratio: float = None
    why: str = ""
    change: str = ""  # raised or added, with --update
    file: str = ""


def selected(figure, only):
    return not only or bool({figure.group, figure.name, figure.step} & set(only))


def run_kinds(rows):
    """The GPU kinds the compared results were measured on, in the order first met."""
    return list(dict.fromkeys(r.gpu for r in rows if r.now is not None))


def compare(figures, baseline_doc, result_dirs, tolerance, only=(), step_status=None,
            update=False, entry_for=None):
    """One Row per figure and GPU kind its results were measured on (one per figure when they
    agree, as they do when one machine ran them all); with update, raises or adds baseline_doc's
    entries of those kinds in place (entry_for builds a new entry from a figure and its
    Measured)."""
    step_status = step_status or {}
    entries = baseline_doc.setdefault("figures", {})
    measured = {f.name: measure(f, result_dirs, step_status) for f in figures
                if selected(f, only)}
    kinds = list(dict.fromkeys(k for best, _ in measured.values() for k in best))
    # A figure with no result (failed or skipped) shows the baseline of the run's kind, when
    # the run has one.
    run_kind = kinds[0] if len(kinds) == 1 else None
    rows = []
    for figure in figures:
        per_kind = entries.get(figure.name, {})
        if figure.name not in measured:
            rows.append(Row(figure, "SKIPPED", gpu=run_kind,
                            base=per_kind.get(run_kind, {}).get("value"),
                            why="not selected (BENCH_CHECK_ONLY, --only)"))
            continue
        best, why = measured[figure.name]
        if not best:
            rows.append(Row(figure, "FAIL", gpu=run_kind,
                            base=per_kind.get(run_kind, {}).get("value"), why=why))
            continue
        for kind, m in best.items():
            entry = per_kind.get(kind)
            base = entry["value"] if entry else None
            row = Row(figure, "NEW", gpu=kind, base=base, now=m.value,
                      file=repo_relative(m.file), why=why)
            rows.append(row)
            if m.runs > 1:
                row.why = f"best of {m.runs}" + (f"; {why}" if why else "")
            if entry is None:
                row.why = f"no {kind} baseline yet" + (f"; {row.why}" if row.why else "")
            else:
                row.ratio = ratio(figure.direction, m.value, base)
                limit = entry.get("tolerance", tolerance)
                row.status = "pass" if row.ratio >= 1 - limit - 1e-12 else "FAIL"
            if update and (entry is None or better(figure.direction, m.value, base)):
                entries.setdefault(figure.name, {})[kind] = entry_for(figure, m)
                row.change = "added" if entry is None else "raised"
    return rows


def _number(v, unit):
    if v is None:
        return "-"
    if unit == "IOPS":
        return f"{v / 1e6:.4g} M"
    if unit == "s":
        return f"{v:.4g} s"
    return f"{v:.4g}"


def title(rows):
    """The line above the table: whose baselines the run was compared with."""
    kinds = run_kinds(rows)
    if not kinds:
        return "baselines for no GPU kind: no result names its GPU (machine.gpu)"
    if len(kinds) == 1:
        return f"baselines for {kinds[0]}"
    return (f"baselines for {', '.join(kinds)}: the results were measured on more than one "
            "kind of GPU; each is compared with its own kind's (column gpu)")


def table(rows, tolerance):
    mixed = len(run_kinds(rows)) > 1
    head = ("figure",) + (("gpu",) if mixed else ()) + (
        "better", "baseline", "now", "now/base", "status", "")
    lines = [head]
    for r in rows:
        status = r.status + (f" ({r.change})" if r.change else "")
        lines.append((r.figure.name,) + ((r.gpu or "-",) if mixed else ()) + (
            r.figure.direction, _number(r.base, r.figure.unit), _number(r.now, r.figure.unit),
            "-" if r.ratio is None else f"{r.ratio:.3f}", status, r.why))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    text = [title(rows)]
    text += ["  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1]
             for line in lines]
    failed = sum(r.status == "FAIL" for r in rows)
    text.append(f"now/base: better is higher (baseline / now for seconds); below "
                f"{1 - tolerance:.3g} fails. {failed} failed, "
                f"{sum(r.status == 'pass' for r in rows)} passed, "
                f"{sum(r.status == 'NEW' for r in rows)} new, "
                f"{sum(r.status == 'SKIPPED' for r in rows)} skipped.")
    return "\n".join(line.rstrip() for line in text)


def write_baseline(path, doc, figures):
    """Writes doc with its figures in FIGURES order (others after), each figure's GPU kinds in
    the order they were first added."""
    order = {f.name: i for i, f in enumerate(figures)}
    entries = doc.get("figures", {})
    doc["figures"] = dict(sorted(entries.items(), key=lambda kv: (order.get(kv[0], len(order)),
                                                                  kv[0])))
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")


def read_run(result_dirs):
    """bench-check's run.json (commit, time, BENCH_CHECK_ONLY, status of each step)."""
    for d in result_dirs:
        p = Path(d) / RUN_FILE
        if p.exists():
            try:
                return json.loads(p.read_text())
            except (OSError, json.JSONDecodeError):
                return {}
    return {}


def main(argv=None, figures=None):
    figures = FIGURES if figures is None else figures
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", default=str(DEFAULT_BASELINE), help="[%(default)s]")
    p.add_argument("--results", action="append", default=[], metavar="DIR",
                   help="directory of the runs' JSON (repeatable)")
    p.add_argument("--tolerance", type=float, default=0.05,
                   help="a figure fails below 1 - TOLERANCE of its baseline [%(default)s]")
    p.add_argument("--only", default=None,
                   help="groups or figures to compare, space-separated (default: run.json's "
                        "BENCH_CHECK_ONLY, else all)")
    p.add_argument("--update", action="store_true",
                   help="raise the baseline entries of the results' GPU kind that they beat "
                        "and add those the kind lacks (never lowers one)")
    p.add_argument("--archive", metavar="DIR",
                   help="with --update: where the JSON of a new entry is copied when it is not "
                        "under bench/results/ already "
                        "[bench/results/bench-check-<gpu kind>-<UTC date>]")
    p.add_argument("--commit", help="with --update: the commit to record (default: run.json's, "
                                    "else git HEAD, else the JSON's)")
    p.add_argument("--note", help="with --update: the note to record on the entries written "
                                  "(default: one saying so when run.json marks the tree as "
                                  "having uncommitted changes)")
    p.add_argument("--report", metavar="FILE", help="also write the rows as JSON")
    p.add_argument("--list", action="store_true", help="print the figures and exit")
    p.add_argument("--steps", action="store_true",
                   help="print the steps the figures selected by --only need, one a line, and "
                        "exit (scripts/bench-check runs these)")
    args = p.parse_args(argv)

    known = {f.group for f in figures} | {f.name for f in figures} | {f.step for f in figures}
    if args.list:
        for f in figures:
            print(f"{f.name:18} {f.group:7} {f.direction:6} {f.step}.json  {f.path}"
                  + (f"  (or {f.fallback})" if f.fallback else ""))
        return 0
    if args.steps:
        only = (args.only or "").split()
        unknown = [o for o in only if o not in known]
        if unknown:
            p.error(f"--only: unknown {' '.join(unknown)} (see --list)")
        for step in dict.fromkeys(f.step for f in figures if selected(f, only)):
            print(step)
        return 0
    if not args.results:
        p.error("--results DIR is required")
    if not 0 <= args.tolerance < 1:
        p.error("--tolerance must be in [0, 1)")
    for d in args.results:
        if not Path(d).is_dir():
            p.error(f"--results {d}: not a directory")

    try:
        baseline = load_baseline(args.baseline, figures)
    except BaselineError as e:
        print(f"bench_compare: {e}", file=sys.stderr)
        return 2
    run = read_run(args.results)
    only = (args.only if args.only is not None else run.get("only", "")).split()
    unknown = [o for o in only if o not in known]
    if unknown:
        p.error(f"--only: unknown {' '.join(unknown)} (see --list)")

    rows = compare(figures, baseline, args.results, args.tolerance, only=only,
                   step_status=run.get("steps", {}), update=args.update,
                   entry_for=lambda f, m: new_entry(f, m, args, run))
    print(table(rows, args.tolerance))
    for name in sorted(set(baseline["figures"]) - {f.name for f in figures}):
        print(f"note: baseline entry {name} names no figure of this script; left as it is")
    changed = [r for r in rows if r.change]
    if args.update:
        if changed:
            write_baseline(args.baseline, baseline, figures)
            print(f"{args.baseline}: " + ", ".join(f"{r.figure.name} {r.change} ({r.gpu})"
                                                   for r in changed))
        else:
            print(f"{args.baseline}: nothing better than the baseline, left as it is")
    if args.report:
        Path(args.report).write_text(json.dumps(
            {"tolerance": args.tolerance, "gpus": run_kinds(rows), "rows": [
                {"figure": r.figure.name, "gpu": r.gpu, "direction": r.figure.direction,
                 "unit": r.figure.unit, "baseline": r.base, "now": r.now, "ratio": r.ratio,
                 "status": r.status, "change": r.change or None, "file": r.file or None,
                 "why": r.why or None}
                for r in rows]}, indent=1) + "\n")
    return 1 if any(r.status == "FAIL" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
