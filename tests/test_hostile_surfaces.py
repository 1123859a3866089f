"""Hostile surfaces: run ids, params files, note text in written tables, damaged databases.

Generated inputs go through the command line; every case ends in a one-line error (exit 2)
without a traceback, or in a clean run, and nothing is written outside ``--runs-dir``. The
count of cases per category is printed.
"""
from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from ehrlib.cli import main
from ehrlib.errors import ConfigError
from ehrlib.pipeline.params import params_from_mapping
from ehrlib.pipeline.runid import MAX_RUN_ID_CHARS, check_run_id
from ehrlib.result_tables import csv_safe, markdown_table, write_csv, write_table
from ehrlib.yamlfiles import MAX_YAML_DEPTH, parse_yaml

COUNTS: dict[str, Counter] = {}


@pytest.fixture(scope="module")
def corpus(synth_db, tmp_path_factory):
    con = duckdb.connect(str(synth_db), read_only=True)
    sid, hadm, day = con.execute("SELECT SUBJECT_ID, HADM_ID, CAST(ADMITTIME AS DATE) FROM ADMISSIONS "
                                 "ORDER BY HADM_ID LIMIT 1").fetchone()
    con.close()
    folder = tmp_path_factory.mktemp("surfaces_corpus")
    (folder / "notes.jsonl").write_text(json.dumps({
        "note_id": "=HYPERLINK(\"http://x\")", "subject_id": sid, "hadm_id": hadm, "note_type": "nursing",
        "chartdate": str(day), "text": "HR 80 this morning.\nWBC 12 <script>x</script> | -1+1."}) + "\n")
    return folder


