"""What a CLI start and a pipeline process import: no slow optional extras.

``jsonschema`` would import ``rfc3987_syntax`` (a grammar compiled at import, seconds
on this machine) and the lexical index used to pull in scikit-learn; neither is needed
to start the CLI, load the validated data files or build the lexical index.
"""
from __future__ import annotations

import subprocess
import sys


def _imported_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True).stdout.split()
    return set(out)


def test_cli_parser_and_data_files_skip_rfc3987_syntax_and_sklearn():
    mods = _imported_after("from ehrlib.cli import build_parser; build_parser()\n"
                           "from ehrlib.datafiles import load_data; load_data('offline_lexicon.yaml')\n"
                           "from ehrlib.tools.ngrams import CharWbTfidf; CharWbTfidf(['wbc', 'hr'])\n"
                           "from ehrlib.llm.replies import schema_error\n"
                           "assert schema_error({'a': 1}, {'type': 'object', 'required': ['b']})")
    assert "jsonschema" in mods  # validation did run
    assert "rfc3987_syntax" not in mods and "sklearn" not in mods


def test_rfc3987_syntax_still_imports_for_code_that_wants_it():
    mods = _imported_after("from ehrlib.datafiles import load_data; load_data('offline_lexicon.yaml')\n"
                           "import rfc3987_syntax")
    assert "rfc3987_syntax" in mods
