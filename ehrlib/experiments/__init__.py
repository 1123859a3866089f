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
from typing import Any

from ehrlib.errors import ConfigError, unknown_name

__all__ = ["Experiment", "list_experiments", "run_notebooks", "papermill"]

log = logging.getLogger(__name__)
_NAME = re.compile(r"^(\d\d)_([a-z0-9_]+)$")


@dataclass(frozen=True, slots=True)
class Experiment:
    """One numbered notebook and its parameter file."""
    number: int
    stem: str
    notebook: Path
    params: Path | None

    @property
    def name(self) -> str:
        """``NN_stem``, the notebook's file stem."""
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
        raise ConfigError(unknown_name("experiment", name, [e.name for e in experiments] or ["none"]))
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


def _notebook_params(path: Path) -> dict[str, Any]:
    """A notebook's params file, checked before papermill starts: its run parameters as
    ``ehrlib run`` would check them, and each id in a ``run_ids`` sweep as a run id.
    """
    # deferred: the CLI loads a command's code only when that command runs (fast --help)
    from ehrlib.pipeline.params import params_from_mapping
    from ehrlib.pipeline.runid import check_run_id
    from ehrlib.yamlfiles import read_yaml

    doc = read_yaml(path, what="params file")
    if doc.data is None:
        return {}
    params_from_mapping(doc.data, source=doc.source, lines=doc.lines)   # raises on a bad value
    run_ids = doc.data.get("run_ids") or []
    for rid in run_ids if isinstance(run_ids, list) else [run_ids]:
        check_run_id(str(rid), where=doc.where("run_ids"))
    return dict(doc.data)


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
        params: dict[str, Any] = {}
        if use_params_file and exp.params is not None:
            params = _notebook_params(exp.params)
        params.update(overrides or {})
        target = out / exp.notebook.name
        t0 = time.perf_counter()
        print(f"notebook {exp.name} ...", end=" ", flush=True)
        pm.execute_notebook(str(exp.notebook), str(target), parameters=params, cwd=str(Path(root).resolve()),
                            progress_bar=False, kernel_name="python3", **quiet)
        print(f"{time.perf_counter() - t0:.1f} s -> {target}")
        written.append(target)
    return written
