"""Id lists for import filters (``--hadm-ids``, ``--subject-ids``): plain text a person writes."""
from __future__ import annotations

import os
from pathlib import Path

from ehrlib.errors import ConfigError, os_reason

__all__ = ["read_id_file"]


def read_id_file(path: str | os.PathLike[str], what: str = "id") -> frozenset[int]:
    """Integer ids from a text file: separated by whitespace or commas, ``#`` starts a
    comment, an optional header word (``hadm_id``) on the first line is skipped.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{what} file {p}: not found")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{what} file {p}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset "
                          f"{exc.start}); expected ids as plain text") from None
    except OSError as exc:
        raise ConfigError(f"{what} file {p}: cannot be read ({os_reason(exc)})") from None
    ids: set[int] = set()
    for lineno, raw in enumerate(text.splitlines(), start=1):
        for token in raw.split("#", 1)[0].replace(",", " ").split():
            try:
                ids.add(int(token))
            except ValueError:
                if lineno == 1 and token.lower().replace("_", "").isalpha():
                    continue  # a header such as HADM_ID
                raise ConfigError(f"{p}:{lineno}: {what} {token!r} is not an integer") from None
    if not ids:
        raise ConfigError(f"{what} file {p}: no ids in it")
    return frozenset(ids)
