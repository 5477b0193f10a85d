//===- main.cpp - Text generation with a model compiled by `tfc compile` --===//
//
// generate-app [--weights FILE.safetensors | --random [--seed N]]
//              (--tokenizer T --prompt TEXT | --ids 1,2,3)
//              [-n N] [--greedy] [--temperature T] [--top-k K] [--top-p P]
//              [--sample-seed S] [--eos-id ID]
//
// The model class (TFC_MODEL_CLASS from TFC_MODEL_HEADER) comes from `tfc
// compile`; generation (prefill, decode loop, sampler) and the tokenizer come
// from the tfc runtime. Prints the text as tokens arrive (or the ids, without
// a tokenizer), then one line "ids: ..." with the generated ids.
//
//===----------------------------------------------------------------------===//

#include TFC_MODEL_HEADER

#include "runtime/tokenizer/Tokenizer.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using Model = TFC_MODEL_CLASS;
namespace rt = tfc::rt;

namespace {

struct Options {
  std::string weights, tokenizer, prompt, ids;
  bool random = false;
  uint64_t seed = 0;
  int64_t eosId = -1;
  rt::GenerationOptions generation;
};

int usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--weights FILE | --random [--seed N]] "
               "(--tokenizer T --prompt TEXT | --ids 1,2,3) [-n N] [--greedy] "
               "[--temperature T] [--top-k K] [--top-p P] [--sample-seed S] "
               "[--eos-id ID]\n",
               argv0);
  return 2;
}

/// Parses argv; nullopt (after a message) on anything unknown.
std::optional<Options> parse(int argc, char **argv) {
  Options o;
  o.generation.maxNewTokens = 16;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto takes = [&](const char *name) { return a == name && v && ++i; };
    if (a == "--random")
      o.random = true;
    else if (a == "--greedy")
      o.generation.sampler.greedy = true;
    else if (takes("--weights"))
      o.weights = v;
    else if (takes("--seed"))
      o.seed = std::strtoull(v, nullptr, 10);
    else if (takes("--tokenizer"))
      o.tokenizer = v;
    else if (takes("--prompt"))
      o.prompt = v;
    else if (takes("--ids"))
      o.ids = v;
    else if (takes("-n"))
      o.generation.maxNewTokens = std::atoi(v);
    else if (takes("--temperature"))
      o.generation.sampler.temperature = std::strtof(v, nullptr);
    else if (takes("--top-k"))
      o.generation.sampler.topK = std::atoi(v);
    else if (takes("--top-p"))
      o.generation.sampler.topP = std::strtof(v, nullptr);
    else if (takes("--sample-seed"))
      o.generation.sampler.seed = std::strtoull(v, nullptr, 10);
    else if (takes("--eos-id"))
      o.eosId = std::atoll(v);
    else {
      std::fprintf(stderr, "error: unknown or incomplete option '%s'\n",
                   a.c_str());
      return std::nullopt;
    }
  }
  if (o.random == !o.weights.empty() || o.ids.empty() == o.prompt.empty() ||
      (!o.prompt.empty() && o.tokenizer.empty()))
    return std::nullopt;
  return o;
}

std::vector<int32_t> parseIds(const std::string &text) {
  std::vector<int32_t> ids;
  for (const char *p = text.c_str(); *p;) {
    char *end = nullptr;
    ids.push_back(static_cast<int32_t>(std::strtol(p, &end, 10)));
    p = *end ? end + 1 : end;
  }
  return ids;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  std::optional<Options> o = parse(argc, argv);
  if (!o)
    return usage(argv[0]);
  std::optional<rt::tok::Tokenizer> tokenizer;
  if (!o->tokenizer.empty()) {
    rt::Expected<rt::tok::Tokenizer> t = rt::tok::Tokenizer::load(o->tokenizer);
    if (!t)
      return fail(t.message());
    tokenizer = t.take();
    tokenizer->disablePadding();
    tokenizer->disableTruncation();
  }
  std::vector<int32_t> prompt = parseIds(o->ids);
  if (!o->prompt.empty()) {
    rt::Expected<rt::tok::Encoding> e = tokenizer->encode(o->prompt, false);
    if (!e)
      return fail(e.message());
    prompt = e->ids;
  }
  int64_t eos = o->eosId >= 0 ? o->eosId
                : tokenizer && tokenizer->specialIds().eos
                    ? *tokenizer->specialIds().eos
                    : -1;
  if (eos >= 0)
    o->generation.stopIds.push_back(static_cast<int32_t>(eos));

  rt::Expected<Model> model =
      o->random ? Model::randomWeights(o->seed) : Model::load(o->weights);
  if (!model)
    return fail(model.message());
  std::vector<int32_t> generated;
  size_t printed = 0;
  rt::Expected<rt::GenerationResult> result = model->generate(
      prompt, o->generation, [&](int32_t id) {
        generated.push_back(id);
        if (!tokenizer) {
          std::printf("%d ", id);
        } else if (auto text = tokenizer->decode(generated)) {
          // Whole characters only: a trailing partial UTF-8 sequence waits
          // (and is written at the end in any case).
          size_t complete = rt::tok::completeUtf8Prefix(*text);
          if (complete > printed) {
            std::fwrite(text->data() + printed, 1, complete - printed, stdout);
            printed = complete;
          }
        }
        std::fflush(stdout);
        return true;
      });
  if (!result)
    return fail(result.message());
  if (tokenizer)
    if (auto text = tokenizer->decode(generated); text && text->size() > printed)
      std::fwrite(text->data() + printed, 1, text->size() - printed, stdout);
  std::printf("\nids:");
  for (int32_t id : result->generated)
    std::printf(" %d", id);
  std::printf("\nprefill %.1f ms, decode %.1f tokens/s\n", result->prefillMs,
              result->decodeTokensPerSecond());
  return 0;
}
