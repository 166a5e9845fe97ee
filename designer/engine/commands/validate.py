"""``validate FILE``: check a topology document.

Exit status 0 and a one-line summary when valid; otherwise every problem, one per line
(``links[12].b: unknown node "h3/nic9"``) on stdout, and exit status 1.
"""
from __future__ import annotations

import sys


def add_arguments(parser) -> None:
    parser.add_argument("file", help="topology document (JSON), or - for stdin")


def run(args) -> int:
    from designer.engine.document import load, validate
    from designer.engine.errors import EngineError

    try:
        doc = load(sys.stdin.read() if args.file == "-" else args.file)
    except EngineError as exc:
        for line in exc.lines():
            print(line)
        return 1
    problems = validate(doc)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{args.file}: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"{args.file}: valid ({len(doc['nodes'])} nodes, {len(doc['links'])} links)")
    return 0
