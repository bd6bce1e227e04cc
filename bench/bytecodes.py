"""Bytecode instructions a game of a compiled engine executes, by function and by line.

Usage: python bench/bytecodes.py [FILE] [--variant V] [--players P] [--games N] [--lines K]
       [--opcodes K] [--driver | --peer [PEER]]

Plays seeds 0..N-1 (default 100) of FILE (default rules/acquire.rules) in the generated module's
playout kernel (`--driver`: through the engine protocol, bench/compare_commits.py's driver) and
counts CPython's opcode events (`sys.settrace` with `f_trace_opcodes`), then prints the count a
game and the functions that execute the most; with --lines K also the K busiest lines of the
module, with their code; with --opcodes K the K most executed opcodes and the attributes most
loaded or stored (LOAD_ATTR, STORE_ATTR, LOAD_METHOD: the state's traffic). `--peer` counts
the games of a hand-tuned Acquire peer instead (its `play(players, rng)`, its own random
numbers): bench/peers/acquire_fast.py, or the file PEER (bench/peers/acquire_tuned.py). Like
`compare_commits.py --callgrind` the count does not depend on the machine's load, and it says
where in the generated code the instructions go; it is not time (calls, allocations and
CPython's specialised instructions cost differently: check a change in time with
`compare_commits.py --inprocess`). The counts are made after one game played untraced, so that
one-time work (bits' tables) is not counted.
"""

from __future__ import annotations

import argparse
import collections
import dis
import os
import random
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "bench"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default=os.path.join(HERE, "rules", "acquire.rules"))
    ap.add_argument("--variant")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--games", type=int, default=100)
    ap.add_argument("--lines", type=int, default=0)
    ap.add_argument("--opcodes", type=int, default=0)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--driver", action="store_true")
    mode.add_argument("--peer", nargs="?", metavar="PEER",
                      const=os.path.join(HERE, "bench", "peers", "acquire_fast.py"))
    args = ap.parse_args()
    from compare_commits import DRIVE
    from peer_inprocess import load

    drive_ns: dict = {}
    exec(DRIVE, drive_ns)  # the benchmark's protocol driver, as compare_commits runs it
    with tempfile.TemporaryDirectory() as tmp:
        if args.peer:
            path = os.path.abspath(args.peer)
            m = load(path, "peer")

            def play(seed):
                m.play(args.players, random.Random(seed))
        else:
            import rulelang
            from rulelang.codegen import compile_program

            path = os.path.join(tmp, "engine.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(compile_program(rulelang.check_file(args.file, args.variant)))
            m = load(path, "engine")

            def play(seed):
                s = m.new_game(args.players)
                if args.driver:
                    drive_ns["drive"](s, random.Random(seed))
                else:
                    m.playout(s, random.Random(seed), "random_end")
        with open(path, encoding="utf-8") as f:
            source = f.read().splitlines()
        play(10**6)  # untraced: one-time work (bits' tables) is not counted
        funcs: collections.Counter = collections.Counter()
        lines: collections.Counter = collections.Counter()
        ops: collections.Counter = collections.Counter()
        attrs: collections.Counter = collections.Counter()
        tables: dict = {}  # code object -> {offset: (opcode name, argument)}

        def trace(frame, event, _arg):
            frame.f_trace_opcodes = True
            if event == "opcode" and frame.f_code.co_filename == path:
                funcs[frame.f_code.co_name] += 1
                lines[frame.f_lineno] += 1
                if args.opcodes:
                    code = frame.f_code
                    table = tables.get(code)
                    if table is None:
                        table = tables[code] = {i.offset: (i.opname, i.argval)
                                                for i in dis.get_instructions(code)}
                    op, arg = table.get(frame.f_lasti, ("?", None))
                    ops[op] += 1
                    if op in ("LOAD_ATTR", "STORE_ATTR", "LOAD_METHOD"):
                        attrs[(op, arg)] += 1
            return trace

        sys.settrace(trace)
        try:
            for seed in range(args.games):
                play(seed)
        finally:
            sys.settrace(None)
    total = sum(funcs.values())
    n = args.games
    print(f"{os.path.basename(path if args.peer else args.file)}"
          f"{' ' + args.variant if args.variant else ''}, {args.players} players, {n} games, "
          f"{'peer' if args.peer else 'protocol driver' if args.driver else 'kernel'}: "
          f"{total / n:,.0f} bytecode instructions a game")
    for name, k in funcs.most_common(20):
        print(f"  {k / n:10,.0f}  {100 * k / total:5.1f}%  {name}")
    if args.lines:
        print("busiest lines:")
        for line, k in lines.most_common(args.lines):
            code = source[line - 1].strip()[:80] if line and line <= len(source) else ""
            print(f"  {k / n:10,.0f}  {line or '-':>5}  {code}")
    if args.opcodes:
        print("opcodes:")
        for op, k in ops.most_common(args.opcodes):
            print(f"  {k / n:10,.0f}  {100 * k / total:5.1f}%  {op}")
        print("attributes:")
        for (op, name), k in attrs.most_common(args.opcodes):
            print(f"  {k / n:10,.0f}  {op} {name}")


if __name__ == "__main__":
    main()
