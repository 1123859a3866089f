"""The DuckDB data layer: typed MIMIC tables, the build manifest, read-only connections.

``ehrlib build-db`` turns a MIMIC-III/MIMIC-IV CSV folder into one DuckDB file
(:func:`build_db`); generators that fill tables themselves use :func:`create_tables`,
:func:`write_manifest` and :func:`finalize` to get the same layout and manifest.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ehrlib.lazy import lazy_package

if TYPE_CHECKING:  # exports, imported on first use (lazy_package): importing the package stays cheap
    from ehrlib.db.build import BuildResult, TableLoad, build_db
    from ehrlib.db.connect import connect
    from ehrlib.db.ddl import LAYOUTS, ColumnDef, TableDef, create_tables, table_defs
    from ehrlib.db.finalize import finalize, order_keys
    from ehrlib.db.manifest import (
        MANIFEST_TABLES_TABLE,
        SOURCE_KINDS,
        TableInfo,
        read_manifest,
        write_manifest,
    )
    from ehrlib.db.summary import DbSummary, summarize

__all__ = [
    "build_db",
    "BuildResult",
    "TableLoad",
    "connect",
    "summarize",
    "DbSummary",
    "LAYOUTS",
    "ColumnDef",
    "TableDef",
    "TableInfo",
    "SOURCE_KINDS",
    "MANIFEST_TABLES_TABLE",
    "create_tables",
    "table_defs",
    "write_manifest",
    "read_manifest",
    "finalize",
    "order_keys",
]

lazy_package(__name__)
