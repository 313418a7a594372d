"""Command line: `matchflow info`, `demo`, `solve FILE` and `bench SUITE`."""
from __future__ import annotations

import argparse
import sys



def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="matchflow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="how matchflow was built and which devices it sees")
    from . import _cli_bench, _cli_demo, _cli_solve
    _cli_demo.add_parser(sub)
    _cli_solve.add_parser(sub)
    _cli_bench.add_parser(sub)
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.command == "info":
        from ._device import show_config

        show_config()
        return 0
    if args.command == "solve":
        try:
            return _cli_solve.run(args)
        except (ValueError, OverflowError, MemoryError, RuntimeError, OSError) as e:
            print(f"matchflow solve: {e}", file=sys.stderr)
            return 2
    if args.command == "bench":
        return _cli_bench.run(args)
    return _cli_demo.run(args)


if __name__ == "__main__":
    sys.exit(main())
