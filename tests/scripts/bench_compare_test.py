"""Tests of scripts/bench_compare.py and scripts/bench-check, on the CPU (no GPU, no build).

    python3 -m unittest tests/scripts/bench_compare_test.py        # from the repository root
    python3 -m unittest discover -s tests/scripts -p '*_test.py'

The comparison is tested on made-up figures and results, measured on an H200 unless a test says
otherwise (baselines are kept per GPU kind); the figure table on the committed JSON (every
baseline entry must come back from the file it names, measured on its kind of GPU); bench-check
itself with a stand-in `bam` that checks each command line and replays the committed JSON.
"""

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import unittest.mock
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import bench_compare as bc  # noqa: E402

RESULTS = REPO / "bench" / "results"
GRAPH_STUDY = RESULTS / "graph-study-h200-2026-12-02-scale25"
H100_RUN = RESULTS / "bench-check-h100-2026-12-05-algorithms"
# The baseline as first seeded from the committed runs replayed below (H200: 2026-11-30 and
# 12-02; H100: 2026-12-05): the real one only rises, so replays compare with this frozen copy.
SEED_BASELINE = Path(__file__).resolve().parent / "seed_baseline.json"

H200 = "NVIDIA H200, 132 SMs, 139.8 GiB, L2 60 MiB, driver 13.0, runtime 13.0"
H100 = "NVIDIA H100 80GB HBM3, 132 SMs, 79.2 GiB, L2 50 MiB, driver 13.0, runtime 13.0"

SECONDS = bc.Figure(name="app-time", group="app", step="app", path="seconds", direction="lower",
                    unit="s", what="an app's time", expect=(("backend", "host-memory"),))
RATE = bc.Figure(name="hit-rate", group="hits", step="hits",
                 path="points[line_bytes=512].fraction", direction="higher", unit="of HBM",
                 what="hits over HBM", expect=(("points[line_bytes=512].wrong", 0),),
                 fallback="hits-h200-*.json")
FIGURES = [SECONDS, RATE]


def write_json(path, doc):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def app_result(seconds, backend="host-memory", gpu=H200):
    return {"machine": {"commit": "abc", "time_utc": "2027-01-02T03:04:05Z", "gpu": gpu},
            "backend": backend, "seconds": seconds}


def hits_result(fraction, wrong=0, gpu=H200):
    return {"machine": {"commit": "abc", "time_utc": "2027-01-03T00:00:00Z", "gpu": gpu},
            "points": [{"line_bytes": 512, "fraction": fraction, "wrong": wrong},
                       {"line_bytes": 4096, "fraction": 0.9, "wrong": 0}]}


def entry(value, direction):
    return {"value": value, "direction": direction, "date": "2026-12-01", "commit": "old",
            "json": "bench/results/old.json"}