def _cli(category: str, argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err, err
    errors = [x for x in err.splitlines() if x.startswith("error:")]
    if code == 2:
        assert len(errors) == 1 and len(errors[0]) < 600, err
    kind = "one-line error" if code == 2 else "ok" if code == 0 else f"exit {code}"
    COUNTS.setdefault(category, Counter())[kind] += 1
    return code, errors[0] if errors else ""


def _report(capsys, *categories: str) -> None:
    with capsys.disabled():
        for c in categories:
            print(f"\n[hostile surfaces] {c}: {sum(COUNTS[c].values())} cases, {dict(COUNTS[c])}")


def _tree(root: Path, skip: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if skip not in (p, *p.parents)}


def _run_argv(corpus: Path, db: Path, runs: Path, *extra: str) -> list[str]:
    return ["run", "--corpus", str(corpus), "--db", str(db), "--method", "surface", "--backend", "offline",
            "--runs-dir", str(runs), "--no-progress", *extra]


# --- run ids ---------------------------------------------------------------------------

BAD_RUN_IDS = {
    "parent": "../x", "parent-deep": "../../etc/x", "absolute": "/tmp/ehrlib-abs", "dot": ".", "dotdot": "..",
    "slash": "a/b", "backslash": "a\\b", "backslash-parent": "..\\x", "newline": "a\nb", "cr": "a\rb",
    "tab": "a\tb", "nul": "a\x00b", "escape": "a\x1b[31mb", "zero-width": "a\u200bb", "line-sep": "a\u2028b",
    "empty": "", "space": " ", "leading-space": " a", "trailing-space": "a ", "long-300": "x" * 300,
    "long-101": "x" * (MAX_RUN_ID_CHARS + 1), "long-300-utf8": "é" * 300,
}
GOOD_RUN_IDS = {"max-length": "r" * MAX_RUN_ID_CHARS, "unicode": "essai-é-β", "inner-space": "my run",
                "dots-inside": "v1.2..3", "markup": "r<b>&x"}


def test_run_id_rule_known_answers():
    for rid in GOOD_RUN_IDS.values():
        assert check_run_id(rid) == rid
    for case, rid in BAD_RUN_IDS.items():
        with pytest.raises(ConfigError) as exc:
            check_run_id(rid)
        assert "\n" not in str(exc.value), case


def test_hostile_run_ids(corpus, synth_db, tmp_path, capsys):
    runs = tmp_path / "work" / "runs"
    runs.parent.mkdir()
    before = _tree(tmp_path, runs)
    for case, rid in BAD_RUN_IDS.items():
        for how in ("flag", "params"):
            if how == "flag":
                argv = _run_argv(corpus, synth_db, runs, "--run-id", rid)
            else:
                p = tmp_path / "work" / f"id-{case}.yaml"
                p.write_text(f"run_id: {json.dumps(rid)}\n", encoding="utf-8")
                argv = _run_argv(corpus, synth_db, runs, "--params", str(p))
            code, err = _cli("run ids", argv, capsys)
            assert code == 2 and "run" in err and "id" in err, (case, how, err)
            if how == "params":
                assert f"id-{case}.yaml:1:" in err, err
                p.unlink()
    assert _tree(tmp_path, runs) == before and not runs.exists()   # nothing written anywhere
    for case, rid in GOOD_RUN_IDS.items():
        code, _ = _cli("run ids", _run_argv(corpus, synth_db, runs, "--run-id", rid), capsys)
        assert code == 0 and (runs / rid / "predictions.jsonl").is_file(), case
    assert all(p.is_dir() for p in runs.iterdir())      # no run files loose in the runs folder
    assert _tree(tmp_path, runs) == before
    _report(capsys, "run ids")


def test_run_ids_read_from_manifests(corpus, synth_db, tmp_path, capsys):
    """`ehrlib report` and `ehrlib judge` name figures and headings after the manifest's id."""
    runs = tmp_path / "runs"
    assert main(_run_argv(corpus, synth_db, runs, "--run-id", "base")) == 0
    capsys.readouterr()
    for case, rid in BAD_RUN_IDS.items():
        run = runs / f"copy-{case}"
        shutil.copytree(runs / "base", run)
        manifest = json.loads((run / "manifest.json").read_text())
        (run / "manifest.json").write_text(json.dumps({**manifest, "run_id": rid}))
        figures = tmp_path / "figures"
        accepted = rid == ""   # an empty id falls back to the folder name
        for argv in (["report", "--run", str(run), "--figures", str(figures), "--no-viewer", "--formats", "png",
                      "--no-progress"], ["judge", "--run", str(run), "--no-progress"]):
            code, err = _cli("run ids in manifests", argv, capsys)
            if accepted:
                assert code == 0, (case, err)
            else:
                assert code == 2 and "manifest.json" in err, (case, err)
        assert not figures.exists() or all(f.parent == figures for f in figures.rglob("*"))
    # a run folder named longer than the file system allows, damaged manifests
    folders = {"long-name": runs / ("x" * 300)}
    for case, data in (("not-json", b"{"), ("json-list", b"[]"), ("latin1", b'{"run_id": "caf\xe9"}')):
        folders[case] = runs / f"manifest-{case}"
        shutil.copytree(runs / "base", folders[case])
        (folders[case] / "manifest.json").write_bytes(data)
    for case, run in folders.items():
        for command in ("report", "judge"):
            code, err = _cli("run ids in manifests", [command, "--run", str(run), "--no-progress"], capsys)
            assert code == 2 and ("cannot be read" in err if case == "long-name" else "damaged manifest" in err), err
    _report(capsys, "run ids in manifests")


def test_experiment_params_check_run_ids(tmp_path):
    from ehrlib.experiments import _notebook_params

    for rid in ("../x", "a\nb", "x" * 300):
        p = tmp_path / "nb.yaml"
        p.write_text(f"run_id: {json.dumps(rid)}\n")
        with pytest.raises(ConfigError, match="nb.yaml:1:"):
            _notebook_params(p)
        p.write_text(f"run_ids: [ok, {json.dumps(rid)}]\n")
        with pytest.raises(ConfigError, match="nb.yaml:1:"):
            _notebook_params(p)
    p.write_text("run_id: nb04\nrun_ids: [a, b]\nwork_dir: runs/x\n")
    assert _notebook_params(p)["run_ids"] == ["a", "b"]


# --- params files ----------------------------------------------------------------------

def _bomb(levels: int, width: int = 9) -> str:
    lines = ["backend_options:", "  x:", "    a0: &a0 [" + ", ".join(["lol"] * width) + "]"]
    lines += [f"    a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _params_cases() -> dict[str, tuple[bytes, str | None]]:
    """case -> (file bytes, text the one-line error must hold; None = accepted)."""
    head = "# hostile params\nbackend: offline\n"   # the case's key is on line 3
    out: dict[str, tuple[bytes, str | None]] = {}
    good = head + "limit: 1\n"
    out["enc-utf16"] = (good.encode("utf-16"), "UTF-8")
    out["enc-utf16-le-no-bom"] = (good.encode("utf-16-le"), "UTF-8")
    out["enc-utf16-be"] = (b"\xfe\xff" + good.encode("utf-16-be"), "UTF-8")
    out["enc-latin1"] = ((head + "model: café\n").encode("latin-1"), "p.yaml:3: not UTF-8")
    out["enc-invalid-bytes"] = (head.encode() + b"model: \xff\xfe\xc3\n", "p.yaml:3: not UTF-8")
    out["enc-nul"] = (head.encode() + b"model: a\x00b\n", "UTF-8")
    out["enc-utf8-bom"] = (b"\xef\xbb\xbf" + good.encode(), None)
    out["empty-file"] = (b"", None)
    out["comments-only"] = (b"# nothing\n", None)
    for key in ("1", "true", "null", "2.5", "[a, b]", "{a: 1}"):
        out[f"key-{key}"] = ((head + (f"{key}: x\n" if not key.startswith(("[", "{")) else f"? {key}\n: x\n"))
                             .encode(), "p.yaml:3:")
    out["top-list"] = (b"- a\n- b\n", "mapping")
    out["top-scalar"] = (b"just text\n", "mapping")
    out["duplicate-key"] = ((head + "backend: oracle\n").encode(), "p.yaml:3: refused: key 'backend' appears twice")
    out["not-yaml"] = ((head + "limit: [1, 2\n").encode(), "not valid YAML")
    out["bad-timestamp"] = ((head + "backend_options: {d: 2024-13-45}\n").encode(), "not valid YAML")
    out["python-tag"] = ((head + "model: !!python/object/apply:os.system [echo]\n").encode(), "not valid YAML")
    for field in ("limit", "validation_cache", "top_k", "max_steps", "concurrency", "sql_row_cap", "seed",
                  "max_note_chars", "max_line_chars", "ray_workers", "ray_batch", "sql_timeout_s", "temperature"):
        for value in (".inf", "-.inf", ".nan", "1e999", "true", "[1]", "{a: 1}", "abc", "-5", "10000000000000000"):
            if value == "-5" and field == "seed" or value == "10000000000000000" and field == "seed":
                continue   # any 64-bit seed is a seed
            if value == "10000000000000000" and field == "limit":
                continue   # a limit above the corpus size means all notes
            out[f"{field}={value}"] = ((head + f"{field}: {value}\n").encode(), f"p.yaml:3: {field}")
        out[f"{field}=2.5"] = ((head + f"{field}: 2.5\n").encode(),
                               None if field == "sql_timeout_s" else f"p.yaml:3: {field}")
    for field, value in (("note_ids", "5"), ("note_ids", "{a: 1}"), ("note_ids", "[[a]]"), ("note_ids", "[true]"),
                         ("tools", "5"), ("tools", "[alignment, magic]"), ("backend_options", "5"),
                         ("backend_options", "[a]"), ("backend_options", "{llm: 5}"),
                         ("backend_options", "{llm: [a]}"), ("backend_options", "{1: a}"),
                         ("backend_options", "{x: .inf}"), ("backend_options", "{x: 2024-01-05}"),
                         ("backend_options", "{x: !!binary aGk=}"), ("llm", "5"), ("llm", "{1: a}"),
                         ("method", "[surface]"), ("method", "oracle"), ("run_id", "{a: 1}"), ("run_id", "true"),
                         ("model", "true"), ("model", "[a]"), ("corpus", "[a]"), ("db", "{a: 1}"),
                         ("segmentation", "maybe"), ("segmentation", "2"), ("executor", "fork"),
                         ("cache_scope", "[note]"), ("runs_dir", "\"a\\0b\""), ("model", "\"a\\nb\""),
                         ("model", "\"" + "m" * 5000 + "\""), ("ray_address", "[1]"), ("extraction", "5")):
        out[f"{field}={value[:20]}"] = ((head + f"{field}: {value}\n").encode(), "p.yaml:3: ")
    for levels in (3, 4, 5, 6, 8, 12):   # 9 ** levels strings once expanded: up to 4 levels fit in 10,000 values
        out[f"alias-bomb-{levels}"] = ((head + _bomb(levels)).encode(), None if levels <= 4 else "refused: expands")
    out["alias-bomb-wide"] = ((head + _bomb(3, width=200)).encode(), "refused: expands")
    out["alias-recursive"] = ((head + "backend_options: &a {x: *a}\n").encode(), "refused: an alias")
    out["alias-merge-ok"] = ((head + "base: &b {x: 1}\nbackend_options: {<<: *b, y: 2}\n").encode(), None)
    for depth in (MAX_YAML_DEPTH + 1, 200, 5000, 100_000):
        out[f"deep-list-{depth}"] = ((head + "backend_options: {x: " + "[" * depth + "]" * depth + "}\n").encode(),
                                     "nested deeper")
        out[f"deep-map-{depth}"] = ((head + "backend_options: " + "{a: " * depth + "1" + "}" * depth + "\n").encode(),
                                    "nested deeper")
    out["deep-block"] = ((head + "backend_options:\n" + "".join("  " * i + "  k:\n" for i in range(60))
                          + "  " * 61 + "v: 1\n").encode(), "nested deeper")
    out["huge-file"] = ((head + "description: " + "x" * 1_100_000 + "\n").encode(), "larger than")
    return out


def test_hostile_params_files(corpus, synth_db, tmp_path, capsys):
    runs = tmp_path / "runs"
    p = tmp_path / "p.yaml"
    for case, (data, expect) in _params_cases().items():
        p.write_bytes(data)
        # a flag overrides the file: the case's own key gets none
        flags = {"corpus": str(corpus), "db": str(synth_db), "method": "surface", "runs_dir": str(runs), "run_id": "pp"}
        argv = ["run", "--params", str(p), "--no-progress"]
        for key, value in flags.items():
            argv += [] if case.startswith(f"{key}=") else [f"--{key.replace('_', '-')}", value]
        code, err = _cli("params files", argv, capsys)
        if expect is None:
            assert code == 0, (case, err)
            manifest = runs / "pp" / "manifest.json"
            assert manifest.stat().st_size < 1_000_000, case      # alias expansion stays bounded
            shutil.rmtree(runs / "pp")
        else:
            assert code == 2 and "p.yaml" in err and expect in err, (case, err)
            assert not (runs / "pp").exists(), case
    # the other readers of params files use the same reader
    for case in ("enc-utf16", "enc-latin1", "alias-bomb-8", "alias-recursive", "deep-list-5000", "huge-file"):
        p.write_bytes(_params_cases()[case][0])
        for argv in (["judge", "--run", str(tmp_path), "--params", str(p)], ["llm", "check", "--params", str(p)]):
            code, err = _cli("params files (judge, llm check)", argv, capsys)
            assert code == 2 and "p.yaml" in err, (case, argv[0], err)
    _report(capsys, "params files", "params files (judge, llm check)")


def test_params_rules_are_one_table():
    """Each field has a rule, and the rules hold for values given in code too."""
    from ehrlib.pipeline import params as mod

    assert set(mod._RULES) == set(mod._FIELDS)
    for bad in ({"limit": float("inf")}, {"temperature": float("nan")}, {"note_ids": 5},
                {"backend_options": {"llm": 5}}, {"run_id": "../x"}, {"top_k": True}):
        with pytest.raises(ConfigError):
            params_from_mapping(bad)
        with pytest.raises(ConfigError):
            mod.RunParams(**bad)
    assert params_from_mapping({"limit": "3", "top_k": 5.0, "note_ids": [1, "b"]}).note_ids == ("1", "b")


def test_yaml_reader_known_answers():
    doc = parse_yaml("# c\na: 1\nb: &x [1, 2]\nc: *x\n", "t.yaml")
    assert doc.data == {"a": 1, "b": [1, 2], "c": [1, 2]} and doc.lines == {"a": 2, "b": 3, "c": 4}
    assert doc.where("c") == "t.yaml:4" and doc.where("zz") == "t.yaml"
    with pytest.raises(ConfigError, match=r"t.yaml:\d+: refused: expands"):
        parse_yaml(_bomb(7), "t.yaml")


# --- output hygiene --------------------------------------------------------------------

FORMULAS = ["=1+1", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "=HYPERLINK(\"http://x\")", "-",
            "- pt denies pain", "+", "@"]
NUMBERS_AS_TEXT = ["-5", "+3", "-0.25", "1e-3", "-.5"]


def test_csv_cells_known_answers():
    for text in FORMULAS:
        assert csv_safe(text) == "'" + text.replace("\r", "\n")
    assert csv_safe("a\r\nb\rc") == "a\nb\nc"     # a lone CR would split the row for CSV readers
    for text in [*NUMBERS_AS_TEXT, "a=1", "note 5", "'=already"]:
        assert csv_safe(text) == text
    for number in (-5, -0.5, 3, float("nan")):
        assert csv_safe(number) is number


def test_csv_exports_neutralise_formulas(tmp_path, capsys):
    texts = [*FORMULAS, *NUMBERS_AS_TEXT, "plain"]
    df = pd.DataFrame({"note_id": texts, "value": [-(i + 0.5) for i in range(len(texts))],
                       "n": [-i for i in range(len(texts))]})
    write_table(df, tmp_path / "t.csv")
    write_csv(tmp_path / "rows.csv", ["note_id", "value"], [[t, -1.5] for t in texts])
    for path in (tmp_path / "t.csv", tmp_path / "rows.csv"):
        rows = list(csv.DictReader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))
        for text, row in zip(texts, rows, strict=True):
            COUNTS.setdefault("csv cells", Counter())["neutralised" if row["note_id"] != text else "unchanged"] += 1
            assert row["note_id"] == ("'" + text.replace("\r", "\n") if text in FORMULAS else text)
            assert float(row["value"]) < 0                      # numbers stay numbers
    back = pd.read_csv(tmp_path / "t.csv")
    assert pd.api.types.is_numeric_dtype(back["value"]) and (back["n"] <= 0).all()
    _report(capsys, "csv cells")


def test_markdown_cells_escape_html_and_pipes(capsys):
    cells = ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "a|b", "x & y", "line1\nline2",
             "a\r\nb", "</td><td>", "&lt;"]
    md = markdown_table(pd.DataFrame({"<th>": cells, "n": range(len(cells))}))
    assert "<" not in md and ">" not in md
    assert "&lt;script&gt;" in md and "a\\|b" in md and "x &amp; y" in md and "&amp;lt;" in md
    assert len(md.splitlines()) == len(cells) + 2                 # one row per cell, however many lines it had
    for line in md.splitlines()[2:]:
        assert line.count(" | ") == 1 and "\\|" not in line.replace("a\\|b", "")
        COUNTS.setdefault("markdown cells", Counter())["escaped"] += 1
    _report(capsys, "markdown cells")


