//===- TokenizerCorpusTest.cpp - Equality with Hugging Face tokenizers ----===//
//
// Every record of tests/fixtures/tokenizers/corpus.bin is encoded and decoded
// with each tokenizer and compared with what Hugging Face `tokenizers` 0.21.0
// returned for it (reference.json, written by tools/gen_tokenizer_fixtures.py
// and committed, so no Python is needed here).
//
//===----------------------------------------------------------------------===//

#include "TokenizerFixture.h"

#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/Unicode.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace tfc::rt::tok;
using namespace tfc::rt::tok::test;
using nlohmann::json;
using tfc::rt::Expected;

namespace {

/// corpus.bin: records "<byte count>\n<bytes>\n".
std::vector<std::string> readCorpus() {
  std::string data = readFile(fixturePath("corpus.bin"));
  std::vector<std::string> records;
  size_t pos = 0;
  while (pos < data.size()) {
    size_t newline = data.find('\n', pos);
    if (newline == std::string::npos)
      break;
    size_t length = std::stoul(data.substr(pos, newline - pos));
    records.push_back(data.substr(newline + 1, length));
    pos = newline + 1 + length + 1;
  }
  return records;
}

json readReference(const std::string &name) {
  std::string text = readFile(fixturePath(name));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(doc.is_discarded()) << name;
  return doc;
}

std::vector<int32_t> idsOf(const json &array) {
  return array.get<std::vector<int32_t>>();
}

std::string show(const std::vector<int32_t> &ids) {
  std::string out;
  for (int32_t id : ids)
    out += std::to_string(id) + " ";
  return out;
}

/// Counts the records where `tok` disagrees with the reference; prints the
/// first few.
class CorpusCheck {
public:
  CorpusCheck(const Tokenizer &tok, const std::string &label)
      : tok(tok), label(label) {}

  void record(size_t i, const std::string &what, bool same,
              const std::string &detail) {
    ++checks;
    if (same)
      return;
    ++failures;
    if (failures <= 8)
      ADD_FAILURE() << label << ": record " << i << ": " << what << ": "
                    << detail;
  }

  void ids(size_t i, const std::string &text, const json &expected,
           bool addSpecial = true) {
    Expected<Encoding> enc = tok.encode(text, addSpecial);
    ASSERT_TRUE(enc.ok()) << enc.message();
    std::vector<int32_t> want = idsOf(expected);
    record(i, addSpecial ? "ids" : "ids without special tokens",
           enc->ids == want, "got " + show(enc->ids) + "\nwant " + show(want));
  }

  void entry(size_t i, const std::string &text, const json &ref) {
    Expected<Encoding> enc = tok.encode(text);
    ASSERT_TRUE(enc.ok()) << enc.message();
    std::vector<int32_t> want = idsOf(ref["ids"]);
    record(i, "ids", enc->ids == want,
           "got " + show(enc->ids) + "\nwant " + show(want));
    if (ref.contains("tokens"))
      record(i, "tokens",
             enc->tokens == ref["tokens"].get<std::vector<std::string>>(),
             "differ");
    Expected<std::string> decoded = tok.decode(want);
    ASSERT_TRUE(decoded.ok()) << decoded.message();
    std::string wantText = ref["decode"].get<std::string>();
    record(i, "decode", *decoded == wantText,
           "got '" + *decoded + "' want '" + wantText + "'");
    Expected<std::string> kept = tok.decode(want, /*skipSpecialTokens=*/false);
    ASSERT_TRUE(kept.ok()) << kept.message();
    std::string wantKept = ref.value("decode_keep", wantText);
    record(i, "decode keeping special tokens", *kept == wantKept,
           "got '" + *kept + "' want '" + wantKept + "'");
  }

