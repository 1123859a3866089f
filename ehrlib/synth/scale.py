"""Bulk ICU stays generated in SQL, to grow CHARTEVENTS to benchmark size.

``--scale N`` adds stays of 3-8 days with hourly HR, NIBP (systolic/diastolic/mean), RR
and SpO2 and a temperature every 4 hours until CHARTEVENTS holds about N rows. Nothing
here loops in Python: DuckDB expands ``range()`` per stay and draws every value from
``hash(seed, stay, hour, item)``, so 30 M rows take tens of seconds and the same seed
gives the same rows. Each bulk stay has its PATIENTS, ADMISSIONS and ICUSTAYS rows
(ids above the storyline patients'), so every row still lies inside its admission. Bulk
stays follow a mild, resolving illness; they carry no storyline (the storyline table
lists the storyline admissions only), so notes are written for storyline patients.
"""
from __future__ import annotations

import logging
import math

from ehrlib import schema
from ehrlib.db import table_defs
from ehrlib.synth.dictionaries import CHART_ITEMS
from ehrlib.synth.render import insert_staged

__all__ = ["ROWS_PER_HOUR", "add_scale_rows"]

log = logging.getLogger(__name__)

#: Bulk chart rows per stay-hour: 6 hourly vitals + a temperature every 4 hours.
ROWS_PER_HOUR = 6.25
_MIN_HOURS, _SPAN_HOURS = 72, 121  # 3 to 8 days
_SUBJECT_BASE, _HADM_BASE, _ICU_BASE = 1_000_000, 1_000_000, 2_000_000

_U = "((hash(seed, hadm_id, h, k) % 1000003) / 1000003.0)"  # uniform [0, 1) per row
_CONCEPTS = ("hr", "nbp_sys", "nbp_dia", "nbp_mean", "rr", "spo2", "temp_f")


def _stays_sql() -> str:
    return f"""
CREATE TEMP TABLE _ehrlib_bulk_stays AS
WITH s AS (
  SELECT i, CAST(? AS BIGINT) AS seed,
         {_MIN_HOURS} + CAST(hash(?, i, 'hours') % {_SPAN_HOURS} AS INTEGER) AS hours,
         TIMESTAMP '2100-01-01' + to_minutes(CAST(hash(?, i, 'admit') % 47000000 AS BIGINT)) AS admittime
  FROM range(?) t(i)
), c AS (
  SELECT *, 6 * hours + CAST(ceil(hours / 4.0) AS INTEGER) AS n_rows,
         sum(6 * hours + CAST(ceil(hours / 4.0) AS INTEGER)) OVER (ORDER BY i) AS cum_rows,
         sum(7 * hours) OVER (ORDER BY i) - 7 * hours AS slots_before
  FROM s
)
SELECT i, seed, hours, n_rows, cum_rows - n_rows AS rows_before, slots_before,
       {_SUBJECT_BASE} + i AS subject_id, {_HADM_BASE} + i AS hadm_id, {_ICU_BASE} + i AS icustay_id,
       admittime, admittime + INTERVAL 3 HOUR AS intime,
       admittime + INTERVAL 3 HOUR + to_hours(hours) AS outtime,
       admittime + INTERVAL 3 HOUR + to_hours(hours) + INTERVAL 30 HOUR AS dischtime,
       CASE WHEN hash(seed, i, 'sex') % 2 = 0 THEN 'F' ELSE 'M' END AS gender,
       30 + CAST(hash(seed, i, 'age') % 58 AS INTEGER) AS age,
       64 + CAST(hash(seed, i, 'hr') % 24 AS DOUBLE) AS b_hr,
       112 + CAST(hash(seed, i, 'sbp') % 26 AS DOUBLE) AS b_sbp,
       62 + CAST(hash(seed, i, 'dbp') % 18 AS DOUBLE) AS b_dbp,
       13 + CAST(hash(seed, i, 'rr') % 5 AS DOUBLE) AS b_rr,
       95 + CAST(hash(seed, i, 'spo2') % 4 AS DOUBLE) AS b_spo2,
       36.6 + CAST(hash(seed, i, 'temp') % 6 AS DOUBLE) / 10 AS b_temp,
       CAST(hash(seed, i, 'ill') % 1000 AS DOUBLE) / 1000 AS ill
FROM c WHERE rows_before < ?
"""


