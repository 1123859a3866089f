"""EHR-Inspector: segment -> temporal anchors -> extraction -> scope filter -> verification."""
from __future__ import annotations
