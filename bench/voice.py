"""`maven listen` from the end of speech to the first audio of the answer, the answer spoken
sentence by sentence as it is made beside the whole answer in one `synthesize`, in one run (see
BENCHMARKS.md, "Voice").

    python3 bench/voice.py --maven target/release/maven [--rounds 7]

Starts wyoming-faster-whisper and wyoming-piper (testenv/run-wyoming-*.sh) on loopback ports
and a Maven daemon in a temporary home; Piper says each utterance once into a WAV. Each round
runs `maven listen --input SAID.wav --output ANSWER.wav`, once sentence by sentence (Piper
2.x streams) and once with `--speak-whole`, in a shuffled order, and reads the timings it
prints (from the end of the speech: the engines' shares — speech to text, text to speech to
its first audio — apart from Maven's: the turn and the rest). Prints one Markdown table of
medians. Standard library only.
"""

import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTENV = ROOT / "testenv"
VOICE_PY = TESTENV / ".venv-voice/bin/python"

UTTERANCES = [
    ("What can you do?", "help"),
    ("What's new in my feeds?", "the digest, no feed yet"),
    ("Book me a flight to Lisbon.", "not understood"),
]

TIMINGS = re.compile(
    r"timings: heard in (?P<heard>[\d.]+) s, answered in [\d.]+ s, "
    r"first audio in (?P<first>[\d.]+) s, whole audio in (?P<whole>[\d.]+) s "
    r"\(from the end of the speech; the engines [\d.]+ s: speech to text (?P<asr>[\d.]+) s, "
    r"text to speech to its first audio (?P<tts>[\d.]+) s; Maven (?P<maven>[\d.]+) s: "
    r"the turn (?P<turn>[\d.]+) s, the rest (?P<rest>[\d.]+) s"
)

SPEAK = r"""
import asyncio, sys, wave
from wyoming.client import AsyncClient
from wyoming.tts import Synthesize
from wyoming.audio import AudioChunk, AudioStop, AudioStart
async def main():
    uri, text, path = sys.argv[1:]
    async with AsyncClient.from_uri(uri) as c:
        await c.write_event(Synthesize(text=text).event())
        pcm, fmt = b"", None
        while True:
            e = await c.read_event()
            if AudioStart.is_type(e.type):
                fmt = AudioStart.from_event(e)
            elif AudioChunk.is_type(e.type):
                pcm += AudioChunk.from_event(e).audio
            elif AudioStop.is_type(e.type):
                break
    with wave.open(path, "wb") as w:
        w.setnchannels(fmt.channels); w.setsampwidth(fmt.width); w.setframerate(fmt.rate)
        w.writeframes(pcm)
asyncio.run(main())
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return False
        except OSError:
            return True


def engine(launcher, port):
    p = subprocess.Popen(
        ["bash", str(TESTENV / launcher), f"tcp://127.0.0.1:{port}"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not listening(port):
        if time.monotonic() > deadline or p.poll() is not None:
            sys.exit(f"bench: {launcher} did not start")
        time.sleep(0.1)
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--maven", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    if not VOICE_PY.exists():
        sys.exit("bench: testenv/.venv-voice is missing; run scripts/install-test-peers.sh")
    maven = str(Path(a.maven).resolve())
    asr, tts = free_port(), free_port()
    procs = [engine("run-wyoming-whisper.sh", asr), engine("run-wyoming-piper.sh", tts)]
    home = Path(tempfile.mkdtemp(prefix="maven-voice-bench"))
    config = home / "config.json"
    config.write_text(
        json.dumps(
            {
                "voice": {
                    "asr": f"tcp://127.0.0.1:{asr}",
                    "tts": f"tcp://127.0.0.1:{tts}",
                    "allow_private": True,
                },
            }
        )
    )
    base = [maven, "--data", str(home / "data"), "--config", str(config)]
    daemon = subprocess.Popen(
        base + ["daemon"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    procs.append(daemon)
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(base + ["status"], capture_output=True).returncode != 0:
            if time.monotonic() > deadline:
                sys.exit("bench: the daemon did not answer status")
            time.sleep(0.2)
        said = {}
        for text, _ in UTTERANCES:
            wav = home / f"said-{len(said)}.wav"
            subprocess.run(
                [str(VOICE_PY), "-c", SPEAK, f"tcp://127.0.0.1:{tts}", text, str(wav)],
                check=True,
            )
            said[text] = wav
        rows = {(t, m): [] for t, _ in UTTERANCES for m in ("sentences", "whole")}
        answers = {}
        failures = {}
        # One warm-up round, not counted (models loaded, caches warm).
        for r in range(a.rounds + 1):
            runs = list(rows)
            random.shuffle(runs)
            for text, mode in runs:
                cmd = base + ["listen", "--input", str(said[text]), "--output", str(home / "a.wav")]
                if mode == "whole":
                    cmd.append("--speak-whole")
                out = subprocess.run(cmd, capture_output=True, text=True)
                m = TIMINGS.search(out.stderr)
                if not m:
                    why = out.stderr.strip().splitlines()[-1:] or ["no output"]
                    failures.setdefault((text, mode), []).append(why[0])
                    continue
                answers[text] = next(
                    (l[7:] for l in out.stdout.splitlines() if l.startswith("maven: ")), ""
                )
                if r > 0:
                    rows[(text, mode)].append({k: float(v) for k, v in m.groupdict().items()})
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait()
    print(f"{a.rounds} rounds; medians in seconds, from the end of the speech\n")
    print(
        "| utterance | answer | spoken | first audio | speech to text | the turn "
        "| text to speech to first audio | Maven's rest | whole audio | first audio, ratio |"
    )
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    notes = []
    for text, what in UTTERANCES:
        med = {}
        for mode in ("whole", "sentences"):
            runs = rows[(text, mode)]
            if runs:
                med[mode] = {k: statistics.median(x[k] for x in runs) for k in runs[0]}
        words = len(answers.get(text, "").split())
        for mode in ("whole", "sentences"):
            spoken = "sentence by sentence, streamed" if mode == "sentences" else "whole (one synthesize)"
            failed = failures.get((text, mode), [])
            if failed:
                notes.append(f"\"{text}\", {spoken}: {len(failed)} of {a.rounds + 1} runs failed: {failed[0]}")
            if mode not in med:
                print(f"| \"{text}\" | {what}, {words} words | {spoken} | failed | | | | | | |")
                continue
            m = med[mode]
            ratio = f"{m['first'] / med['whole']['first']:.2f}" if "whole" in med else "—"
            print(
                f"| \"{text}\" | {what}, {words} words | {spoken} "
                f"| {m['first']:.2f} | {m['asr']:.2f} | {m['turn']:.3f} | {m['tts']:.2f} "
                f"| {m['rest']:.3f} | {m['whole']:.2f} | {ratio} |"
            )
    print()
    for text, _ in UTTERANCES:
        print(f"- \"{text}\" → \"{answers.get(text, '')}\"")
    for n in notes:
        print(f"\n{n}")


if __name__ == "__main__":
    main()
