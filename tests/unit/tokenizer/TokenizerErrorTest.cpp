//===- TokenizerErrorTest.cpp - Malformed and unsupported tokenizer files -===//
//
// Each case writes a broken file and checks that loading fails with a message
// naming the file and the field.
//
//===----------------------------------------------------------------------===//

#include "TokenizerFixture.h"

#include "runtime/tokenizer/Tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

using namespace tfc::rt::tok;
using namespace tfc::rt::tok::test;
using nlohmann::json;
using tfc::rt::Expected;

namespace {

/// A small valid byte-level BPE tokenizer.json.
json tinyBpe() {
  json doc = json::parse(R"({
    "version": "1.0", "truncation": null, "padding": null,
    "added_tokens": [{"id": 0, "content": "<|endoftext|>", "single_word": false,
      "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false,
                      "trim_offsets": true, "use_regex": true},
    "post_processor": null,
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "dropout": null, "unk_token": null,
      "vocab": {"<|endoftext|>": 0, "a": 1, "b": 2, "ab": 3, "Ġ": 4, "Ġab": 5},
      "merges": [["a", "b"], ["Ġ", "ab"]]}
  })",
                         nullptr, false);
  EXPECT_FALSE(doc.is_discarded());
  return doc;
}

class TokenizerErrors : public ::testing::Test {
protected:
  /// A file name in the test's temporary folder, removed after the test.
  std::string path(const std::string &name) {
    std::string dir = ::testing::TempDir();
    if (!dir.empty() && dir.back() != '/')
      dir += '/';
    files.push_back(dir + "tfc-tok-" + std::to_string(getpid()) + "-" + name);
    return files.back();
  }
  void TearDown() override {
    for (const std::string &file : files)
      std::remove(file.c_str());
  }
  std::vector<std::string> files;

  /// Loads `doc` written as <name>.json; the error message.
  std::string jsonError(const json &doc, const std::string &name) {
    return textError(doc.dump(), name);
  }
  std::string textError(const std::string &text, const std::string &name) {
    std::string file = path(name + ".json");
    writeFile(file, text);
    Expected<Tokenizer> tok = Tokenizer::fromFile(file);
    EXPECT_FALSE(tok.ok()) << name << " loaded";
    EXPECT_NE(tok.message().find(file), std::string::npos) << tok.message();
    return tok.message();
  }
};

#define EXPECT_HAS(message, part)                                              \
  EXPECT_NE((message).find(part), std::string::npos) << (message)

TEST_F(TokenizerErrors, TinyFileLoadsAndEncodes) {
  std::string file = path("tiny.json");
  writeFile(file, tinyBpe().dump());
  Expected<Tokenizer> tok = Tokenizer::fromFile(file);
  ASSERT_TRUE(tok.ok()) << tok.message();
  Expected<Encoding> enc = tok->encode("ab ab<|endoftext|>");
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(enc->ids, (std::vector<int32_t>{3, 5, 0}));
  EXPECT_EQ(enc->tokens,
            (std::vector<std::string>{"ab", "Ġab", "<|endoftext|>"}));
  EXPECT_EQ(*tok->decode(enc->ids), "ab ab");
  Expected<std::string> bad = tok->decode({1, 99});
  ASSERT_FALSE(bad.ok());
  EXPECT_HAS(bad.message(), "id 99 is not in the vocabulary");
}

TEST_F(TokenizerErrors, BadJson) {
  EXPECT_HAS(textError("{\"model\": ", "truncated"), "not valid JSON");
  EXPECT_HAS(textError("[1, 2]", "array"),
             "expected a JSON object, found array");
}

TEST_F(TokenizerErrors, Model) {
  json doc = tinyBpe();
  doc.erase("model");
  EXPECT_HAS(jsonError(doc, "no-model"), "field 'model': missing");
  doc = tinyBpe();
  doc["model"].erase("vocab");
  EXPECT_HAS(jsonError(doc, "no-vocab"), "field 'model.vocab': missing");
  doc = tinyBpe();
  doc["model"]["vocab"] = json::array({"a", "b"});
  EXPECT_HAS(jsonError(doc, "vocab-array"),
             "field 'model.vocab': expected an object, found array");
  doc = tinyBpe();
  doc["model"]["vocab"]["c"] = "seven";
  EXPECT_HAS(
      jsonError(doc, "vocab-string-id"),
      "field 'model.vocab': token 'c': expected an integer id, found string");
  doc = tinyBpe();
  doc["model"]["vocab"]["c"] = -3;
  EXPECT_HAS(jsonError(doc, "vocab-negative"),
             "field 'model.vocab': token 'c' has id -3");
  doc = tinyBpe();
  doc["model"]["vocab"]["c"] = 1;
  EXPECT_HAS(jsonError(doc, "vocab-duplicate-id"),
             "field 'model.vocab': id 1 is given to both");
  doc = tinyBpe();
  doc["model"]["type"] = "Unigram";
  EXPECT_HAS(jsonError(doc, "unigram"),
             "field 'model.type': unsupported model 'Unigram'");
}

