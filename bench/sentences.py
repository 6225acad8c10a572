"""The sentence matcher beside hassil, same templates and sentences, in one run (see
BENCHMARKS.md, "Sentence templates").

    python3 bench/sentences.py --bin target/release/sentences-bench [--rounds 3] [--lang en,ru]

For each language: testenv/hassil_peer.py samples Home Assistant's sentences (2 per template,
seed 1) and hassil's answers; then `sentences-bench` and hassil (`hassil_peer.py bench`) match
every sentence ROUNDS times, one after the other on the same machine; prints sentences/s, p50 and
p99 per matcher and the speed-up. Standard library only; runs testenv/.venv-sentences's python.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = ROOT / "testenv/.venv-sentences/bin/python"
PEER = ROOT / "testenv/hassil_peer.py"


def stats(times):
    times = sorted(times)
    n = len(times)
    return {
        "per_s": n / sum(times),
        "p50_ms": 1000 * times[n // 2],
        "p99_ms": 1000 * times[min(n - 1, int(n * 0.99))],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--lang", default="en,ru")
    a = ap.parse_args()
    if not PY.exists():
        sys.exit("bench: testenv/.venv-sentences is missing; run scripts/install-test-peers.sh")
    print("| language | sentences | matcher | sentences/s | p50 ms | p99 ms | speed-up |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for lang in a.lang.split(","):
        cases = subprocess.run(
            [str(PY), str(PEER), "sample", lang, "2", "1"], check=True, capture_output=True
        ).stdout
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            f.write(cases)
            f.flush()
            n = len(json.loads(cases)["cases"])
            ours = json.loads(
                subprocess.run(
                    [a.bin, f.name, str(a.rounds)], check=True, capture_output=True
                ).stdout
            )
            theirs = json.loads(
                subprocess.run(
                    [str(PY), str(PEER), "bench", lang, str(a.rounds)],
                    input=cases,
                    check=True,
                    capture_output=True,
                ).stdout
            )
        o, t = stats(ours["times"]), stats(theirs["times"])
        up = o["per_s"] / t["per_s"]
        print(f"| {lang} | {n} | sentences | {o['per_s']:.0f} | {o['p50_ms']:.3f} | {o['p99_ms']:.3f} | {up:.1f}× |")
        print(f"| {lang} | {n} | hassil 3.12.1 | {t['per_s']:.0f} | {t['p50_ms']:.3f} | {t['p99_ms']:.3f} | 1× |")


if __name__ == "__main__":
    main()
