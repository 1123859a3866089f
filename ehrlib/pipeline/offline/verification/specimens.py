"""A lab value reported on a named specimen is judged against that specimen's items only.

"PLEURAL FLUID ___ 08:38AM: ... Glucose-111", "urine Na 40": the number is the fluid's or
urine's, and the blood item of the same analyte records another quantity (a pleural glucose
of 111 says nothing about the serum glucose). Extraction aligns such a value to the
specimen's item when the patient has one (.lab_results, .specimen_scope); when it has none,
the value keeps the blood item it was read as, and this rule leaves it unverified rather
than compare it with blood. Blood is the specimen only of a value whose words name none.
"""
from __future__ import annotations

from ehrlib.pipeline.offline.lab_results import catalog_fluids, prose_fluid
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.specimen_scope import default_fluid, is_record, scoped_fluid
from ehrlib.pipeline.offline.verification.session import Case, unverified
from ehrlib.pipeline.records import Verdict

__all__ = ["OTHER_SPECIMEN", "statement_fluid"]


def statement_fluid(c: Case) -> str | None:
    """The specimen other than blood the statement's words name: its results line's (or the
    record or heading that line continues), else a specimen word before it ("urine Na"), a
    specimen heading opening its clause ("UA:") or a fused specimen letter ("UNa") in prose;
    None without one.
    """
    e, lines = c.entity, getattr(c.ctx, "lines", None) or ()
    if e.span is None or not 0 <= e.line < len(lines):
        return None
    blood = default_fluid().lower()
    scoped = scoped_fluid(lines, e.line)
    if scoped.lower() != blood:
        return scoped
    if is_record(lines[e.line]):
        return None  # a record's specimen is its own word ("UREA N-32" on a blood record is no fused urine letter)
    prose = prose_fluid(lines[e.line], e.span[0], e.text.split()[0] if e.text.split() else e.text)
    return prose[0] if prose is not None and prose[0].lower() != blood else None


def _other_specimen(c: Case) -> Verdict | None:
    keys = c.keys()
    if not keys or any(not k.startswith("labevents:") for k in keys):
        return None  # a bedside value, or no item: the specimen cannot be told from a lab dictionary
    fluid = statement_fluid(c)
    if fluid is None:
        return None
    fluid_of = catalog_fluids(c.session.tools)
    known = {k: f for k in keys if (f := fluid_of(k))}
    if not known or any(f.lower().startswith(fluid.lower()) for f in known.values()):
        return None  # the specimen's own item, or items whose specimen the catalogue does not tell
    labels = dict(zip(c.entity.item_keys, (it.label for it in c.entity.items), strict=False))
    shown = ", ".join(f"{labels.get(k) or k} ({f.lower()})" for k, f in known.items())
    return unverified(c, f"{c.entity.text} not judged: reported on a {fluid.lower()} sample, and the patient has no "
                      f"{fluid.lower()} item of it; the value is not compared with {shown}")


OTHER_SPECIMEN = Rule("numbers.other_specimen", "A lab value whose words name a specimen other than blood (a fluid "
                      "record, a specimen heading, urine Na) is judged only against that specimen's items; without "
                      "one of the patient it is unverified, never compared with blood.", _other_specimen,
                      ("measurement", "range", "trend"))
