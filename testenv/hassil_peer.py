"""hassil 3.12.1 on Home Assistant's own sentence data, for the `sentences` crate's differential
test and benchmark (testenv/.venv-sentences, scripts/install-test-peers.sh).

    python hassil_peer.py sample LANG [PER_TEMPLATE] [SEED]

prints one JSON object: the data file's path, the lists Home Assistant fills at run time (given
to both matchers), and the cases: sentences sampled from every template of every intent with
hassil's own sampler (`hassil.sample.sample_sentence`, the first 300 expansions of a template,
PER_TEMPLATE of them (default 2) picked with `random.Random(SEED)` (default 1), Python's hash
seed also SEED, so that a SEED always gives the same sample), each with
hassil's `recognize_best` answer: the intent and its slots, or null. Wildcard lists are sampled
with fixed words so that templates with wildcards are tried too.

    python hassil_peer.py bench LANG ROUNDS < cases.json

matches every case's sentence ROUNDS times and prints the per-sentence times in seconds.
"""

import itertools
import json
import os
import random
import sys
import time

import home_assistant_intents
from hassil import Intents, recognize_best
from hassil.expression import Group, ListReference, RuleReference
from hassil.intents import TextSlotList, WildcardSlotList
from hassil.sample import sample_sentence

# Lists Home Assistant fills from the house at run time, and words for wildcards.
RUNTIME = {
    "en": {
        "area": ["kitchen", "living room"],
        "name": ["ceiling light", "front door"],
        "floor": ["first floor"],
        "zone": ["home"],
        "wildcard": ["milk", "call mom"],
    },
    "ru": {
        "area": ["кухня", "гостиная"],
        "name": ["лампа", "входная дверь"],
        "floor": ["первый этаж"],
        "zone": ["дом"],
        "wildcard": ["молоко", "позвонить маме"],
    },
}


def data_path(lang):
    return os.path.join(os.path.dirname(home_assistant_intents.__file__), "data", f"{lang}.json")


def referenced_lists(expr, rules, seen_rules, out):
    if isinstance(expr, ListReference):
        out.add(expr.list_name)
    elif isinstance(expr, Group):
        for item in expr.items:
            referenced_lists(item, rules, seen_rules, out)
    elif isinstance(expr, RuleReference):
        if expr.rule_name in rules and expr.rule_name not in seen_rules:
            seen_rules.add(expr.rule_name)
            referenced_lists(rules[expr.rule_name].expression, rules, seen_rules, out)


def load(lang):
    with open(data_path(lang), encoding="utf-8") as f:
        data = json.load(f)
    intents = Intents.from_dict(data)
    names = set()
    for intent in intents.intents.values():
        for block in intent.data:
            rules = {**intents.expansion_rules, **block.expansion_rules}
            for s in block.sentences:
                referenced_lists(s.expression, rules, set(), names)
    runtime = RUNTIME[lang]
    fill = {}
    for name in sorted(names):
        if name in intents.slot_lists:
            continue
        if ".." in name:
            continue
        fill[name] = runtime.get(name, runtime["area"])
    return data, intents, fill


def sample(lang, per_template, seed):
    data, intents, fill = load(lang)
    slot_lists = {k: TextSlotList.from_strings(v, name=k) for k, v in fill.items()}
    sampling_lists = dict(slot_lists)
    for name, sl in intents.slot_lists.items():
        if isinstance(sl, WildcardSlotList):
            sampling_lists[name] = TextSlotList.from_strings(RUNTIME[lang]["wildcard"], name=name)
    rng = random.Random(seed)
    cases = []
    for intent in intents.intents.values():
        for block in intent.data:
            rules = {**intents.expansion_rules, **block.expansion_rules}
            lists = {**intents.slot_lists, **sampling_lists, **block.slot_lists}
            for s in block.sentences:
                texts = list(
                    itertools.islice(sample_sentence(s, lists, rules, language=lang), 300)
                )
                for text in rng.sample(texts, min(per_template, len(texts))):
                    text = text.strip()
                    r = recognize_best(text, intents, slot_lists=slot_lists, language=lang)
                    if r is None:
                        cases.append({"text": text, "intent": None, "slots": {}})
                    else:
                        cases.append(
                            {
                                "text": text,
                                "intent": r.intent.name,
                                "slots": {k: e.value for k, e in r.entities.items()},
                            }
                        )
    json.dump(
        {"data": data_path(lang), "lists": fill, "cases": cases},
        sys.stdout,
        ensure_ascii=False,
    )


def bench(lang, rounds):
    _, intents, fill = load(lang)
    slot_lists = {k: TextSlotList.from_strings(v, name=k) for k, v in fill.items()}
    cases = json.load(sys.stdin)["cases"]
    times = []
    for _ in range(rounds):
        for c in cases:
            t0 = time.perf_counter()
            recognize_best(c["text"], intents, slot_lists=slot_lists, language=lang)
            times.append(time.perf_counter() - t0)
    json.dump({"times": times}, sys.stdout)


def main():
    mode, lang = sys.argv[1], sys.argv[2]
    if mode == "sample":
        per = int(sys.argv[3]) if len(sys.argv) > 3 else 2
        seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
        # hassil's sampler walks sets, whose order follows Python's string hashing: the same
        # SEED gives the same sample only under the same hash seed.
        if os.environ.get("PYTHONHASHSEED") != str(seed):
            env = {**os.environ, "PYTHONHASHSEED": str(seed)}
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
        sample(lang, per, seed)
    elif mode == "bench":
        bench(lang, int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    else:
        sys.exit(f"hassil_peer: unknown mode {mode}")


if __name__ == "__main__":
    main()
