"""Shared pytest fixtures.

Fixtures that build databases are session-scoped: the MIMIC demo and the synthetic
hospital are built once per test session into a temporary directory. Each section
below belongs to the module it serves; append new fixtures in their own section.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir(name: str, env_var: str) -> Path | None:
    """The real MIMIC demo folder `name`, from `env_var` or ../shared/data next to the repo."""
    env = os.environ.get(env_var)
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "data" / name)
    for path in candidates:
        if path.is_dir():
            return path
    return None


@pytest.fixture(scope="session")
def mimic3_demo_dir() -> Path:
    path = shared_data_dir("mimic-iii-demo", "EHRLIB_MIMIC3_DEMO")
    if path is None:
        pytest.skip("MIMIC-III demo not found (set EHRLIB_MIMIC3_DEMO or run `ehrlib download mimic-iii-demo`)")
    return path


@pytest.fixture(scope="session")
def mimic4_demo_dir() -> Path:
    path = shared_data_dir("mimic-iv-demo", "EHRLIB_MIMIC4_DEMO")
    if path is None:
        pytest.skip("MIMIC-IV demo not found (set EHRLIB_MIMIC4_DEMO or run `ehrlib download mimic-iv-demo`)")
    return path


# --- ehrlib.db: the real demos built once per session --------------------------------


@pytest.fixture(scope="session")
def mimic3_demo_db(mimic3_demo_dir, tmp_path_factory) -> Path:
    """Path of the MIMIC-III demo built with `ehrlib build-db` (read it via ehrlib.db.connect)."""
    from ehrlib.db.build import build_db

    return build_db(mimic3_demo_dir, tmp_path_factory.mktemp("mimic3_demo") / "mimic3_demo.duckdb",
                    progress=False).path


@pytest.fixture(scope="session")
def mimic4_demo_db(mimic4_demo_dir, tmp_path_factory) -> Path:
    """Path of the MIMIC-IV demo built with `ehrlib build-db` (icu/chartevents is missing)."""
    from ehrlib.db.build import build_db

    return build_db(mimic4_demo_dir, tmp_path_factory.mktemp("mimic4_demo") / "mimic4_demo.duckdb",
                    progress=False).path
