#!/usr/bin/env python3
"""Writes the tokenizer fixtures under tests/fixtures/tokenizers/ (docs/tokenizers.md).

Run in the project's venv (scripts/setup-python.sh; tokenizers==0.21.0 is pinned in
tools/requirements.txt):

    .venv/bin/python tools/gen_tokenizer_fixtures.py

It
  1. trains a byte-level BPE tokenizer (GPT-2 style, vocab 6000, special token
     <|endoftext|>) on bpe/train.txt and saves it as bpe/tokenizer.json and as
     bpe/vocab.json + bpe/merges.txt;
  2. writes minilm/vocab.txt from the vendored minilm/tokenizer.json (ids in order);
  3. writes corpus.bin: >= 2000 records of raw bytes (some are invalid UTF-8), each
     stored as "<decimal byte count>\\n<bytes>\\n" because records contain newlines;
  4. writes bpe/reference.json and minilm/reference.json: what Hugging Face
     `tokenizers` returns for every record of the corpus (see write_reference).

HF only tokenizes str, so each record is first decoded with
bytes.decode('utf-8', errors='replace'); the C++ tokenizer must do the same replacement.
The output is deterministic (seeded RNG, single-threaded training).
"""

import json
import os
import pathlib
import random
import sys

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "tokenizers"
SEED = 20240601

PHRASES = {
    "accents": [
        "Café crème brûlée à la carte, naïve façade, déjà vu.",
        "Über die Brücke gehen Straßenbahnen; Öl und Ähre.",
        "Tiếng Việt có nhiều dấu: ả, ẫ, ặ, ữ, ỹ.",
        "¿Dónde está el niño? ¡Mañana será otro día!",
        "Crème de la crème — São Paulo, Kraków, Ångström, Øresund, Łódź.",
        "e\u0301 (e + combining acute) vs \u00e9 (precomposed); A\u030a; n\u0303",
        "İstanbul, ıi, ǅ ǈ ǋ, ß, ẞ, ﬁ ﬂ ligatures, Ǆemal.",
    ],
    "cjk": [
        "我爱自然语言处理。今天天气很好！",
        "東京タワーは高いです。ひらがなとカタカナ、漢字。",
        "한국어 문장도 포함합니다. 안녕하세요?",
        "中文，标点：“引号”『括号』【方括号】《书名号》",
        "𠀀𠀁𪚥 (CJK Extension B) 〇 〡 々",
        "全角ＡＢＣ１２３ and half-width ｶﾀｶﾅ",
    ],
    "arabic": ["مرحبا بالعالم، كيف حالك؟ ١٢٣٤٥", "اللغة العربية جميلة جداً."],
    "devanagari": ["नमस्ते दुनिया। हिन्दी भाषा ३४५", "संस्कृतम् क्षत्रिय ज्ञान"],
    "cyrillic": ["Привет, мир! Съешь же ещё этих мягких французских булок.", "Ёжик в тумане — ЁЛКА"],
    "greek": ["Γειά σου Κόσμε! Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.", "ΟΔΥΣΣΕΥΣ ὀδυσσεύς ᾅδης ΣΊΣΥΦΟΣ"],
    "thai": ["สวัสดีชาวโลก ภาษาไทยไม่มีช่องว่างระหว่างคำ", "กรุงเทพมหานคร ๑๒๓"],
    "emoji": [
        "I ❤️ emoji 😀😃😄 🎉🎊",
        "Family: 👨‍👩‍👧‍👦 couple: 👩‍❤️‍👨 flag: 🏳️‍🌈 🇫🇷🇯🇵",
        "Skin tones: 👍🏻 👍🏼 👍🏽 👍🏾 👍🏿 🧑🏽‍💻",
        "keycaps 1️⃣ #️⃣ and ☕ ✨ 🥰 🫠 🪿",
    ],
    "code": [
        "def f(x):\n\treturn x ** 2  # square",
        "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
        "let v: Vec<u8> = s.bytes().collect::<Vec<_>>();",
        "if (a && b || !c) return -1; else x >>= 3;",
        "SELECT name, COUNT(*) FROM users WHERE age >= 21 GROUP BY name;",
        "    indented with spaces\n\t\tand tabs\r\n",
        '{"key": [1, 2.5, -3e10], "nested": {"a": null}}',
    ],
    "urls": [
        "See https://example.com/path/to/page?query=1&b=two#frag for details.",
        "mailto:someone@example.org, ftp://files.example.net/pub/, http://[::1]:8080/",
        "www.example.co.uk/a_b-c~d%20e",
    ],
    "numbers": [
        "3.14159 2.71828 1,000,000 1e-9 0xDEADBEEF 0b1010 42nd 1st",
        "Phone: +1 (555) 123-4567; date 2024-06-01T12:34:56Z",
        "½ ¾ ² ³ Ⅻ ⅷ ① ٣ ३ ๓ ３ 𝟙",
    ],
    "special": [
        "Hello<|endoftext|>world",
        "<|endoftext|> at the start and the end <|endoftext|>",
        "[CLS] literal special tokens [SEP] in text [MASK] [PAD] [UNK]",
        "<|endoftext|><|endoftext|>[SEP][SEP]",
        "not special: <|endoftext| and [cls] and [ SEP ]",
    ],
    # Characters assigned after Unicode 8.0: HF's BERT normalizer and pre-tokenizer use
    # Unicode 8.0 category tables, so these are not punctuation / accents / format there.
    "unicode_age": [
        "q\u2e42r q\u2e43r q\u2e49r q\U0001da87r q\U0001e95er", "e\u08e3x e\u08d4x e\u1ab0x e\u1abfx",
        "a\u2066b a\U000110cdb a\U00013430b a\u0378b a\u180eb", "e\u0c00x e\u0c04x e\u1df5x e\u1df6x",
    ],
    "added_token_flags": [  # for the BPE variant's lstrip / rstrip / normalized tokens
        "see [MASK] here", "a   [MASK]b\t[MASK]", "x<sep>   y <sep>\nz", "Release the release RELEASE",
        "  [MASK]  <sep>  released", "unreleased<sep>[MASK]",
    ],
    "whitespace": [
        "", " ", "  ", "\t", "\n", "\r\n", "a  b   c    d", "\t\ttabs\t\there\t",
        "trailing   ", "   leading", "line1\nline2\n\nline4", "nbsp\u00a0here\u3000ideo\u2028ls\u0085nel",
        "zero\u200bwidth\u200djoiner\ufeffbom", "    \n\n\t  \r\n  end",
    ],
    "control": [
        "bell\x07 null\x00 escape\x1b[31m red", "del\x7f c1\x80\x9f text", "\x01\x02\x03\x04",
        "form\x0cfeed vertical\x0btab", "replacement \ufffd char", "private \ue000\uf8ff use",
    ],
}

