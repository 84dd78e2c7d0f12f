#!/usr/bin/env python3
"""A kernel file built with knob values (or an experiment's EXP_ switches) prepended as #defines, copied to
OUT_DIR/NAME.so for benchmarks/pointwise_variants.py -- the in-process comparison of several variants within one
GPU call (machines differ by a few percent: compare variants in the same call). No GPU needed: build on the CPU
machine and carry OUT_DIR. The build is scripts/sass_diff.py's (`cutegen compile` with the defines prepended,
its checks and cache), so SOURCE may also be REV:PATH, the file as git has it at REV.

Usage:
  benchmarks/build_variant.py SOURCE OUT_DIR NAME [KNOB=VALUE ...] [--cutegen build/cutegen]
e.g. the ticket softmax experiment as measured, its trace build, and the library file with 7 stages:
  benchmarks/build_variant.py a6157ac:benchmarks/softmax_ticket.cu v exp EXP_THREADS=128
  benchmarks/build_variant.py a6157ac:benchmarks/softmax_ticket.cu v trace EXP_TRACE=1 EXP_THREADS=128
  benchmarks/build_variant.py library/softmax_ticket.cu v s7 TKS_STAGES=7
  python3 benchmarks/pointwise_variants.py problems/softmax_large.py v/*.so --reps 3
Prints OUT_DIR/NAME.so; exit 1 with one line (the first compile error) when it does not build.
"""
import argparse
import importlib.util
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("sass_diff", os.path.join(ROOT, "scripts", "sass_diff.py"))
sass_diff = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_diff)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__[__doc__.index("Usage:"):])
    ap.add_argument("source", help="a .cu file or REV:PATH")
    ap.add_argument("out_dir")
    ap.add_argument("name", help="the variant's name: OUT_DIR/NAME.so (its source: OUT_DIR/src/NAME/)")
    ap.add_argument("defines", nargs="*", type=sass_diff.define, metavar="KNOB=VALUE")
    ap.add_argument("--cutegen", default=os.path.join(ROOT, "build", "cutegen"), help="the cutegen binary")
    args = ap.parse_args(argv)
    try:
        if not os.access(args.cutegen, os.X_OK):
            raise sass_diff.CompareError(f"{args.cutegen}: not an executable cutegen (run scripts/setup or pass --cutegen)")
        library = sass_diff.build(args.source, args.defines, args.cutegen, os.path.join(args.out_dir, "src"), args.name)
    except sass_diff.CompareError as e:
        print(f"build_variant: {e}", file=sys.stderr)
        return 1
    target = os.path.join(args.out_dir, args.name + ".so")
    shutil.copyfile(library, target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
