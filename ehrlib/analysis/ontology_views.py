"""Tables that describe an item ontology: sizes, examples, a patient's coverage, and the
difference between two builds.

The ontology narrows a note segment's candidates group -> subgroup -> item, so a reader
wants to know how big each branch is, whether a real patient's charted items all land in
some branch (an item outside the ontology can never be a candidate), and, when two
builders disagree (rules vs a model, or two databases), where.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from ehrlib import schema
from ehrlib.db import connect
from ehrlib.ontology import Ontology, build_ontology_llm, build_ontology_rules, read_ontology, save_ontology
from ehrlib.tools.items import patient_item_keys

__all__ = ["build_ontology", "group_sizes", "subgroup_table", "patient_coverage", "ontology_diff",
           "diff_summary", "first_patient", "saved_roundtrip"]


def build_ontology(db_path: str | os.PathLike[str], *, llm: Mapping[str, Any] | None = None,
                   window: int = 50) -> Ontology:
    """The rule-built ontology of a database or, with ``llm`` settings (``backend`` plus the
    backend's options, as in a params file's ``llm:`` block), the sliding-window build."""
    con = connect(db_path)
    try:
        if not llm:
            return build_ontology_rules(con)
        # deferred: the LLM client stack is only needed for the model-built ontology
        from ehrlib.llm.factory import make_client
        # deferred: as above
        from ehrlib.pipeline.llm.caller import json_asker

        settings = dict(llm)
        client = make_client(settings.pop("backend"), **settings)
        return build_ontology_llm(con, json_asker(client), window=window)
    finally:
        con.close()


def group_sizes(onto: Ontology) -> pd.DataFrame:
    """One row per group: items, subgroups, and the largest subgroup's share of the group."""
    rows = []
    for group in onto.group_names:
        items = onto.items_in(group)
        per_sub = pd.Series([i.subgroup for i in items], dtype="object").value_counts()
        rows.append({"group": group, "n_subgroups": len(onto.subgroups(group)), "n_items": len(items),
                     "largest_subgroup": per_sub.index[0] if len(per_sub) else None,
                     "largest_share": float(per_sub.iloc[0] / len(items)) if len(items) else 0.0})
    return pd.DataFrame(rows, columns=["group", "n_subgroups", "n_items", "largest_subgroup", "largest_share"])


def subgroup_table(onto: Ontology, *, examples: int = 3, group: str | None = None) -> pd.DataFrame:
    """One row per (group, subgroup) with its item count and the first ``examples`` labels."""
    rows = []
    for g in onto.group_names if group is None else (group,):
        for sub in onto.subgroups(g):
            items = onto.items_in(g, sub)
            rows.append({"group": g, "subgroup": sub, "n_items": len(items),
                         "examples": "; ".join(i.label for i in items[:examples])})
    return pd.DataFrame(rows, columns=["group", "subgroup", "n_items", "examples"])


def first_patient(db_path: str | os.PathLike[str]) -> int:
    """The lowest subject_id of a database (a default patient for coverage)."""
    con = connect(db_path)
    try:
        smap = schema.schema_map(schema.detect_flavor(con))
        table = smap.table("patients")
        column = table.col("subject_id")
        return int(con.execute(f"SELECT min({column}) FROM {table.ref}").fetchone()[0])  # noqa: S608 (names from the schema map)
    finally:
        con.close()


def patient_coverage(db_path: str | os.PathLike[str], onto: Ontology, subject_id: int) -> pd.DataFrame:
    """Per table: how many of the patient's recorded items the ontology places, with the
    groups they land in; ``missing_examples`` lists items no branch can offer."""
    con = connect(db_path)
    try:
        smap = schema.schema_map(schema.detect_flavor(con))
        keys = sorted(patient_item_keys(con, smap, subject_id))
    finally:
        con.close()
    rows = []
    for table in sorted({k.partition(":")[0] for k in keys}):
        mine = [k for k in keys if k.partition(":")[0] == table]
        placed = [onto.item(k) for k in mine]
        found = [i for i in placed if i is not None]
        groups = pd.Series([i.group for i in found], dtype="object").value_counts()
        rows.append({"table": table, "patient_items": len(mine), "in_ontology": len(found),
                     "coverage": len(found) / len(mine) if mine else float("nan"),
                     "groups": ", ".join(f"{g} ({n})" for g, n in groups.items()),
                     "missing_examples": "; ".join([k for k, i in zip(mine, placed) if i is None][:3])})
    return pd.DataFrame(rows, columns=["table", "patient_items", "in_ontology", "coverage", "groups",
                                       "missing_examples"])


def ontology_diff(a: Ontology, b: Ontology, *, names: tuple[str, str] = ("a", "b")) -> pd.DataFrame:
    """Items placed differently by two builds: only in one, another group, or another
    subgroup of the same group (one row each)."""
    na, nb = names
    ia, ib = {i.key: i for i in a.items}, {i.key: i for i in b.items}
    rows = []
    for key in sorted(ia.keys() | ib.keys()):
        x, y = ia.get(key), ib.get(key)
        if x is not None and y is not None and (x.group, x.subgroup) == (y.group, y.subgroup):
            continue
        change = ("only_" + na if y is None else "only_" + nb if x is None else
                  "group" if x.group != y.group else "subgroup")
        item = x or y
        rows.append({"key": key, "label": item.label, "change": change,
                     f"{na}_group": x.group if x else None, f"{na}_subgroup": x.subgroup if x else None,
                     f"{nb}_group": y.group if y else None, f"{nb}_subgroup": y.subgroup if y else None})
    return pd.DataFrame(rows, columns=["key", "label", "change", f"{na}_group", f"{na}_subgroup",
                                       f"{nb}_group", f"{nb}_subgroup"])


def diff_summary(a: Ontology, b: Ontology, diff: pd.DataFrame) -> pd.DataFrame:
    """Counts of each kind of change, next to both builds' sizes and content hashes."""
    counts = diff["change"].value_counts() if not diff.empty else pd.Series(dtype=int)
    shared = len({i.key for i in a.items} & {i.key for i in b.items})
    rows = [{"measure": "items", "value": f"{len(a.items)} vs {len(b.items)}"},
            {"measure": "content hash", "value": f"{a.sha8} vs {b.sha8}"},
            {"measure": "items in both", "value": str(shared)}]
    rows += [{"measure": f"changed: {k}", "value": str(int(v))} for k, v in counts.items()]
    same = shared - int(counts.get("group", 0)) - int(counts.get("subgroup", 0))
    rows.append({"measure": "same place in both", "value": f"{same} ({same / shared:.1%} of shared)" if shared else "0"})
    return pd.DataFrame(rows)


def saved_roundtrip(onto: Ontology, path: str | os.PathLike[str]) -> tuple[Path, bool]:
    """Save, read back, and say whether the copy is the same ontology (same hash)."""
    written = save_ontology(onto, path)
    return written, read_ontology(written).sha8 == onto.sha8