  size_t checks = 0;
  size_t failures = 0;

private:
  const Tokenizer &tok;
  std::string label;
};

void checkCorpus(const Tokenizer &tok, const std::string &label,
                 const json &reference) {
  std::vector<std::string> corpus = readCorpus();
  const json &records = reference["records"];
  ASSERT_EQ(corpus.size(), records.size());
  ASSERT_GE(corpus.size(), 2000u);
  EXPECT_EQ(tok.vocabSize(), reference["vocab_size"].get<size_t>());
  CorpusCheck check(tok, label);
  for (size_t i = 0; i < corpus.size(); ++i)
    check.entry(i, corpus[i], records[i]);
  EXPECT_EQ(check.failures, 0u) << label << ": " << check.failures << " of "
                                << check.checks << " checks differ";
  EXPECT_EQ(check.checks, 3 * corpus.size() + (corpus.size() + 4) / 5);
}

Tokenizer loadOrDie(Expected<Tokenizer> tok) {
  EXPECT_TRUE(tok.ok()) << tok.message();
  return std::move(tok).take();
}

Tokenizer miniLm() {
  Tokenizer tok =
      loadOrDie(Tokenizer::fromFile(fixturePath("minilm/tokenizer.json")));
  tok.disablePadding();
  tok.disableTruncation();
  return tok;
}

TEST(TokenizerCorpus, ByteLevelBpeJson) {
  Expected<Tokenizer> tok =
      Tokenizer::fromFile(fixturePath("bpe/tokenizer.json"));
  ASSERT_TRUE(tok.ok()) << tok.message();
  EXPECT_EQ(tok->vocabSize(), 6000u);
  checkCorpus(*tok, "bpe/tokenizer.json", readReference("bpe/reference.json"));
}

TEST(TokenizerCorpus, ByteLevelBpeGpt2Files) {
  Expected<Tokenizer> tok = Tokenizer::fromGpt2Files(
      fixturePath("bpe/vocab.json"), fixturePath("bpe/merges.txt"));
  ASSERT_TRUE(tok.ok()) << tok.message();
  checkCorpus(*tok, "bpe/vocab.json + merges.txt",
              readReference("bpe/reference.json"));
}

TEST(TokenizerCorpus, WordPieceJson) {
  Tokenizer tok = miniLm();
  EXPECT_EQ(tok.vocabSize(), 30522u);
  checkCorpus(tok, "minilm/tokenizer.json",
              readReference("minilm/reference.json"));
}

TEST(TokenizerCorpus, WordPieceBertVocab) {
  Expected<Tokenizer> tok =
      Tokenizer::fromBertVocab(fixturePath("minilm/vocab.txt"));
  ASSERT_TRUE(tok.ok()) << tok.message();
  checkCorpus(*tok, "minilm/vocab.txt", readReference("minilm/reference.json"));
}

// The file's own truncation (128) and padding (fixed 128), and encoding
// without special tokens, on every 10th record.
TEST(TokenizerCorpus, WordPieceDeclaredTruncationPaddingAndNoSpecial) {
  Tokenizer declared =
      loadOrDie(Tokenizer::fromFile(fixturePath("minilm/tokenizer.json")));
  EXPECT_TRUE(declared.hasPadding());
  EXPECT_TRUE(declared.hasTruncation());
  Tokenizer plain = miniLm();
  json reference = readReference("minilm/reference.json");
  std::vector<std::string> corpus = readCorpus();
  CorpusCheck withFile(declared, "declared"), noSpecial(plain, "no special");
  size_t truncated = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const json &ref = reference["records"][i];
    if (!ref.contains("declared_ids"))
      continue;
    withFile.ids(i, corpus[i], ref["declared_ids"]);
    noSpecial.ids(i, corpus[i], ref["no_special_ids"], false);
    truncated += ref["ids"].size() > 128;
  }
  EXPECT_GE(withFile.checks, 200u);
  EXPECT_GT(truncated, 0u) << "the sample should include truncated records";
  EXPECT_EQ(withFile.failures + noSpecial.failures, 0u);
}

