"""Files written through a temp file get the mode the umask allows, not mkstemp's 0600."""
from __future__ import annotations

import os
import stat

import pytest

from ehrlib.corpus.io import write_json, write_text
from ehrlib.filemodes import current_umask
from ehrlib.report.build import write_bytes


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_written_files_follow_the_umask(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        assert current_umask() == mask
        paths = [write_text("x", tmp_path / "a.txt"), write_json({"a": 1}, tmp_path / "b.json"),
                 write_bytes(b"x", tmp_path / "c.bin")]
        from matplotlib.figure import Figure

        from ehrlib.viz.save import savefig

        paths += savefig(Figure(), "fig", out_dir=tmp_path / "figs", formats=("svg",))
    finally:
        os.umask(old)
    assert {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in paths} == {p.name: oct(mode) for p in paths}
