"""A/B of workers speaking compare.py's protocol (bench/models/worker.cc, engine.py), interleaved in rotating order
so that the shared machine's load falls on all alike; prints each engine's median process CPU ms per inference and
its ratio to the first. An engine may set environment variables (a switch built for an experiment).

    ab.py ROUNDS PER_ROUND 'NAME::VAR=VALUE,...::COMMAND ARGS' ...

e.g. ab.py 10 5 'kforge::::./worker bundle.kftb' 'ort::::python3 bench/models/engine.py ort MODEL_DIR 1'
"""
import os
import statistics
import subprocess
import sys


def main():
    rounds, per_round = int(sys.argv[1]), int(sys.argv[2])
    engines = []
    for spec in sys.argv[3:]:
        name, assignments, command = spec.split("::")
        env = dict(os.environ)
        for assignment in filter(None, assignments.split(",")):
            key, value = assignment.split("=", 1)
            env[key] = value
        proc = subprocess.Popen(command.split(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                env=env)
        if proc.stdout.readline().strip() != "ready":
            sys.exit(f"{name}: did not start")
        engines.append((name, proc, []))
    for r in range(rounds):
        for name, proc, times in engines[r % len(engines):] + engines[:r % len(engines)]:
            proc.stdin.write(f"time {per_round}\n")
            proc.stdin.flush()
            times += [float(t) for t in proc.stdout.readline().split()]
    first = None
    for name, proc, times in engines:
        median = statistics.median(times)
        first = first or median
        print(f"{name:30s} median {median:8.3f} ms  min {min(times):8.3f}  ratio {median / first:.3f}")
        proc.stdin.write("quit\n")
        proc.stdin.flush()


if __name__ == "__main__":
    main()
