#!/usr/bin/env python3
"""Finds loads the processor cannot forward from recent stores.

A load that reads bytes of a store still in flight (written a few dozen
instructions earlier, not yet in the cache) is served from the store buffer
only when one store covers every byte it reads. A load that spans two
stores, or a store and the cache, waits until those stores reach the cache:
tens of cycles that no instruction count shows. A struct written field by
field and then copied whole (16-byte moves) is the usual cause.

Reads a memory trace from valgrind's lackey and prints, busiest first, the
instruction address of every load that read bytes of more than one recent
store (or of a recent store and older memory), how often, and one example
(the load's address and size, one of the stores: its instruction, size and
distance in instructions):

    valgrind --tool=lackey --trace-mem=yes --log-file=trace.txt \\
        target/release/examples/empty_callgrind 10 300 serial
    python3 benches/tools/store_forwarding.py trace.txt [window]

`window` is how many instructions back a store still counts as in flight
(150 by default, about what the store buffer holds on current cores).
Valgrind loads a position-independent executable at 0x108000: subtract it
before `addr2line -i -f -C -e <binary> <address>`. The trace is of all
threads interleaved, so read a multi-threaded run's findings with care.
"""

import collections
import sys


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    window = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    instructions = 0
    at = None
    # byte address -> (instruction count, store number, size, store's instruction)
    last_store = {}
    stores = 0
    failed = collections.Counter()
    example = {}
    with open(sys.argv[1]) as trace:
        for line in trace:
            kind = line[:2].strip()
            if kind == "I":
                instructions += 1
                at = int(line[3:].split(",")[0], 16)
                continue
            if kind not in ("S", "L", "M"):
                continue
            address, size = line[3:].split(",")
            address, size = int(address, 16), int(size)
            if kind in ("L", "M"):
                sources = set()
                recent = None
                for byte in range(address, address + size):
                    store = last_store.get(byte)
                    if store and instructions - store[0] <= window:
                        sources.add(store[1])
                        recent = store
                    else:
                        sources.add(None)
                if recent and len(sources) > 1:
                    failed[at] += 1
                    example[at] = (hex(address), size, hex(recent[3]), recent[2],
                                   instructions - recent[0])
            if kind in ("S", "M"):
                stores += 1
                for byte in range(address, address + size):
                    last_store[byte] = (instructions, stores, size, at)
    print("count  load        load address, size; a store: instruction, size, distance")
    for load, count in failed.most_common(40):
        print(f"{count:>6} {load:#x}  {example[load]}")


if __name__ == "__main__":
    main()