TEST_F(TokenizerErrors, Merges) {
  json doc = tinyBpe();
  doc["model"]["merges"].push_back(json::array({"a", "zz"}));
  EXPECT_HAS(jsonError(doc, "merge-unknown"),
             "field 'model.merges[2]': merge 'a zz': token 'zz' is not in the "
             "vocabulary");
  doc = tinyBpe();
  doc["model"]["merges"].push_back(json::array({"b", "b"}));
  EXPECT_HAS(jsonError(doc, "merge-result-unknown"),
             "field 'model.merges[2]': merge 'b b': token 'bb' is not in the "
             "vocabulary");
  doc = tinyBpe();
  doc["model"]["merges"] = json::array({"a b", "a b c"});
  EXPECT_HAS(jsonError(doc, "merge-three"),
             "field 'model.merges[1]': expected two tokens");
  doc = tinyBpe();
  doc["model"]["merges"] = json::array({7});
  EXPECT_HAS(jsonError(doc, "merge-number"),
             "field 'model.merges[0]': expected");
  doc = tinyBpe();
  doc["model"]["merges"] = "a b";
  EXPECT_HAS(jsonError(doc, "merges-string"),
             "field 'model.merges': expected an array, found string");
}

TEST_F(TokenizerErrors, UnsupportedOptions) {
  json doc = tinyBpe();
  doc["model"]["dropout"] = 0.1;
  EXPECT_HAS(jsonError(doc, "dropout"),
             "field 'model.dropout': unsupported value 0.1");
  doc = tinyBpe();
  doc["model"]["byte_fallback"] = true;
  EXPECT_HAS(jsonError(doc, "byte-fallback"),
             "field 'model.byte_fallback': unsupported value true");
  doc = tinyBpe();
  doc["model"]["unk_token"] = "<unk>";
  EXPECT_HAS(jsonError(doc, "unk"),
             "field 'model.unk_token': '<unk>' is not in model.vocab");
  doc = tinyBpe();
  doc["normalizer"] = {{"type", "Precompiled"},
                       {"precompiled_charsmap", "AAAA"}};
  EXPECT_HAS(jsonError(doc, "precompiled"),
             "field 'normalizer.type': unsupported normalizer 'Precompiled'");
  doc = tinyBpe();
  doc["pre_tokenizer"] = {{"type", "Metaspace"}};
  EXPECT_HAS(
      jsonError(doc, "metaspace"),
      "field 'pre_tokenizer.type': unsupported pre-tokenizer 'Metaspace'");
  doc = tinyBpe();
  doc["pre_tokenizer"]["use_regex"] = "yes";
  EXPECT_HAS(
      jsonError(doc, "use-regex"),
      "field 'pre_tokenizer.use_regex': expected a boolean, found string");
  doc = tinyBpe();
  doc["post_processor"] = {{"type", "RobertaProcessing"}};
  EXPECT_HAS(jsonError(doc, "roberta"),
             "field 'post_processor.type': unsupported post-processor "
             "'RobertaProcessing'");
  doc = tinyBpe();
  doc["decoder"] = {{"type", "Metaspace"}};
  EXPECT_HAS(jsonError(doc, "decoder"),
             "field 'decoder.type': unsupported decoder 'Metaspace'");
  doc = tinyBpe();
  doc["decoder"] = {{"kind", "ByteLevel"}};
  EXPECT_HAS(jsonError(doc, "decoder-no-type"),
             "field 'decoder.type': missing");
}

TEST_F(TokenizerErrors, AddedTokensTruncationPadding) {
  json doc = tinyBpe();
  doc["added_tokens"][0]["content"] = 5;
  EXPECT_HAS(
      jsonError(doc, "added-content"),
      "field 'added_tokens[0].content': expected a string, found number");
  doc = tinyBpe();
  doc["added_tokens"][0]["single_word"] = true;
  EXPECT_HAS(jsonError(doc, "single-word"),
             "field 'added_tokens[0].single_word': unsupported value true");
  doc = tinyBpe();
  doc["added_tokens"] = json::array({json::object({{"id", 0}})});
  EXPECT_HAS(jsonError(doc, "added-no-content"),
             "field 'added_tokens[0].content': missing or empty");
  doc = tinyBpe();
  doc["truncation"] = {{"max_length", "128"}};
  EXPECT_HAS(jsonError(doc, "truncation"),
             "field 'truncation.max_length': expected a non-negative integer");
  doc = tinyBpe();
  doc["truncation"] = {{"max_length", 8}, {"strategy", "OnlySecond"}};
  EXPECT_HAS(jsonError(doc, "truncation-strategy"),
             "field 'truncation.strategy': unsupported strategy 'OnlySecond'");
  doc = tinyBpe();
  doc["padding"] = {{"strategy", "Longest"}};
  EXPECT_HAS(jsonError(doc, "padding"), "field 'padding.strategy': expected");
  doc = tinyBpe();
  doc["padding"] = {{"strategy", {{"Fixed", 99999999999}}}};
  EXPECT_HAS(
      jsonError(doc, "padding-huge"),
      "field 'padding.strategy.Fixed': 99999999999 is more than 1048576");
}

