"""`ehrlib bench [--only build,tools,...] [--out figures]`."""
from __future__ import annotations

import argparse
import importlib
from pathlib import Path

from ehrlib.bench import BenchSkipped, available
from ehrlib.errors import ConfigError, unknown_name

__all__ = ["register", "run_benchmarks"]


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``bench`` command to the CLI."""
    p = sub.add_parser("bench", help="run the benchmarks and write figures/bench_*.csv",
                       description=f"Run benchmarks (available: {', '.join(available()) or 'none'}).")
    p.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    p.add_argument("--out", default="figures", help="folder for the result CSVs (default: figures)")
    p.add_argument("--with-estimate", action="store_true",
                   help="quality only: also score the sealed estimate set (tests/fixtures/estimate_blind); "
                        "for the single final run, never while developing")
    p.set_defaults(func=_bench)


def run_benchmarks(names: list[str], out_dir: Path, *, with_estimate: bool = False) -> dict[str, Path | str]:
    """Run the named benchmarks; {name: result path, or the skip reason}.

    ``with_estimate`` asks the quality benchmark to score the sealed estimate set as well;
    it is refused unless ``quality`` is named explicitly, so a plain ``ehrlib bench``
    never touches that set.
    """
    known = available()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(unknown_name("benchmark", unknown[0], known))
    if with_estimate and "quality" not in names:
        raise ConfigError("--with-estimate applies to the quality benchmark: use --only quality --with-estimate")
    results: dict[str, Path | str] = {}
    for name in names or known:
        module = importlib.import_module(f"ehrlib.bench.{name}")
        try:
            kwargs = {"with_estimate": True} if with_estimate and name == "quality" else {}
            results[name] = module.run(out_dir, **kwargs)
        except BenchSkipped as exc:
            results[name] = str(exc)
    return results


def _bench(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    for name, result in run_benchmarks(names, Path(args.out), with_estimate=args.with_estimate).items():
        if isinstance(result, Path):
            print(f"{name}: wrote {result}")
        else:
            print(f"{name}: skipped ({result})")
    return 0
