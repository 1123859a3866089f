"""Run the numbered notebooks as experiments with papermill.

``notebooks/NN_<stem>.ipynb`` is paired with ``params/NN_<stem>.yaml`` (same keys as the
notebook's ``parameters`` cell). An experiment is one notebook executed with its params
file; the executed copy goes to ``runs/notebooks/<stem>.ipynb`` so the committed
notebook stays output-free.
"""
from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from ehrlib.errors import ConfigError

__all__ = ["Experiment", "list_experiments", "run_notebooks", "papermill"]

log = logging.getLogger(__name__)
_NAME = re.compile(r"^(\d\d)_([a-z0-9_]+)$")


@dataclass(frozen=True, slots=True)
class Experiment:
    number: int
    stem: str
    notebook: Path
    params: Path | None

    @property
    def name(self) -> str:
        return f"{self.number:02d}_{self.stem}"


def list_experiments(root: str | Path = ".") -> list[Experiment]:
    """Every numbered notebook under ``root/notebooks`` with its params file, in order."""
    root = Path(root)
    found = []
    for nb in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        m = _NAME.match(nb.stem)
        if not m:
            continue
        params = root / "params" / f"{nb.stem}.yaml"
        found.append(Experiment(int(m.group(1)), m.group(2), nb, params if params.exists() else None))
    return found


def _select(experiments: list[Experiment], name: str) -> list[Experiment]:
    if name == "all":
        return experiments
    chosen = [e for e in experiments if name in (e.name, e.stem, f"{e.number:02d}", str(e.number))]
    if not chosen:
        known = ", ".join(e.name for e in experiments) or "none"
        raise ConfigError(f"no experiment named {name!r}; known: {known}")
    return chosen


def papermill():
    """The papermill module, or a one-line error: the notebook stack is an extra."""
    try:
        import papermill as pm  # deferred: an extra (the notebook stack); only running notebooks needs it
    except ImportError as exc:
        raise ConfigError("running notebooks needs the notebooks extra: pip install 'ehrlib[notebooks]'") from exc
    return pm


def _quiet_notebook_logs() -> dict:
    """Keep papermill's per-notebook INFO lines and the kernels' start-up warnings off the
    console unless debug logging is on; returns the engine options that do it.

    The "Kernel is running over TCP without encryption" warning is logged by each kernel
    process (ipykernel) to its own stderr, so only the kernel's log level can hold it back;
    the kernels here are local and short-lived. Cell errors still fail the run.
    """
    if logging.getLogger().isEnabledFor(logging.DEBUG):
        return {}
    for name in ("papermill", "traitlets"):
        logging.getLogger(name).setLevel(logging.WARNING)
    return {"extra_arguments": ["--IPKernelApp.log_level=ERROR"]}


def run_notebooks(name: str = "all", *, root: str | Path = ".", out_dir: str | Path = "runs/notebooks",
                  use_params_file: bool = True, overrides: dict | None = None) -> list[Path]:
    """Execute the selected notebooks with papermill; returns the executed copies.

    With ``use_params_file`` the YAML's full-run values are injected; without it the
    notebook's own fast defaults run (what the test suite does).
    """

    pm = papermill()
    quiet = _quiet_notebook_logs()

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for exp in _select(list_experiments(root), name):
        params = {}
        if use_params_file and exp.params is not None:
            params = yaml.safe_load(exp.params.read_text(encoding="utf-8")) or {}
        params.update(overrides or {})
        target = out / exp.notebook.name
        t0 = time.perf_counter()
        print(f"notebook {exp.name} ...", end=" ", flush=True)
        pm.execute_notebook(str(exp.notebook), str(target), parameters=params, cwd=str(Path(root).resolve()),
                            progress_bar=False, kernel_name="python3", **quiet)
        print(f"{time.perf_counter() - t0:.1f} s -> {target}")
        written.append(target)
    return written