class Case(unittest.TestCase):
    """A temp folder with an H200 baseline (app-time 1.0 s, hit-rate 0.5) and an empty results
    dir."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.results = self.tmp / "results"
        self.results.mkdir()
        self.baseline = self.tmp / "baseline.json"
        write_json(self.baseline, {"about": "kept as it is", "figures": {
            "app-time": {"H200": entry(1.0, "lower")},
            "hit-rate": {"H200": entry(0.5, "higher")}}})

    def run_compare(self, *extra, figures=FIGURES):
        report = self.tmp / "report.json"
        if "--update" in extra and "--archive" not in extra:
            extra += ("--archive", str(self.tmp / "archive"))  # never into bench/results/
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                rc = bc.main(["--baseline", str(self.baseline), "--results", str(self.results),
                              "--report", str(report), *extra], figures=figures)
            except SystemExit as e:
                rc = e.code
        self.output = out.getvalue()
        rows = json.loads(report.read_text())["rows"] if report.exists() else []
        return rc, {r["figure"]: r for r in rows}

    def results_of(self, seconds=None, fraction=None, gpu=H200):
        if seconds is not None:
            write_json(self.results / "app.json", app_result(seconds, gpu=gpu))
        if fraction is not None:
            write_json(self.results / "hits.json", hits_result(fraction, gpu=gpu))

    def stored(self):
        return json.loads(self.baseline.read_text())

    def stored_entry(self, figure, kind="H200"):
        return self.stored()["figures"][figure][kind]


class LossTest(Case):
    def test_a_six_percent_loss_fails(self):
        self.results_of(seconds=1.06, fraction=0.47)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertEqual(rows["app-time"]["status"], "FAIL")
        self.assertEqual(rows["hit-rate"]["status"], "FAIL")

    def test_a_four_percent_loss_passes(self):
        self.results_of(seconds=1.04, fraction=0.48)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["status"], "pass")
        self.assertEqual(rows["hit-rate"]["status"], "pass")

    def test_a_wider_tolerance_lets_a_six_percent_loss_pass(self):
        self.results_of(seconds=1.06, fraction=0.47)
        rc, _ = self.run_compare("--tolerance", "0.08")
        self.assertEqual(rc, 0, self.output)

    def test_an_entry_may_carry_its_own_tolerance(self):
        doc = self.stored()
        doc["figures"]["app-time"]["H200"]["tolerance"] = 0.10
        write_json(self.baseline, doc)
        self.results_of(seconds=1.08, fraction=0.5)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["status"], "pass")


class DirectionTest(Case):
    def test_fewer_seconds_and_a_higher_rate_are_both_better(self):
        self.results_of(seconds=0.8, fraction=0.6)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertAlmostEqual(rows["app-time"]["ratio"], 1.25)
        self.assertAlmostEqual(rows["hit-rate"]["ratio"], 1.2)

    def test_more_seconds_and_a_lower_rate_are_both_worse(self):
        self.results_of(seconds=1.25, fraction=0.4)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertAlmostEqual(rows["app-time"]["ratio"], 0.8)
        self.assertAlmostEqual(rows["hit-rate"]["ratio"], 0.8)

    def test_a_baseline_whose_direction_disagrees_with_the_figure_is_an_error(self):
        doc = self.stored()
        doc["figures"]["app-time"]["H200"]["direction"] = "higher"
        write_json(self.baseline, doc)
        self.results_of(seconds=1.0, fraction=0.5)
        rc, _ = self.run_compare()
        self.assertEqual(rc, 2)
        self.assertIn("direction", self.output)


class UpdateTest(Case):
    def test_an_improvement_passes_and_update_raises_the_baseline(self):
        self.results_of(seconds=0.9, fraction=0.55)
        archive = self.tmp / "archive"
        rc, rows = self.run_compare("--update", "--commit", "1234567890ab", "--archive",
                                    str(archive))
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["change"], "raised")
        app = self.stored_entry("app-time")
        self.assertEqual(app["value"], 0.9)
        self.assertEqual(app["commit"], "1234567890ab")
        self.assertEqual(app["date"], "2027-01-02")
        self.assertEqual(app["json"], str(archive / "app.json"))
        self.assertTrue((archive / "app.json").exists())
        self.assertEqual(self.stored_entry("hit-rate")["value"], 0.55)
        self.assertEqual(self.stored_entry("hit-rate")["direction"], "higher")
        self.assertEqual(self.stored()["about"], "kept as it is")

    def test_update_names_a_result_already_under_bench_results_where_it_is(self):
        self.results_of(seconds=0.9)
        archive = self.tmp / "archive"
        with unittest.mock.patch.object(bc, "RESULTS", self.results.resolve()):
            rc, _ = self.run_compare("--update", "--archive", str(archive))
        self.assertEqual(rc, 1)  # hit-rate has no result
        stored = self.stored_entry("app-time")
        self.assertEqual(stored["json"], str((self.results / "app.json").resolve()))
        self.assertFalse(archive.exists())

    def test_update_never_lowers_the_baseline(self):
        self.results_of(seconds=1.03, fraction=0.49)
        rc, rows = self.run_compare("--update")
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(self.stored_entry("app-time")["value"], 1.0)
        self.assertEqual(self.stored_entry("hit-rate")["value"], 0.5)
        self.assertEqual(self.stored_entry("app-time")["commit"], "old")
        self.assertIsNone(rows["app-time"]["change"])

    def test_update_raises_what_improved_and_still_fails_what_lost(self):
        self.results_of(seconds=0.5, fraction=0.3)
        rc, _ = self.run_compare("--update")
        self.assertEqual(rc, 1)
        self.assertEqual(self.stored_entry("app-time")["value"], 0.5)
        self.assertEqual(self.stored_entry("hit-rate")["value"], 0.5)

    def test_update_records_the_commit_bench_check_ran_on(self):
        self.results_of(seconds=0.9)
        write_json(self.results / "run.json", {"commit": "feedfacecafe", "dirty": True,
                                               "only": "app", "steps": {"app": "pass"}})
        rc, _ = self.run_compare("--update")
        self.assertEqual(rc, 0, self.output)
        stored = self.stored_entry("app-time")
        self.assertEqual(stored["commit"], "feedfacecafe")
        self.assertIn("uncommitted", stored["note"])

    def test_a_note_given_to_update_replaces_the_uncommitted_changes_one(self):
        self.results_of(seconds=0.9)
        write_json(self.results / "run.json", {"commit": "feedfacecafe", "dirty": True,
                                               "only": "app", "steps": {"app": "pass"}})
        rc, _ = self.run_compare("--update", "--commit", "0123456789ab", "--note",
                                 "tree 0123456789ab; run.json names a stale checkout")
        self.assertEqual(rc, 0, self.output)
        stored = self.stored_entry("app-time")
        self.assertEqual(stored["commit"], "0123456789ab")
        self.assertEqual(stored["note"], "tree 0123456789ab; run.json names a stale checkout")

    def test_a_figure_with_no_baseline_is_new_and_update_adds_it(self):
        write_json(self.baseline, {"figures": {"app-time": {"H200": entry(1.0, "lower")}}})
        self.results_of(seconds=1.0, fraction=0.42)
        rc, rows = self.run_compare("--update")
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["hit-rate"]["status"], "NEW")
        self.assertEqual(self.stored_entry("hit-rate")["value"], 0.42)
        self.assertEqual(list(self.stored()["figures"]), ["app-time", "hit-rate"])


class GpuKindTest(Case):
    def test_a_known_model_is_its_short_name_and_any_other_its_full_name(self):
        def kind(gpu):
            return bc.gpu_kind({"machine": {"gpu": gpu}})
        self.assertEqual(kind(H100), "H100")
        self.assertEqual(kind(H200), "H200")
        self.assertEqual(kind("NVIDIA H100 PCIe, 114 SMs, 79.1 GiB"), "NVIDIA H100 PCIe")
        self.assertEqual(kind("NVIDIA A100-SXM4-80GB, 108 SMs"), "NVIDIA A100-SXM4-80GB")
        self.assertIsNone(kind(""))
        self.assertIsNone(bc.gpu_kind({"machine": {"commit": "abc"}}))
        self.assertIsNone(bc.gpu_kind({}))

    def test_a_run_on_an_h100_with_only_h200_baselines_is_new_and_passes(self):
        self.results_of(seconds=2.0, fraction=0.25, gpu=H100)  # half the H200's figures
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual({r["status"] for r in rows.values()}, {"NEW"})
        self.assertEqual({r["gpu"] for r in rows.values()}, {"H100"})
        self.assertIsNone(rows["app-time"]["baseline"])
        self.assertIn("baselines for H100", self.output.splitlines()[0])

    def test_a_run_on_an_h200_is_compared_with_the_h200_values(self):
        doc = self.stored()
        doc["figures"]["app-time"]["H100"] = entry(2.0, "lower")
        write_json(self.baseline, doc)
        self.results_of(seconds=1.06, fraction=0.5)  # 6% slower than the H200's, not the H100's
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertEqual(rows["app-time"]["status"], "FAIL")
        self.assertEqual(rows["app-time"]["baseline"], 1.0)
        self.assertIn("baselines for H200", self.output.splitlines()[0])

    def test_a_run_on_an_h100_is_compared_with_the_h100_values(self):
        doc = self.stored()
        doc["figures"]["app-time"]["H100"] = entry(2.0, "lower")
        write_json(self.baseline, doc)
        self.results_of(seconds=2.04, gpu=H100)
        rc, rows = self.run_compare("--only", "app")
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["status"], "pass")
        self.assertAlmostEqual(rows["app-time"]["ratio"], 2.0 / 2.04)

    def test_update_writes_only_the_kind_of_the_run(self):
        self.results_of(seconds=0.5, fraction=0.9, gpu=H100)  # would beat the H200's too
        rc, rows = self.run_compare("--update")
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["change"], "added")
        figures = self.stored()["figures"]
        self.assertEqual(figures["app-time"]["H100"]["value"], 0.5)
        self.assertEqual(figures["hit-rate"]["H100"]["value"], 0.9)
        self.assertEqual(figures["app-time"]["H200"], entry(1.0, "lower"))
        self.assertEqual(figures["hit-rate"]["H200"], entry(0.5, "higher"))
        self.assertEqual(list(figures["app-time"]), ["H200", "H100"])

    def test_update_raises_the_h100_entry_and_leaves_the_h200_one(self):
        doc = self.stored()
        doc["figures"]["app-time"]["H100"] = entry(2.0, "lower")
        write_json(self.baseline, doc)
        self.results_of(seconds=1.5, gpu=H100)
        rc, rows = self.run_compare("--update", "--only", "app")
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["change"], "raised")
        self.assertEqual(self.stored_entry("app-time", "H100")["value"], 1.5)
        self.assertEqual(self.stored_entry("app-time", "H200"), entry(1.0, "lower"))

    def test_results_from_two_kinds_are_each_compared_with_their_own(self):
        doc = self.stored()
        doc["figures"]["hit-rate"]["H100"] = entry(0.3, "higher")
        write_json(self.baseline, doc)
        self.results_of(seconds=1.0)
        write_json(self.results / "hits.json", hits_result(0.3, gpu=H100))
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual((rows["app-time"]["gpu"], rows["app-time"]["baseline"]), ("H200", 1.0))
        self.assertEqual((rows["hit-rate"]["gpu"], rows["hit-rate"]["baseline"]), ("H100", 0.3))
        self.assertIn("more than one kind of GPU", self.output.splitlines()[0])

    def test_repetitions_on_two_kinds_give_a_row_for_each(self):
        write_json(self.results / "app.json", app_result(1.0))
        write_json(self.results / "app.2.json", app_result(0.7, gpu=H100))
        rc, _ = self.run_compare("--only", "app")
        self.assertEqual(rc, 0, self.output)
        report = json.loads((self.tmp / "report.json").read_text())
        self.assertEqual(report["gpus"], ["H200", "H100"])
        self.assertEqual([(r["gpu"], r["status"]) for r in report["rows"]
                          if r["figure"] == "app-time"], [("H200", "pass"), ("H100", "NEW")])

    def test_a_result_that_names_no_gpu_fails(self):
        write_json(self.results / "app.json", app_result(1.0, gpu=""))
        rc, rows = self.run_compare("--only", "app")
        self.assertEqual(rc, 1)
        self.assertEqual(rows["app-time"]["status"], "FAIL")
        self.assertIn("machine.gpu", rows["app-time"]["why"])

    def test_an_entry_with_no_gpu_kind_is_an_error(self):
        write_json(self.baseline, {"figures": {"app-time": entry(1.0, "lower")}})
        self.results_of(seconds=1.0, fraction=0.5)
        rc, _ = self.run_compare()
        self.assertEqual(rc, 2)
        self.assertIn("app-time.H200", self.output)

    def test_the_default_archive_is_named_after_the_gpu_kind(self):
        self.assertTrue(bc.default_archive("H100").name.startswith("bench-check-h100-20"))
        self.assertTrue(bc.default_archive("NVIDIA A100-SXM4-80GB").name
                        .startswith("bench-check-nvidia-a100-sxm4-80gb-20"))


class MissingTest(Case):
    def test_a_missing_result_fails(self):
        self.results_of(fraction=0.5)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertEqual(rows["app-time"]["status"], "FAIL")
        self.assertIn("no result", rows["app-time"]["why"])

    def test_a_timed_out_run_fails_and_says_so(self):
        self.results_of(fraction=0.5)
        write_json(self.results / "run.json", {"steps": {"app": "TIMEOUT", "hits": "pass"}})
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertIn("TIMEOUT", rows["app-time"]["why"])

    def test_a_run_that_failed_does_not_count_even_if_it_wrote_json(self):
        self.results_of(seconds=0.5, fraction=0.5)
        write_json(self.results / "run.json", {"steps": {"app": "FAIL(3)", "hits": "pass"}})
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertEqual(rows["app-time"]["status"], "FAIL")
        self.assertIn("FAIL(3)", rows["app-time"]["why"])

    def test_a_figure_left_out_by_only_is_skipped_not_failed(self):
        self.results_of(fraction=0.5)
        rc, rows = self.run_compare("--only", "hits")
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["status"], "SKIPPED")
        self.assertEqual(rows["hit-rate"]["status"], "pass")

    def test_only_defaults_to_what_bench_check_ran(self):
        self.results_of(seconds=1.0)
        write_json(self.results / "run.json", {"only": "app", "steps": {"app": "pass"}})
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["hit-rate"]["status"], "SKIPPED")

    def test_an_unreadable_result_fails(self):
        (self.results / "app.json").write_text("{ not json")
        self.results_of(fraction=0.5)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertIn("unreadable", rows["app-time"]["why"])

    def test_a_result_in_another_configuration_fails(self):
        write_json(self.results / "app.json", app_result(0.5, backend="tiled"))
        self.results_of(fraction=0.5)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertIn("backend", rows["app-time"]["why"])

    def test_wrong_reads_fail_the_figure(self):
        self.results_of(seconds=1.0)
        write_json(self.results / "hits.json", hits_result(0.9, wrong=3))
        rc, rows = self.run_compare()
        self.assertEqual(rc, 1)
        self.assertEqual(rows["hit-rate"]["status"], "FAIL")


class FilesTest(Case):
    def test_repetitions_are_compared_by_their_best(self):
        write_json(self.results / "app.json", app_result(1.2))
        write_json(self.results / "app.2.json", app_result(0.99))
        write_json(self.results / "app.3.json", app_result(1.1))
        self.results_of(fraction=0.5)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["app-time"]["now"], 0.99)
        self.assertIn("best of 3", rows["app-time"]["why"])

    def test_a_fallback_file_stands_in_only_when_the_step_wrote_none(self):
        write_json(self.results / "hits-h200-2026-11-30.json", hits_result(0.51))
        self.results_of(seconds=1.0)
        rc, rows = self.run_compare()
        self.assertEqual(rc, 0, self.output)
        self.assertEqual(rows["hit-rate"]["now"], 0.51)
        self.results_of(fraction=0.5)
        rc, rows = self.run_compare()
        self.assertEqual(rows["hit-rate"]["now"], 0.5)


class LookupTest(unittest.TestCase):
    DOC = {"points": [{"queues": 128, "queue_map": "warp", "iops": 1.0},
                      {"queues": 512, "queue_map": "warp", "iops": 2.0},
                      {"queues": 512, "queue_map": "lane", "iops": 3.0}],
           "storage": {"devices": 4}}

    def test_a_selector_picks_the_one_matching_point(self):
        self.assertEqual(bc.lookup(self.DOC, "points[queues=512,queue_map=warp].iops"), 2.0)
        self.assertEqual(bc.lookup(self.DOC, "points[2].iops"), 3.0)
        self.assertEqual(bc.lookup(self.DOC, "storage.devices"), 4)

    def test_an_ambiguous_or_missing_selector_is_an_error(self):
        with self.assertRaisesRegex(LookupError, "2 elements"):
            bc.lookup(self.DOC, "points[queues=512].iops")
        with self.assertRaisesRegex(LookupError, "0 elements"):
            bc.lookup(self.DOC, "points[queues=64].iops")
        with self.assertRaisesRegex(LookupError, "no field"):
            bc.lookup(self.DOC, "storage.model")


class CommittedResultsTest(unittest.TestCase):
    """The real figure table against the committed JSON and bench/results/baseline.json."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)

    def compare(self, *dirs):
        report = self.tmp / "report.json"
        argv = ["--baseline", str(SEED_BASELINE), "--report", str(report)]
        for d in dirs:
            argv += ["--results", str(d)]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = bc.main(argv)
        return rc, {r["figure"]: r for r in json.loads(report.read_text())["rows"]}, out.getvalue()

    def test_every_baseline_entry_comes_back_from_the_file_it_names(self):
        baseline = json.loads((RESULTS / "baseline.json").read_text())["figures"]
        self.assertEqual(set(baseline), {f.name for f in bc.FIGURES})
        for f in bc.FIGURES:
            self.assertLessEqual({"H200", "H100"}, set(baseline[f.name]))
            for kind, e in baseline[f.name].items():
                with self.subTest(figure=f.name, gpu=kind):
                    self.assertEqual(e["direction"], f.direction)
                    doc = json.loads((REPO / e["json"]).read_text())
                    self.assertEqual(bc.gpu_kind(doc), kind)
                    self.assertEqual(bc.lookup(doc, e["value_path"]), e["value"])
                    for path, value in f.expect:
                        self.assertTrue(bc._same_value(bc.lookup(doc, path), value), path)

    def test_the_committed_runs_compare_equal_to_the_baseline(self):
        rc, rows, out = self.compare(RESULTS, GRAPH_STUDY)
        self.assertEqual(rc, 0, out)
        for name, row in rows.items():
            with self.subTest(figure=name):
                self.assertEqual(row["status"], "pass")
                self.assertAlmostEqual(row["ratio"], 1.0, places=12)

    def test_the_committed_h100_run_compares_equal_to_its_h100_baseline(self):
        rc, rows, out = self.compare(H100_RUN)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out.splitlines()[0], "baselines for H100")
        self.assertEqual(len(rows), len(bc.FIGURES))
        for name, row in rows.items():
            with self.subTest(figure=name):
                self.assertEqual((row["gpu"], row["status"]), ("H100", "pass"))
                self.assertAlmostEqual(row["ratio"], 1.0, places=12)

    def test_copies_named_as_bench_check_writes_them_compare_equal(self):
        out = self.tmp / "out"
        out.mkdir()
        for src, name in SOURCES.items():
            shutil.copyfile(src, out / f"{name}.json")
        rc, rows, text = self.compare(out)
        self.assertEqual(rc, 0, text)
        self.assertEqual({r["status"] for r in rows.values()}, {"pass"})
        self.assertEqual(len(rows), len(bc.FIGURES))


