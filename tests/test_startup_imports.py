"""What a CLI start and a pipeline process import: no slow optional extras.

``jsonschema`` would import ``rfc3987_syntax`` (a grammar compiled at import, seconds
on this machine) and the lexical index used to pull in scikit-learn; neither is needed
to start the CLI, load the validated data files or build the lexical index.
"""
from __future__ import annotations

import os
import subprocess
import sys


def _imported_after(code: str, **env: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, env={**os.environ, **env}).stdout.split()
    return set(out)


def test_cli_parser_and_data_files_skip_rfc3987_syntax_and_sklearn():
    mods = _imported_after("from ehrlib.cli import build_parser; build_parser()\n"
                           "from ehrlib.datafiles import load_data; load_data('offline_lexicon.yaml')\n"
                           "from ehrlib.tools.ngrams import CharWbTfidf; CharWbTfidf(['wbc', 'hr'])\n"
                           "from ehrlib.llm.replies import schema_error\n"
                           "assert schema_error({'a': 1}, {'type': 'object', 'required': ['b']})",
                           EHRLIB_CACHE_DIR="off")   # the data file parsed and validated, not read from a cache
    assert "jsonschema" in mods  # validation did run
    assert "rfc3987_syntax" not in mods and "sklearn" not in mods


def test_a_pipeline_start_with_a_warm_cache_skips_the_validator_and_pandas(tmp_path):
    code = ("from ehrlib.pipeline.runner import run_experiment\n"
            "from ehrlib.pipeline.offline.lexicon import load_lexicon; load_lexicon()")
    _imported_after(code, EHRLIB_CACHE_DIR=str(tmp_path))   # fills the cache
    mods = _imported_after(code, EHRLIB_CACHE_DIR=str(tmp_path))
    assert "jsonschema" not in mods and "pandas" not in mods and "ehrlib.pipeline.offline.lexicon" in mods


def test_rfc3987_syntax_still_imports_for_code_that_wants_it():
    mods = _imported_after("from ehrlib.datafiles import load_data; load_data('offline_lexicon.yaml')\n"
                           "import rfc3987_syntax")
    assert "rfc3987_syntax" in mods


def test_a_search_of_a_cached_index_imports_neither_scipy_nor_asyncio(tmp_path):
    """Fitting the n-gram index needs SciPy; reading it back from the disk cache and searching
    it use NumPy alone, and a pipeline start leaves tqdm's asyncio bar unimported."""
    code = ("from ehrlib.pipeline.runner import run_experiment\n"
            "from ehrlib.tools.ngrams import CharWbTfidf\n"
            "import numpy as np, pathlib\n"
            f"p = pathlib.Path({str(tmp_path / 'ix.npz')!r})\n"
            "if not p.exists(): np.savez(p, **CharWbTfidf(['heart rate', 'wbc']).to_arrays())\n"
            "with np.load(p) as z: v = CharWbTfidf.from_arrays({k: z[k] for k in z.files})\n"
            "assert v.similarities(['heart rt']).argmax() == 0")
    assert "scipy" in _imported_after(code)   # the first run fits
    mods = _imported_after(code)
    assert "scipy" not in mods and "scipy.sparse" not in mods and "numpy" in mods
    assert "asyncio" not in mods and "tqdm" not in mods
