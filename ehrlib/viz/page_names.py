"""File names of the viewer's note pages: safe, bounded and unique per note id.

A note id is data, not a path: ``index`` or ``findings`` must not overwrite the index or
the findings page, ``a/b`` and
``a_b`` must not share a page, ``..`` must not climb out of the folder and a 300-character
id must not exceed a file system's name limit. So a page's name is a readable slug of the
id (letters, digits, ``_``, ``-``; at most :data:`MAX_SLUG` characters) followed by a short
hash of the exact id; the page itself shows the real id.
"""
from __future__ import annotations

import hashlib
import re

__all__ = ["FINDINGS_PAGE", "INDEX_PAGE", "MAX_SLUG", "page_name"]

INDEX_PAGE = "index.html"
#: the page listing every finding across notes (a note page's name always ends in a hash)
FINDINGS_PAGE = "findings.html"
#: characters of the readable part of a page name (the hash keeps names unique)
MAX_SLUG = 60
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def page_name(note_id: str) -> str:
    """``<slug>-<10 hex digits of the id's SHA-256>.html``; never ``index.html``."""
    slug = _UNSAFE.sub("_", note_id).strip("_-")[:MAX_SLUG] or "note"
    digest = hashlib.sha256(note_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{slug}-{digest}.html"