# ---- bench-check with a stand-in bam -------------------------------------------------------------

BAM_OPTANE = ["--backend", "emulated-ssd", "--line-bytes", "4096", "--cache-mode", "optimized",
              "--model", "optane", "--devices", "4"]
GEN = ["graph", "gen", "--kind", "kron", "--scale", "25", "--degree", "16", "--seed", "1",
       "--id-bytes", "8", "--out", "{out}"]
# The command each step must run (what measured the baselines), and the committed JSON the
# stand-in replays for it.
COMMANDS = {
    "io-e2e": ["bench", "io", "--figure", "e2e", "--seconds", "0.2"],
    "cache-lines": ["bench", "cache", "--side", "gpu", "--figure", "lines", "--seconds", "0.2"],
    "cache-elements": ["bench", "cache", "--side", "gpu", "--figure", "elements", "--seconds",
                       "0.2"],
}
SOURCES = {
    RESULTS / "io-e2e-h200-2026-11-30.json": "io-e2e",
    RESULTS / "cache-lines-h200-2026-11-30.json": "cache-lines",
    RESULTS / "cache-elements-h200-2026-11-30.json": "cache-elements",
}
for _app in ("bfs", "cc"):
    for _variant, _options in (("device-memory", ["--backend", "device-memory"]),
                               ("host-memory", ["--backend", "host-memory"]),
                               ("tiled", ["--backend", "tiled"]),
                               ("optane-4dev", BAM_OPTANE)):
        _step = f"{'bam' if _variant == 'optane-4dev' else 'base'}-kron25-{_app}-{_variant}"
        COMMANDS[_step] = [_app, "--graph", "{graph}", "--target", "gpu", *_options]
        SOURCES[GRAPH_STUDY / f"{_step}.json"] = _step