def test_report_of_hostile_note_text(corpus, synth_db, tmp_path, capsys):
    runs = tmp_path / "runs"
    assert main(_run_argv(corpus, synth_db, runs, "--run-id", "r<b>&x", "--method", "inspector")) == 0
    assert main(["report", "--run", str(runs / "r<b>&x"), "--no-viewer", "--formats", "png", "--no-progress"]) == 0
    capsys.readouterr()
    run = runs / "r<b>&x"
    notes = list(csv.reader((run / "notes_summary.csv").open(newline="")))
    assert notes[1][0] == "'=HYPERLINK(\"http://x\")"
    findings = list(csv.DictReader((run / "findings.csv").open(newline="")))
    assert findings and all(not row["note_id"].startswith("=") for row in findings)
    for md in run.glob("*.md"):
        text = md.read_text()
        assert "<b>" not in text and "<script>" not in text, md.name
    assert "# Report of run r&lt;b&gt;&amp;x" in (run / "report.md").read_text()


# --- damaged databases -----------------------------------------------------------------

def _damaged_copies(synth_db: Path, tmp: Path) -> list[tuple[str, Path]]:
    """One copy per block with 4 KiB overwritten at the block's start, plus the file's middle."""
    con = duckdb.connect(str(synth_db), read_only=True)
    block, n = con.execute("SELECT block_size, total_blocks FROM pragma_database_size()").fetchone()
    con.close()
    raw = synth_db.read_bytes()
    header = 3 * 4096
    offsets = {f"block-{k}": header + k * int(block) for k in range(int(n))}
    offsets["middle"] = len(raw) // 2
    out = []
    for name, at in offsets.items():
        data = bytearray(raw)
        data[at:at + 4096] = b"\xde\xad\xbe\xef" * 1024
        p = tmp / f"{name}.duckdb"
        p.write_bytes(bytes(data[:len(raw)]))
        out.append((name, p))
    return out


def test_damaged_databases(corpus, synth_db, tmp_path, capsys):
    damaged = 0
    for case, db in _damaged_copies(synth_db, tmp_path):
        code, err = _cli("damaged database blocks (ontology)", ["ontology", str(db), str(tmp_path / "o.json")], capsys)
        if code == 0:
            continue   # a block no dictionary table uses
        assert code == 2 and err.startswith(f"error: damaged database: {db}: "), err
        damaged += 1
        runs = tmp_path / "runs"
        code, err = _cli("damaged database blocks (run)",
                         _run_argv(corpus, db, runs, "--run-id", case, "--method", "inspector"), capsys)
        assert code == 2 and "damaged database: " in err and str(db.name) in err, (case, err)
        assert not (runs / case).exists(), case
    assert damaged >= 1
    _report(capsys, "damaged database blocks (ontology)", "damaged database blocks (run)")