TEST_F(TokenizerErrors, Gpt2AndBertFiles) {
  std::string vocab = path("vocab.json"), merges = path("merges.txt");
  writeFile(vocab, R"({"a": 0, "b": 1, "ab": 2})");
  writeFile(merges, "#version: 0.2\na b\nb a\n");
  Expected<Tokenizer> tok = Tokenizer::fromGpt2Files(vocab, merges);
  ASSERT_FALSE(tok.ok());
  EXPECT_HAS(tok.message(),
             merges +
                 ": line 3: merge 'b a': token 'ba' is not in the vocabulary");
  writeFile(merges, "a b c\n");
  tok = Tokenizer::fromGpt2Files(vocab, merges);
  EXPECT_HAS(tok.message(), merges + ": line 1: expected two tokens");
  writeFile(vocab, R"({"a": "zero"})");
  tok = Tokenizer::fromGpt2Files(vocab, merges);
  EXPECT_HAS(tok.message(),
             vocab + ": field 'a': expected an integer id, found string");
  writeFile(vocab, "{\"a\": ");
  tok = Tokenizer::fromGpt2Files(vocab, merges);
  EXPECT_HAS(tok.message(), vocab + ": not valid JSON");

  std::string bert = path("vocab.txt");
  writeFile(bert, "[PAD]\n[CLS]\n[SEP]\nhello\n");
  tok = Tokenizer::fromBertVocab(bert);
  EXPECT_HAS(tok.message(), bert + ": no '[UNK]' token");
  writeFile(bert, "[UNK]\n[CLS]\n[SEP]\nhello\nhello\n");
  tok = Tokenizer::fromBertVocab(bert);
  EXPECT_HAS(tok.message(), bert + ": line 5: token 'hello' appears twice");

  tok = Tokenizer::fromFile(path("does-not-exist.json"));
  EXPECT_HAS(tok.message(), path("does-not-exist.json"));
}

// Thousands of damaged variants of a file that uses every supported
// section: each either loads (and then encodes and decodes without crashing)
// or fails with a message that starts with the file name. The library is
// built without exceptions, so an unchecked nlohmann-json access would abort
// here.
TEST(TokenizerMutations, DamagedFilesFailCleanly) {
  json doc = tinyBpe();
  doc["normalizer"] = {{"type", "BertNormalizer"}, {"lowercase", true}};
  doc["truncation"] = {{"max_length", 6}, {"direction", "Left"}};
  doc["padding"] = {{"strategy", {{"Fixed", 8}}}, {"pad_id", 0}};
  doc["post_processor"] = json::parse(
      R"({"type": "TemplateProcessing", "single": [{"SpecialToken": {"id":
      "<|endoftext|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [0],
      "tokens": ["<|endoftext|>"]}}})",
      nullptr, false);
  doc["added_tokens"].push_back({{"id", 6},
                                 {"content", "AB"},
                                 {"lstrip", true},
                                 {"rstrip", true},
                                 {"normalized", true}});
  std::string base = doc.dump();
  ASSERT_TRUE(Tokenizer::fromJson(base, "m.json").ok());
  const char *values[] = {"null", "-1",   "\"x\"", "[]",          "{}",
                          "true", "1e30", "0",     "99999999999", "[[]]"};
  std::mt19937 rng(7);
  size_t loaded = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = base;
    size_t pos = rng() % text.size();
    if (i % 3 == 0) {
      text.resize(pos);
    } else if (i % 3 == 1) {
      text[pos] = "{}[]\":,0a "[rng() % 11];
    } else {
      size_t colon = text.find(':', pos);
      size_t end = text.find_first_of(",}]", colon == text.npos ? 0 : colon);
      if (colon == text.npos || end == text.npos)
        continue;
      text = text.substr(0, colon + 1) + values[rng() % 10] + text.substr(end);
    }
    Expected<Tokenizer> tok = Tokenizer::fromJson(text, "m.json");
    if (!tok.ok()) {
      EXPECT_EQ(tok.message().rfind("m.json: ", 0), 0u) << tok.message();
      continue;
    }
    ++loaded;
    Expected<Encoding> enc = tok->encode("ab AB ab\xff <|endoftext|>");
    if (enc.ok())
      (void)tok->decode(enc->ids);
  }
  EXPECT_GT(loaded, 100u);
}

} // namespace