RANGES = [  # (lo, hi) code point ranges sampled by random_line
    (0x20, 0x7E), (0xA0, 0x17F), (0x180, 0x24F), (0x300, 0x36F), (0x370, 0x3FF),
    (0x400, 0x4FF), (0x590, 0x5FF), (0x600, 0x6FF), (0x900, 0x97F), (0xE00, 0xE7F),
    (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2190, 0x22FF), (0x3000, 0x30FF),
    (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1D400, 0x1D7FF), (0x1F300, 0x1FAFF),
    (0x20000, 0x2A6DF), (0x0, 0x1F), (0x80, 0x9F), (0xE000, 0xE0FF), (0xFE00, 0xFE0F),
]
WHITESPACE = [" ", "  ", "\t", "\n", "\r", " \t ", "\n\n", "   \n", "\u00a0", "\u3000", "\u2003", "\u200b"]


def invalid_utf8(rng):
    """Byte strings that are not valid UTF-8, alone or inside valid text."""
    bad = [
        b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xc3", b"\xe2\x82", b"\xe0\x80\x80",
        b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5",
        b"\xff", b"\xfe\xff", b"\xf0\x9f\x98", b"\xf0\x9f", b"\xe2\x28\xa1", b"\xc3\x28",
        b"\xa0\xa1", b"\xf8\x88\x80\x80\x80", b"\xe1\x80\xe2\xf0\x91\x92\xf1\xbf\x41",
    ]
    out = []
    for i, b in enumerate(bad):
        out.append(b)
        out.append(b"caf\xc3\xa9 " + b + b" na\xc3\xafve")
        out.append(b"word" + b + b"word " + bad[(i + 3) % len(bad)] + b"!")
    for _ in range(60):
        out.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))))
    for _ in range(40):  # valid text with one byte flipped or cut
        s = bytearray(rng.choice(sum(PHRASES.values(), [])).encode() or b"x")
        pos = rng.randrange(len(s))
        if rng.random() < 0.5:
            s[pos] = rng.randrange(0x80, 0x100)
        else:
            s = s[:pos] + s[pos + 1:]
        out.append(bytes(s))
    return out


def random_char(rng):
    lo, hi = rng.choice(RANGES)
    while True:
        c = rng.randint(lo, hi)
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def random_line(rng, words):
    parts = []
    for _ in range(rng.randrange(1, 14)):
        r = rng.random()
        if r < 0.35:
            parts.append(rng.choice(words))
        elif r < 0.55:
            parts.append("".join(random_char(rng) for _ in range(rng.randrange(1, 8))))
        elif r < 0.7:
            parts.append(rng.choice(WHITESPACE))
        elif r < 0.85:
            parts.append(rng.choice(sum(PHRASES.values(), [])))
        else:
            parts.append(str(rng.randrange(10 ** rng.randrange(1, 12))))
        parts.append(rng.choice([" ", " ", "", "\t", ", ", ". "]))
    return "".join(parts)


