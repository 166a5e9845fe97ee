"""``tuner``: an NCCL tuner-plugin CSV of the engine's algorithm / protocol / channel choices.

Examples::

    python -m designer.engine tuner --template dgx-h100 --hosts 4 -o nccl_tuner.conf
    python -m designer.engine tuner --template dgx-h100 --hosts 16 --sharp --ops all_reduce
    python -m designer.engine tuner --topology pod.json -b 1K -e 1G --no-channels

The file is the CSV of NCCL's example tuner plugin (NVIDIA/nccl ``ext-tuner/example``; format in
:mod:`designer.engine.analysis.tuner_export` and docs/FORMATS.md): load it with
``NCCL_TUNER_PLUGIN=libnccl-tuner-example.so NCCL_TUNER_CONFIG_FILE=nccl_tuner.conf``.
"""
from __future__ import annotations

import sys

from designer.engine.commands._design_source import add_design_arguments, design_label, design_of

__all__ = ["add_arguments", "run"]


def add_arguments(parser) -> None:
    from designer.engine.analysis.tuner_export import TUNER_OPS

    add_design_arguments(parser)
    parser.add_argument("--ops", default=",".join(TUNER_OPS),
                        help=f"comma-separated nccl-tests ops (default: {','.join(TUNER_OPS)})")
    parser.add_argument("-b", "--min-bytes", default="8", help="smallest sampled size (8, 64K, 8M)")
    parser.add_argument("-e", "--max-bytes", default="8G", help="largest sampled size")
    parser.add_argument("-f", "--factor", type=int, default=2, help="factor between sampled sizes")
    parser.add_argument("--no-channels", action="store_true", help="write -1 channels (keep NCCL's count)")
    parser.add_argument("-o", "--output", help="write the CSV here instead of stdout")


def run(args) -> int:
    from designer.engine.analysis.tuner_export import tuner_csv, tuner_rows

    ops = [op.strip() for op in args.ops.split(",") if op.strip()]
    rows = tuner_rows(design_of(args), ops=ops, min_bytes=args.min_bytes, max_bytes=args.max_bytes,
                      factor=args.factor, channels=not args.no_channels)
    comment = (f"NCCL tuner-plugin config (ext-tuner/example format) predicted by fabricscope for "
               f"{design_label(args)}\nsampled {args.min_bytes}..{args.max_bytes} x{args.factor}; "
               f"ranges inclusive; nNodes/nRanks are this design's")
    text = tuner_csv(rows, comment)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(f"wrote {args.output}: {len(rows)} lines", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
