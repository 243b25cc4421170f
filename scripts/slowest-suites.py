#!/usr/bin/env python3
"""Prints the ten slowest test suites of one or more `swift test` logs, with their time, so that a
CI run says where its minutes went (scripts/test prints it after the suite).

Swift Testing ends each suite with a line such as
    ✔ Suite CommandLineTests passed after 41.209 seconds.
    ✘ Suite "Serve clients" failed after 3.112 seconds with 1 issue.
A suite's time is wall time from its first test's start to its last test's end; suites run side
by side, so the times add up to more than the run.

    python3 scripts/slowest-suites.py LOG [LOG ...] [--top 10]
"""
import argparse
import re
import sys

SUITE_END = re.compile(r'Suite ("(?:[^"\\]|\\.)*"|[A-Za-z0-9_.]+) (passed|failed)\b.*? after ([0-9.]+) seconds')


def suites(lines):
    """(name, seconds, passed) for every suite that ended in these lines."""
    for line in lines:
        m = SUITE_END.search(line)
        if m:
            yield m.group(1).strip('"'), float(m.group(3)), m.group(2) == "passed"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    found = []
    for path in args.logs:
        with open(path, encoding="utf-8", errors="replace") as f:
            found += suites(f)
    if not found:
        print("slowest-suites: no suite's end was found in " + ", ".join(args.logs), file=sys.stderr)
        return 0
    found.sort(key=lambda s: -s[1])
    print(f"test: the {min(args.top, len(found))} slowest of {len(found)} suites (wall time; suites run side by side):")
    for name, seconds, passed in found[:args.top]:
        print(f"  {seconds:8.1f} s  {name}{'' if passed else '  (failed)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
