"""Checks that `tfc generate` streams the text its tokens decode to.

usage: check_text.py STREAMED.txt RUN.json PROMPT_IDS.txt DECODED.txt
  STREAMED.txt   what `tfc generate` printed to stdout (prompt + generated text)
  RUN.json       `tfc generate --json` of the same run (generated_ids, text)
  PROMPT_IDS.txt `tfc tokenize --ids-only --no-special` of the prompt
  DECODED.txt    `tfc tokenize --no-special --ids <generated ids>`
"""
import json
import sys


def main():
    streamed = open(sys.argv[1], encoding="utf-8", errors="replace").read()
    run = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])
    prompt_ids = json.loads(open(sys.argv[3]).read())
    decoded = open(sys.argv[4], encoding="utf-8", errors="replace").read()
    ok = True
    if run["prompt_tokens"] != len(prompt_ids):
        print(f"FAIL: prompt_tokens {run['prompt_tokens']}, tokenize says {len(prompt_ids)}")
        ok = False
    if not decoded.rstrip("\n").endswith(run["text"]) and run["text"] not in decoded:
        print(f"FAIL: --json text {run['text']!r} is not the decode {decoded!r}")
        ok = False
    if not streamed.rstrip("\n").endswith(run["text"]):
        print(f"FAIL: streamed {streamed!r} does not end with {run['text']!r}")
        ok = False
    if ok:
        print(f"ok: {len(run['generated_ids'])} tokens streamed as their decoded text")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
