"""`ehrlib download`: fetch a PhysioNet open demo (ODbL) and verify it file by file.

PhysioNet publishes a SHA256SUMS.txt beside each project's files; it is the list of
what to fetch and the check each file must pass. Downloads go to ``<file>.part`` and are
resumed with an HTTP Range request when a partial file is found; a file is renamed into
place only after its sha256 matches, so an interrupted run can simply be started again.
Files already present with the right checksum are skipped.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import MappingProxyType

import httpx
from tqdm import tqdm

from ehrlib.db.contracts import DEMO_SUMS_FINGERPRINT, read_sums, sha256_file
from ehrlib.errors import ConfigError, DataError, unknown_name

__all__ = ["DATASETS", "DownloadResult", "download"]

#: dataset name -> (PhysioNet files URL, flavor whose checksum fingerprint it must carry)
DATASETS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "mimic-iii-demo": ("https://physionet.org/files/mimiciii-demo/1.4/", "mimic3"),
    "mimic-iv-demo": ("https://physionet.org/files/mimic-iv-demo/2.2/", "mimic4"),
})
SUMS_FILE = "SHA256SUMS.txt"
_CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class DownloadResult:
    """Where a demo was downloaded and how many files were verified, fetched and skipped."""
    dest: Path
    files: int
    downloaded: int
    skipped: int


def _safe_relpath(name: str) -> PurePosixPath:
    p = PurePosixPath(name)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        raise DataError(f"{SUMS_FILE} names an unsafe path {name!r}")
    return p


def _fetch(client: httpx.Client, url: str, target: Path, *, progress: bool) -> None:
    """Download ``url`` to ``target.part``, resuming it if present; the caller verifies and renames."""
    part = target.with_name(target.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    try:
        with client.stream("GET", url, headers=headers) as r:
            if r.status_code == 416:  # partial file already complete (or larger than the file)
                return
            if r.status_code not in (200, 206):
                raise DataError(f"GET {url}: HTTP {r.status_code}")
            append = r.status_code == 206 and have > 0
            if not append:
                have = 0  # the server ignored Range: start over
            length = r.headers.get("content-length")
            total = have + int(length) if length and length.isdigit() else None
            with open(part, "ab" if append else "wb") as fh, tqdm(
                total=total, initial=have, unit="B", unit_scale=True, desc=target.name,
                disable=not progress, leave=False,
            ) as bar:
                for chunk in r.iter_bytes(_CHUNK):
                    fh.write(chunk)
                    bar.update(len(chunk))
    except httpx.HTTPError as exc:
        raise DataError(f"GET {url}: {' '.join(str(exc).split()) or type(exc).__name__} "
                        "(run the command again to resume)") from None


def download(dataset: str, dest: str | os.PathLike, *, base_url: str | None = None, progress: bool = True,
             timeout: float = 60.0) -> DownloadResult:
    """Download and verify one open demo into ``dest``.

    Args:
        dataset: ``mimic-iii-demo`` or ``mimic-iv-demo``.
        dest: target folder (created if needed).
        base_url: another server with the same tree (a mirror, or a local test server);
            the demo fingerprint check of SHA256SUMS.txt is done only for PhysioNet's URL.
        progress: show progress bars.
        timeout: seconds to wait for the server on each request.

    Returns:
        Counts of files verified, downloaded and skipped. Raises DataError on a checksum
        mismatch or a network failure (partial files are kept for resuming).
    """
    if dataset not in DATASETS:
        raise ConfigError(unknown_name("dataset", dataset, DATASETS))
    official, flavor = DATASETS[dataset]
    base = (base_url or official).rstrip("/") + "/"
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    with httpx.Client(timeout=timeout, follow_redirects=True) as client:
        sums_path = dest / SUMS_FILE
        sums_part = sums_path.with_name(SUMS_FILE + ".part")
        sums_part.unlink(missing_ok=True)  # small: always fetch the current list afresh
        _fetch(client, base + SUMS_FILE, sums_path, progress=False)
        os.replace(sums_part, sums_path)
        sums = read_sums(sums_path)
        if not sums:
            raise DataError(f"{base}{SUMS_FILE} lists no files")
        if base_url is None:
            name, digest = DEMO_SUMS_FINGERPRINT[flavor]
            if sums.get(name) != digest:
                raise DataError(f"{base}{SUMS_FILE} is not the {dataset} checksum list ehrlib knows")
        downloaded = skipped = 0
        for name, digest in tqdm(sorted(sums.items()), desc=dataset, unit="file", disable=not progress):
            rel = _safe_relpath(name)
            target = dest.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.exists() and sha256_file(target) == digest:
                skipped += 1
                continue
            _fetch(client, base + rel.as_posix(), target, progress=progress)
            part = target.with_name(target.name + ".part")
            got = sha256_file(part)
            if got != digest:
                part.unlink()
                raise DataError(f"{name}: sha256 {got[:12]}… does not match {SUMS_FILE} ({digest[:12]}…); "
                                "the partial file was removed, run the command again")
            os.replace(part, target)
            downloaded += 1
    return DownloadResult(dest, len(sums), downloaded, skipped)