def make_corpus():
    rng = random.Random(SEED)
    train_lines = [l for l in (FIX / "bpe" / "train.txt").read_text().splitlines() if l.strip()]
    words = sorted({w for l in train_lines[:3000] for w in l.split()})
    records = []
    for group in PHRASES.values():
        records += [p.encode() for p in group]
    records += [l.encode() for l in rng.sample(train_lines, 600)]
    records += [random_line(rng, words).encode() for _ in range(1200)]
    records += invalid_utf8(rng)
    records.append(("supercalifragilistic" * 6).encode())  # > max_input_chars_per_word
    records.append(" ".join(rng.sample(words, 200)).encode())  # > 128 tokens: truncation
    records.append("\n".join(train_lines[100:140]).encode())
    records.append(("😀" * 60 + " " + "字" * 150).encode())
    with open(FIX / "corpus.bin", "wb") as f:
        for r in records:
            f.write(b"%d\n" % len(r) + r + b"\n")
    return records


def train_bpe():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=6000, min_frequency=2, special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train([str(FIX / "bpe" / "train.txt")], trainer)
    tok.save(str(FIX / "bpe" / "tokenizer.json"), pretty=False)
    tok.model.save(str(FIX / "bpe"))  # vocab.json + merges.txt
    return tok


def write_bert_vocab():
    vocab = json.loads((FIX / "minilm" / "tokenizer.json").read_text())["model"]["vocab"]
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(len(by_id)))
    (FIX / "minilm" / "vocab.txt").write_text("".join(t + "\n" for t, _ in by_id))


def write_reference(tok, records, path, declared=None):
    """One entry per corpus record: ids (and tokens) of encode(text) (add_special_tokens=True,
    no padding or truncation), decode(ids) (skip_special_tokens=True) and, where it differs,
    decode_keep (skip_special_tokens=False). With `declared` (the file's own truncation and
    padding), every 10th record also gets declared_ids (file settings) and no_special_ids
    (add_special_tokens=False, no padding or truncation)."""
    out = []
    for i, raw in enumerate(records):
        text = raw.decode("utf-8", errors="replace")
        enc = tok.encode(text)
        entry = {"ids": enc.ids, "decode": tok.decode(enc.ids)}
        if i % 5 == 0:  # the pieces of every 5th record (they follow from the ids)
            entry["tokens"] = enc.tokens
        keep = tok.decode(enc.ids, skip_special_tokens=False)
        if keep != entry["decode"]:
            entry["decode_keep"] = keep
        if declared is not None and i % 10 == 0:
            entry["declared_ids"] = declared.encode(text).ids
            entry["no_special_ids"] = tok.encode(text, add_special_tokens=False).ids
        out.append(entry)
    doc = {"generator": "tools/gen_tokenizer_fixtures.py",
           "tokenizers_version": sys.modules["tokenizers"].__version__,
           "vocab_size": tok.get_vocab_size(with_added_tokens=True), "records": out}
    path.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n")


# The BPE variant: bpe/tokenizer.json with these top-level sections replaced.
# It exercises what the two real files do not declare: add_prefix_space, a
# BertNormalizer in front of BPE, and added tokens with lstrip, rstrip and
# normalized=true. The C++ test applies the same replacement, read from
# bpe/variant_reference.json.
VARIANT = {
    "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                   "strip_accents": False, "lowercase": True},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                      "use_regex": True},
    "added_tokens": [
        {"id": 0, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True},
        {"id": 6000, "content": "[MASK]", "single_word": False, "lstrip": True,
         "rstrip": False, "normalized": False, "special": True},
        {"id": 6001, "content": "<sep>", "single_word": False, "lstrip": False,
         "rstrip": True, "normalized": False, "special": False},
        {"id": 6002, "content": "release", "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": True, "special": False},
    ],
}


def write_variant_reference(records):
    doc = json.loads((FIX / "bpe" / "tokenizer.json").read_text())
    doc.update(VARIANT)
    tok = Tokenizer.from_str(json.dumps(doc))
    out = []
    for i, raw in enumerate(records):
        if i % 4 != 0 and b"[MASK]" not in raw and b"<sep>" not in raw:
            continue
        text = raw.decode("utf-8", errors="replace")
        ids = tok.encode(text).ids
        out.append({"record": i, "ids": ids, "decode": tok.decode(ids)})
    ref = {"generator": "tools/gen_tokenizer_fixtures.py",
           "tokenizers_version": sys.modules["tokenizers"].__version__,
           "replace_sections": VARIANT,
           "vocab_size": tok.get_vocab_size(with_added_tokens=True), "records": out}
    (FIX / "bpe" / "variant_reference.json").write_text(
        json.dumps(ref, ensure_ascii=False, separators=(",", ":")) + "\n")


def main():
    records = make_corpus()
    bpe = train_bpe()
    write_bert_vocab()
    write_reference(bpe, records, FIX / "bpe" / "reference.json")
    write_variant_reference(records)
    declared = Tokenizer.from_file(str(FIX / "minilm" / "tokenizer.json"))
    bert = Tokenizer.from_file(str(FIX / "minilm" / "tokenizer.json"))
    bert.no_padding()
    bert.no_truncation()
    write_reference(bert, records, FIX / "minilm" / "reference.json", declared)
    print(f"{len(records)} records; bpe vocab {bpe.get_vocab_size()}; "
          f"bert vocab {bert.get_vocab_size()}")


if __name__ == "__main__":
    main()