FAKE_BAM = textwrap.dedent("""\
    #!/usr/bin/env python3
    # Stands in for bam: checks the command line against the expected one and writes the
    # committed JSON of that step (FAKE_BAM_FAIL, _HANG: steps that fail or hang;
    # FAKE_BAM_SECONDS_FACTOR scales an app's time).
    import json, os, re, shutil, sys, time
    args = sys.argv[1:]
    conf = json.load(open(os.environ["FAKE_BAM_CONF"]))
    with open(conf["log"], "a") as log:
        log.write(json.dumps(args) + "\\n")
    if args[:2] == ["graph", "gen"]:
        out = args[args.index("--out") + 1]
        if [a if a != out else "{out}" for a in args] != conf["gen"]:
            sys.exit(f"unexpected command {args}")
        open(out, "w").write("a graph")
        sys.exit(0)
    path = args[args.index("--json") + 1]
    step = re.sub(r"(\\.[0-9]+)?\\.json$", "", os.path.basename(path))
    want = [a.replace("{graph}", conf["graph"]) for a in conf["commands"][step]]
    if args != want + ["--json", path]:
        sys.exit(f"unexpected command for {step}: {args}, want {want}")
    if step in os.environ.get("FAKE_BAM_HANG", "").split():
        time.sleep(600)
    if step in os.environ.get("FAKE_BAM_FAIL", "").split():
        sys.exit(3)
    doc = json.load(open(conf["sources"][step]))
    if "seconds" in doc and doc.get("app"):
        doc["seconds"] *= float(os.environ.get("FAKE_BAM_SECONDS_FACTOR", "1"))
    json.dump(doc, open(path, "w"))
    """)


