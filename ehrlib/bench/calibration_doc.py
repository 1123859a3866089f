"""The tables of docs/calibration.md, made from ``figures/bench_calibration.csv``.

The page quotes the leave-one-set-out results; writing its tables from the CSV (and a test
comparing them) keeps the page and the benchmark from drifting apart. Regenerate after
``ehrlib bench --only calibration`` with ``python -m ehrlib.bench.calibration_doc``.
"""
from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ehrlib.pipeline.calibration.kinds import DEFAULT_MODEL

__all__ = ["START", "END", "doc_tables", "rewrite_doc"]

START = "<!-- tables from figures/bench_calibration.csv: python -m ehrlib.bench.calibration_doc -->"
END = "<!-- end of generated tables -->"
_ROOT = Path(__file__).resolve().parents[2]


def _f(value: str | None, places: int = 3) -> str:
    return "–" if value in ("", None) else f"{float(value):.{places}f}"


def _after(r: Mapping[str, str]) -> str:
    return ", ".join(_f(r[c]) for c in ("ece", "alarm_precision_after", "inconsistent_recall_after", "f1_after"))


def doc_tables(rows: Sequence[Mapping[str, str]]) -> str:
    """The pooled table (every model and threshold) and the per-set table at the shipped
    model's chosen threshold, as Markdown.
    """
    pooled = [r for r in rows if r["set"] == "all"]
    if not pooled:
        raise ValueError("bench_calibration.csv has no pooled ('all') rows")
    models = sorted(dict.fromkeys(r["model"] for r in rows), key=lambda m: m != DEFAULT_MODEL)
    base = pooled[0]
    out = ["| model | abstain_below | alarms | alarm precision | inconsistent recall | F1 | ECE | AUC (alarms) |",
           "|---|---|---|---|---|---|---|---|",
           f"| none (verifier) | – | {base['alarms_before']} | {_f(base['alarm_precision_before'])} | "
           f"{_f(base['inconsistent_recall_before'])} | {_f(base['f1_before'])} | – | – |"]
    for r in pooled:
        rule = " (rule)" if r["chosen"] == "1" else ""
        out.append(f"| {r['model']} | {float(r['threshold']):g}{rule} | {r['alarms_after']} | "
                   f"{_f(r['alarm_precision_after'])} | {_f(r['inconsistent_recall_after'])} | {_f(r['f1_after'])} | "
                   f"{_f(r['ece'])} | {_f(r['alarm_auc'])} |")
    shipped = DEFAULT_MODEL if DEFAULT_MODEL in models else models[0]
    threshold = next(r["threshold"] for r in pooled if r["model"] == shipped and r["chosen"] == "1")
    at = {(r["model"], r["set"]): r for r in rows if r["threshold"] == threshold}
    out += ["", f"Per set at {float(threshold):g}, the {shipped} model's chosen threshold (verifier → after "
                "abstention):", "",
            "| set | verifier: alarms, precision, recall, F1 | "
            + " | ".join(f"{m} @{float(threshold):g}: ECE, precision, recall, F1" for m in models) + " |",
            "|---|---|" + "---|" * len(models)]
    for name in dict.fromkeys(r["set"] for r in rows if r["model"] == shipped):
        if (shipped, name) not in at:
            continue
        r = at[(shipped, name)]
        label = "**pooled (real-patient sets)**" if name == "all" else name
        cells = [_after(at[(m, name)]) if (m, name) in at else "–" for m in models]
        out.append(f"| {label} | {r['alarms_before']}, {_f(r['alarm_precision_before'])}, "
                   f"{_f(r['inconsistent_recall_before'])}, {_f(r['f1_before'])} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def rewrite_doc(doc: Path = _ROOT / "docs" / "calibration.md",
                csv_path: Path = _ROOT / "figures" / "bench_calibration.csv") -> bool:
    """Replace the block between :data:`START` and :data:`END`; True when it changed."""
    text = doc.read_text(encoding="utf-8")
    block = re.compile(re.escape(START) + r"\n.*?" + re.escape(END), re.S)
    if not block.search(text):
        raise ValueError(f"{doc}: no generated-tables block ({START} ... {END})")
    new = block.sub(lambda _: f"{START}\n\n{doc_tables(_read(csv_path))}\n{END}", text)
    if new != text:
        doc.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    print("docs/calibration.md", "rewritten" if rewrite_doc() else "already current")