def _chart_view_sql(row_base: int) -> str:
    """Logical CHARTEVENTS columns for every bulk stay-hour-item (a view: no copy)."""
    items = ", ".join(
        f"({k}, {CHART_ITEMS[c].mv}, '{CHART_ITEMS[c].mv_unit}')" for k, c in enumerate(_CONCEPTS)
    )
    noise = f"(({_U} - 0.5) * 2)"
    return f"""
CREATE TEMP VIEW _ehrlib_bulk_chart AS
WITH hrs AS (
  SELECT s.*, r.h, sin(r.h * {2 * math.pi / 24}) AS circ, s.ill * exp(-r.h / 30.0) AS sev
  FROM _ehrlib_bulk_stays s, LATERAL (SELECT range AS h FROM range(s.hours)) r
), x AS (
  SELECT hrs.*, it.k, it.itemid, it.uom FROM hrs, (VALUES {items}) it(k, itemid, uom)
  WHERE it.k < 6 OR hrs.h % 4 = 0
), v AS (
  SELECT *, CASE k
      WHEN 0 THEN round(b_hr + 30 * sev + 3 * circ + 4 * {noise})
      WHEN 1 THEN round(b_sbp - 30 * sev + 4 * circ + 6 * {noise})
      WHEN 2 THEN round(b_dbp - 15 * sev + 2 * circ + 4 * {noise})
      WHEN 3 THEN round((b_sbp - 30 * sev + 2 * (b_dbp - 15 * sev)) / 3 + 3 * circ + 3 * {noise})
      WHEN 4 THEN round(b_rr + 8 * sev + 2 * {noise})
      WHEN 5 THEN least(100, round(b_spo2 - 4 * sev + 1.5 * {noise}))
      ELSE round((b_temp + 1.8 * sev + 0.2 * {noise}) * 9 / 5 + 32, 1) END AS valuenum
  FROM x
)
SELECT CAST({row_base} + slots_before + h * 7 + k AS BIGINT) AS row_id, subject_id, hadm_id, icustay_id, itemid,
       intime + to_hours(h) AS charttime,
       intime + to_hours(h) + to_minutes(CAST(hash(seed, hadm_id, h) % 40 AS INTEGER)) AS storetime,
       CASE WHEN k = 6 THEN printf('%.1f', valuenum) ELSE CAST(CAST(valuenum AS INTEGER) AS VARCHAR) END AS value,
       valuenum, uom AS valueuom, 0 AS warning, 0 AS error, NULL AS resultstatus, NULL AS stopped
FROM v
"""


def add_scale_rows(con, layout: str, *, target_rows: int, seed: int) -> int:
    """Add bulk stays until CHARTEVENTS holds about ``target_rows``; returns rows added."""
    defs = table_defs(layout)
    chart = schema.schema_map(layout).table("chartevents")
    current = con.execute(f"SELECT count(*) FROM {defs['chartevents'].ref}").fetchone()[0]  # noqa: S608
    needed = int(target_rows) - int(current)
    if needed <= 0:
        return 0
    n_max = math.ceil(needed / (ROWS_PER_HOUR * _MIN_HOURS)) + 1
    con.execute(_stays_sql(), [seed, seed, seed, n_max, needed])
    row_base = con.execute(f"SELECT coalesce(max({chart.col('row_id')}), 0) + 1 "  # noqa: S608
                           f"FROM {defs['chartevents'].ref}").fetchone()[0]
    try:
        for logical, sql in _CORE_SQL.items():
            con.execute(f"CREATE TEMP VIEW _ehrlib_bulk_core AS {sql}")
            cols = {d[0] for d in con.execute("SELECT * FROM _ehrlib_bulk_core LIMIT 0").description}
            insert_staged(con, layout, logical, "_ehrlib_bulk_core", cols)
            con.execute("DROP VIEW _ehrlib_bulk_core")
        con.execute(_chart_view_sql(int(row_base)))
        cols = {d[0] for d in con.execute("SELECT * FROM _ehrlib_bulk_chart LIMIT 0").description}
        insert_staged(con, layout, "chartevents", "_ehrlib_bulk_chart", cols)
        added = con.execute(f"SELECT count(*) FROM {defs['chartevents'].ref}").fetchone()[0] - current  # noqa: S608
    finally:
        con.execute("DROP VIEW IF EXISTS _ehrlib_bulk_chart")
        con.execute("DROP VIEW IF EXISTS _ehrlib_bulk_core")
        con.execute("DROP TABLE IF EXISTS _ehrlib_bulk_stays")
    log.info("added %d bulk CHARTEVENTS rows", added)
    return int(added)


# PATIENTS / ADMISSIONS / ICUSTAYS of the bulk stays, in logical + extra columns.
_CORE_SQL = {
    "patients": """
SELECT CAST(1000000 + i AS BIGINT) AS row_id, subject_id, gender,
       date_trunc('day', admittime - to_years(age)) AS dob, NULL::TIMESTAMP AS dod,
       age AS anchor_age, year(admittime) AS anchor_year
FROM _ehrlib_bulk_stays""",
    "admissions": """
SELECT CAST(1000000 + i AS BIGINT) AS row_id, subject_id, hadm_id, admittime, dischtime, NULL::TIMESTAMP AS deathtime,
       'EMERGENCY' AS admission_type, 'EMERGENCY ROOM ADMIT' AS admission_location, 'HOME' AS discharge_location,
       admittime - INTERVAL 4 HOUR AS edregtime, admittime AS edouttime, 'OBSERVATION' AS diagnosis,
       'Medicare' AS insurance, 'UNKNOWN/NOT SPECIFIED' AS ethnicity, NULL AS marital_status, 'ENGL' AS language
FROM _ehrlib_bulk_stays""",
    "icustays": """
SELECT CAST(1000000 + i AS BIGINT) AS row_id, subject_id, hadm_id, icustay_id, 'MICU' AS first_careunit,
       'MICU' AS last_careunit, intime, outtime, round(hours / 24.0, 4) AS los, 'metavision' AS dbsource,
       50 AS wardid
FROM _ehrlib_bulk_stays""",
}