// Python's bytes.decode('utf-8', errors='replace'), as seen through the
// lossless byte-level BPE: decode(encode(x)) keeping special tokens.
TEST(TokenizerCorpus, InvalidUtf8IsReplacedLikePython) {
  json reference = readReference("bpe/reference.json");
  std::vector<std::string> corpus = readCorpus();
  size_t invalid = 0, failures = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const json &ref = reference["records"][i];
    std::string python =
        ref.value("decode_keep", ref["decode"].get<std::string>());
    std::string ours = sanitizeUtf8(corpus[i]);
    invalid += ours != corpus[i];
    if (ours != python && ++failures <= 5)
      ADD_FAILURE() << "record " << i;
  }
  EXPECT_GE(invalid, 150u);
  EXPECT_EQ(failures, 0u);
}

// bpe/tokenizer.json with the sections of variant_reference.json replaced:
// add_prefix_space, a BertNormalizer before BPE, and added tokens with lstrip,
// rstrip and normalized=true (which the two real files do not use).
TEST(TokenizerCorpus, ByteLevelBpeVariant) {
  json reference = readReference("bpe/variant_reference.json");
  json doc = json::parse(readFile(fixturePath("bpe/tokenizer.json")), nullptr,
                         /*allow_exceptions=*/false);
  ASSERT_FALSE(doc.is_discarded());
  for (const auto &[section, value] : reference["replace_sections"].items())
    doc[section] = value;
  Tokenizer tok = loadOrDie(Tokenizer::fromJson(doc.dump(), "variant.json"));
  EXPECT_EQ(tok.vocabSize(), reference["vocab_size"].get<size_t>());
  std::vector<std::string> corpus = readCorpus();
  CorpusCheck check(tok, "variant");
  size_t withAdded = 0;
  for (const json &ref : reference["records"]) {
    size_t i = ref["record"].get<size_t>();
    ASSERT_LT(i, corpus.size());
    check.ids(i, corpus[i], ref["ids"]);
    Expected<std::string> decoded = tok.decode(idsOf(ref["ids"]));
    ASSERT_TRUE(decoded.ok()) << decoded.message();
    check.record(i, "decode", *decoded == ref["decode"].get<std::string>(),
                 "got '" + *decoded + "'");
    for (int32_t id : idsOf(ref["ids"]))
      withAdded += id >= 6000;
  }
  EXPECT_GE(check.checks, 1000u);
  EXPECT_GE(withAdded, 10u) << "the sample should use the added tokens";
  EXPECT_EQ(check.failures, 0u);
}

TEST(TokenizerCorpus, SpecialIds) {
  Tokenizer bert =
      loadOrDie(Tokenizer::fromFile(fixturePath("minilm/tokenizer.json")));
  EXPECT_EQ(bert.specialIds().cls, 101);
  EXPECT_EQ(bert.specialIds().sep, 102);
  EXPECT_EQ(bert.specialIds().pad, 0);
  EXPECT_EQ(bert.specialIds().unk, 100);
  EXPECT_EQ(bert.specialIds().mask, 103);
  EXPECT_EQ(bert.tokenToId("[CLS]"), 101);
  EXPECT_EQ(bert.idToToken(2023), "this");
  EXPECT_TRUE(bert.isSpecial(102));
  EXPECT_FALSE(bert.isSpecial(2023));
  Tokenizer bpe =
      loadOrDie(Tokenizer::fromFile(fixturePath("bpe/tokenizer.json")));
  EXPECT_EQ(bpe.specialIds().eos, 0);
  EXPECT_EQ(bpe.specialIds().bos, 0);
  EXPECT_FALSE(bpe.specialIds().cls.has_value());
}

TEST(TokenizerCorpus, LoadPicksByName) {
  Tokenizer dirBpe = loadOrDie(Tokenizer::load(fixturePath("bpe")));
  Tokenizer gpt2 = loadOrDie(Tokenizer::load(fixturePath("bpe/vocab.json")));
  Tokenizer bert = loadOrDie(Tokenizer::load(fixturePath("minilm/vocab.txt")));
  std::string text = "Hello world, tokenizers!";
  EXPECT_EQ(dirBpe.encode(text)->ids, gpt2.encode(text)->ids);
  EXPECT_EQ(bert.encode(text)->ids, miniLm().encode(text)->ids);
}

} // namespace
