"""``python -m ehrlib``: the command line."""

from ehrlib.cli import main

raise SystemExit(main())