@unittest.skipUnless(shutil.which("bash") and shutil.which("timeout"), "needs bash and timeout")
class BenchCheckTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.tmp)
        self.bam = self.tmp / "bam"
        self.bam.write_text(FAKE_BAM)
        self.bam.chmod(0o755)
        self.data = self.tmp / "data"
        self.log = self.tmp / "calls.log"
        self.baseline = self.tmp / "baseline.json"
        shutil.copyfile(SEED_BASELINE, self.baseline)
        self.conf = write_json(self.tmp / "conf.json", {
            "log": str(self.log), "gen": GEN, "graph": str(self.data / "kron25.bcsr"),
            "commands": COMMANDS, "sources": {v: str(k) for k, v in SOURCES.items()}})

    def bench_check(self, *args, out="out", **env):
        environment = dict(os.environ, BAM=str(self.bam), OUT=str(self.tmp / out),
                           BENCH_CHECK_DATA=str(self.data), BENCH_CHECK_BASELINE=str(self.baseline),
                           BENCH_CHECK_ARCHIVE=str(self.tmp / "archive"),
                           FAKE_BAM_CONF=str(self.conf), **env)
        p = subprocess.run([str(REPO / "scripts" / "bench-check"), *args], env=environment,
                           capture_output=True, text=True, timeout=300)
        compare = self.tmp / out / "compare.json"
        rows = json.loads(compare.read_text())["rows"] if compare.exists() else []
        return p.returncode, {r["figure"]: r for r in rows}, p.stdout + p.stderr

    def calls(self):
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def test_a_replay_of_the_committed_runs_passes_every_figure(self):
        rc, rows, out = self.bench_check()
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(rows), len(bc.FIGURES))
        self.assertEqual({r["status"] for r in rows.values()}, {"pass"}, out)
        self.assertEqual(sum(c[:2] == ["graph", "gen"] for c in self.calls()), 1)
        self.assertTrue((self.data / "kron25.bcsr").exists())
        run = json.loads((self.tmp / "out" / "run.json").read_text())
        self.assertEqual(set(run["steps"]), set(COMMANDS) | {"generate-kron25"})

    def test_a_second_call_keeps_the_graph(self):
        self.bench_check(BENCH_CHECK_ONLY="bfs-tiled")
        rc, rows, out = self.bench_check(BENCH_CHECK_ONLY="bfs-tiled")
        self.assertEqual(rc, 0, out)
        self.assertIn("kept from an earlier run", out)
        self.assertEqual(sum(c[:2] == ["graph", "gen"] for c in self.calls()), 1)

    def test_only_runs_the_named_groups_and_skips_the_rest(self):
        rc, rows, out = self.bench_check(BENCH_CHECK_ONLY="7a io-e2e")
        self.assertEqual(rc, 0, out)
        ran = {r for r, row in rows.items() if row["status"] != "SKIPPED"}
        self.assertEqual(ran, {"7a-512", "7a-4k", "io-e2e-512x256", "io-e2e-128x1024"})
        self.assertEqual(len(self.calls()), 2)  # no graph generated for them

    def test_a_failed_run_fails_its_figures(self):
        rc, rows, out = self.bench_check(BENCH_CHECK_ONLY="cc",
                                         FAKE_BAM_FAIL="bam-kron25-cc-optane-4dev")
        self.assertEqual(rc, 1, out)
        self.assertEqual(rows["cc-optane-4dev"]["status"], "FAIL")
        self.assertIn("FAIL(3)", rows["cc-optane-4dev"]["why"])
        self.assertEqual(rows["cc-tiled"]["status"], "pass")

    def test_a_hung_run_is_cut_by_its_limit_and_fails(self):
        rc, rows, out = self.bench_check(BENCH_CHECK_ONLY="io-e2e 7b", FAKE_BAM_HANG="io-e2e",
                                         BENCH_CHECK_RUN_LIMIT_S="2")
        self.assertEqual(rc, 1, out)
        self.assertIn("TIMEOUT", rows["io-e2e-512x256"]["why"])
        self.assertEqual(rows["7b-512"]["status"], "pass")

    def test_a_graph_that_cannot_be_generated_fails_the_app_figures(self):
        conf = json.loads(self.conf.read_text())
        conf["gen"] = ["never"]
        write_json(self.conf, conf)
        rc, rows, out = self.bench_check(BENCH_CHECK_ONLY="bfs")
        self.assertEqual(rc, 1, out)
        self.assertIn("no-graph", rows["bfs-tiled"]["why"])
        self.assertFalse((self.data / "kron25.bcsr").exists())

    def test_update_raises_the_figures_a_faster_run_beat(self):
        rc, rows, out = self.bench_check("--update", BENCH_CHECK_ONLY="bfs",
                                         FAKE_BAM_SECONDS_FACTOR="0.5")
        self.assertEqual(rc, 0, out)
        stored = json.loads(self.baseline.read_text())["figures"]
        self.assertAlmostEqual(stored["bfs-optane-4dev"]["H200"]["value"], 0.896202 / 2)
        self.assertEqual(stored["cc-optane-4dev"]["H200"]["value"], 1.20913)
        self.assertTrue((self.tmp / "archive" / "bam-kron25-bfs-optane-4dev.json").exists())
        # the JSON's own date
        self.assertEqual(stored["bfs-optane-4dev"]["H200"]["date"], "2026-12-02")

    def test_a_replay_of_the_h100_run_with_only_h200_baselines_is_new_not_failed(self):
        baseline = json.loads(self.baseline.read_text())
        baseline["figures"] = {name: {"H200": kinds["H200"]}
                               for name, kinds in baseline["figures"].items()}
        write_json(self.baseline, baseline)
        conf = json.loads(self.conf.read_text())
        conf["sources"] = {step: str(H100_RUN / f"{step}.json") for step in COMMANDS}
        write_json(self.conf, conf)
        rc, rows, out = self.bench_check("--update")
        self.assertEqual(rc, 0, out)
        self.assertIn("baselines for H100", out)
        self.assertEqual({r["status"] for r in rows.values()}, {"NEW"}, out)
        stored = json.loads(self.baseline.read_text())["figures"]
        self.assertEqual(stored["7b-512"]["H100"]["value"], 0.296193)
        self.assertEqual({name: kinds["H200"] for name, kinds in stored.items()},
                         {name: kinds["H200"] for name, kinds in baseline["figures"].items()})

    def test_repetitions_write_one_json_each(self):
        rc, rows, out = self.bench_check(BENCH_CHECK_ONLY="7b", BENCH_CHECK_REPEAT="2")
        self.assertEqual(rc, 0, out)
        self.assertTrue((self.tmp / "out" / "cache-elements.2.json").exists())
        self.assertIn("best of 2", rows["7b-512"]["why"])


if __name__ == "__main__":
    unittest.main()
