"""A short summary of a built database (what `make demo` and `build-db` print)."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass

from ehrlib import schema
from ehrlib.db.manifest import read_manifest

__all__ = ["DbSummary", "summarize"]


@dataclass(frozen=True, slots=True)
class DbSummary:
    """What a built database holds: layout, version, tables with row counts, time span."""
    layout: str
    flavor: str
    version: str
    source_kind: str
    #: (physical table, status, rows) in layout order
    tables: tuple[tuple[str, str, int], ...]
    patients: int
    admissions: int
    #: first admission time and last discharge time (MIMIC dates are shifted to 2100-2200)
    first_time: _dt.datetime | None
    last_time: _dt.datetime | None

    @property
    def rows(self) -> int:
        """Rows over all tables."""
        return sum(n for _, _, n in self.tables)

    def lines(self) -> list[str]:
        """Human-readable summary lines (``ehrlib build-db`` prints them)."""
        span = (f"{self.first_time:%Y-%m-%d} .. {self.last_time:%Y-%m-%d}" if self.first_time and self.last_time
                else "n/a")
        loaded = [t for t in self.tables if t[1] == "loaded"]
        out = [f"{self.flavor} {self.version} ({self.source_kind}), layout {self.layout}: {len(loaded)} tables, "
               f"{self.rows:,} rows, {self.patients} patients, {self.admissions} admissions, time span {span}"]
        out += [f"  {name:<24} {n:>12,}" + ("" if status == "loaded" else f"  ({status})")
                for name, status, n in self.tables]
        return out


def summarize(con) -> DbSummary:
    """Summarize an open ehrlib database (layout-independent: goes through ehrlib.schema)."""
    m = read_manifest(con)
    layout = m.get("layout") or schema.detect_flavor(con)
    smap = schema.schema_map(layout)
    adm = smap.table("admissions")
    n_adm, first, last = con.execute(
        f"SELECT count(*), min({adm.col('admittime')}), max({adm.col('dischtime')}) FROM {adm.ref}"  # noqa: S608
    ).fetchone()
    n_pat = con.execute(f"SELECT count(*) FROM {smap.table('patients').ref}").fetchone()[0]  # noqa: S608
    tables = tuple((t["table_name"], t["status"], int(t["row_count"])) for t in m["tables"])
    return DbSummary(layout, m.get("flavor", ""), m.get("version", ""), m.get("source_kind", ""), tables,
                     int(n_pat), int(n_adm), first, last)
