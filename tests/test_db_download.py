"""`ehrlib download` against a local HTTP server on 127.0.0.1 (no network)."""
from __future__ import annotations

import hashlib
import re
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ehrlib.cli import main
from ehrlib.db.download import download
from ehrlib.errors import ConfigError, DataError


class _RangeHandler(SimpleHTTPRequestHandler):
    """Static files with `Range: bytes=N-` support; records the requests it saw."""

    seen: list[tuple[str, str | None]] = []

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):  # noqa: N802 - http.server API
        type(self).seen.append((self.path, self.headers.get("Range")))
        m = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range") or "")
        path = Path(self.translate_path(self.path))
        if not m or not path.is_file():
            return super().do_GET()
        data = path.read_bytes()
        start = int(m.group(1))
        if start >= len(data):
            self.send_response(416)
            self.end_headers()
            return
        self.send_response(206)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])


def _tree(root: Path) -> dict[str, bytes]:
    files = {"PATIENTS.csv": b"row_id,subject_id\n1,10\n", "sub/LABEVENTS.csv.gz": bytes(range(256)) * 300}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "SHA256SUMS.txt").write_text(
        "".join(f"{hashlib.sha256(d).hexdigest()} {n}\n" for n, d in files.items()))
    return files


@pytest.fixture()
def server(tmp_path):
    root = tmp_path / "remote"
    root.mkdir()
    files = _tree(root)
    _RangeHandler.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(_RangeHandler, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", root, files
    httpd.shutdown()
    httpd.server_close()


def test_download_verifies_and_skips_complete_files(server, tmp_path):
    url, _, files = server
    dest = tmp_path / "dest"
    r = download("mimic-iii-demo", dest, base_url=url, progress=False)
    assert (r.files, r.downloaded, r.skipped) == (2, 2, 0)
    for name, data in files.items():
        assert (dest / name).read_bytes() == data
    assert not list(dest.rglob("*.part"))
    r2 = download("mimic-iii-demo", dest, base_url=url, progress=False)
    assert (r2.downloaded, r2.skipped) == (0, 2)


def test_download_resumes_a_partial_file_with_range(server, tmp_path):
    url, _, files = server
    dest = tmp_path / "dest"
    data = files["sub/LABEVENTS.csv.gz"]
    (dest / "sub").mkdir(parents=True)
    (dest / "sub" / "LABEVENTS.csv.gz.part").write_bytes(data[:1000])
    download("mimic-iii-demo", dest, base_url=url, progress=False)
    assert (dest / "sub" / "LABEVENTS.csv.gz").read_bytes() == data
    assert ("/sub/LABEVENTS.csv.gz", "bytes=1000-") in _RangeHandler.seen


def test_checksum_mismatch_is_an_error_and_leaves_no_file(server, tmp_path):
    url, root, _ = server
    (root / "PATIENTS.csv").write_bytes(b"row_id,subject_id\n1,11\n")  # tampered after SHA256SUMS
    dest = tmp_path / "dest"
    with pytest.raises(DataError, match="PATIENTS.csv: sha256 .* does not match"):
        download("mimic-iii-demo", dest, base_url=url, progress=False)
    assert not (dest / "PATIENTS.csv").exists() and not (dest / "PATIENTS.csv.part").exists()


def test_unsafe_paths_and_unknown_dataset(server, tmp_path):
    url, root, _ = server
    (root / "SHA256SUMS.txt").write_text(f"{'0' * 64} ../evil.txt\n")
    with pytest.raises(DataError, match="unsafe path"):
        download("mimic-iv-demo", tmp_path / "d", base_url=url, progress=False)
    with pytest.raises(ConfigError):
        download("mimic-v-demo", tmp_path / "d", base_url=url, progress=False)


def test_cli_reports_unreachable_server_in_one_line(tmp_path, capsys, monkeypatch):
    # a closed port on 127.0.0.1: connection refused, no network involved
    import socket

    from ehrlib.db import download as mod

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    monkeypatch.setattr(mod, "DATASETS", {"mimic-iii-demo": (f"http://127.0.0.1:{port}/", "mimic3")})
    code = main(["download", "mimic-iii-demo", str(tmp_path / "d"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and err[0].startswith("error: GET http://127.0.0.1")
