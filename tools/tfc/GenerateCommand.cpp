//===- GenerateCommand.cpp - tfc generate: text from a prompt -------------===//
//
// Decoder-only models: tokenize the prompt, check it against the model's
// context before compiling anything, compile the prefill and decode entries
// (from the kernel cache when it has them), then run the generation loop of
// runtime/Generator.h, streaming text as tokens arrive. Timings go to stderr
// at the end; --json prints one object instead.
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/CompileReport.h"
#include "tools/tfc/Inputs.h"
#include "tools/tfc/ModelRunner.h"
#include "tools/tfc/TextOutput.h"

#include "runtime/Generator.h"
#include "runtime/Seq2Seq.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct GenerateOptions {
  ModelOptions model;
  CacheOptions cache;
  WeightOptions weights;
  PromptOptions prompt;
  rt::GenerationOptions generation;
  std::vector<std::string> stop;
  int64_t eosId = -1;
  bool ignoreEos = false;
  bool truncate = false;
  bool json = false;
  // Encoder-decoder models.
  std::string srcIds;
  rt::Seq2SeqOptions seq2seq;
  std::string earlyStopping = "heuristic";
};

/// The prompt, cut to fit the context (--truncate-prompt) or refused.
rt::Expected<std::vector<int32_t>> fitPrompt(std::vector<int32_t> prompt,
                                             int64_t context,
                                             const GenerateOptions &options,
                                             const rt::Plan &plan) {
  int64_t room = context - options.generation.maxNewTokens;
  rt::Status fits =
      rt::checkGenerationLength(plan, prompt.size(), options.generation);
  if (fits.ok())
    return prompt;
  if (!options.truncate || room < 1)
    return rt::Status::error(fits.message() +
                             " (use a shorter prompt, a smaller -n, or "
                             "--truncate-prompt to keep the prompt's last "
                             "tokens)");
  prompt.erase(prompt.begin(), prompt.end() - room);
  return prompt;
}

/// Plans the model and checks the prompt against it; compiles nothing.
std::optional<CompiledModel> planFor(const GenerateOptions &options,
                                     std::vector<int32_t> &prompt,
                                     session::CompileOptions &compile) {
  compile = compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return std::nullopt;
  compile.entries = {options.generation.prefillEntry,
                     options.generation.decodeEntry};
  rt::Expected<int64_t> context =
      rt::contextLength(model->plan(), options.generation);
  rt::Expected<std::vector<int32_t>> fitted =
      context ? fitPrompt(prompt, *context, options, model->plan())
              : rt::Expected<std::vector<int32_t>>(context.status());
  rt::Status checked = fitted ? rt::Status::success() : fitted.status();
  if (fitted) {
    prompt = fitted.take();
    rt::Expected<rt::Tensor> ids =
        rt::Tensor::fromI32({1, static_cast<int64_t>(prompt.size())}, prompt);
    checked = ids ? rt::checkInputs(*model->plan().findEntry(
                                        options.generation.prefillEntry),
                                    {ids.take()})
                  : ids.status();
  }
  if (!checked.ok()) {
    llvm::errs() << "error: " << checked.message() << "\n";
    return std::nullopt;
  }
  return model;
}

const char *reasonName(rt::StopReason reason) {
  switch (reason) {
  case rt::StopReason::MaxTokens:
    return "max_tokens";
  case rt::StopReason::StopToken:
    return "eos";
  case rt::StopReason::Callback:
    return "stop_string";
  }
  return "unknown";
}

void printJson(const std::vector<int32_t> &prompt,
               const rt::GenerationResult &result, const TextStream &text) {
  nlohmann::json out;
  out["prompt_tokens"] = prompt.size();
  out["generated_ids"] = result.generated;
  if (text.hasTokenizer())
    out["text"] = text.text();
  out["stop_reason"] = reasonName(result.reason);
  out["prefill_ms"] = result.prefillMs;
  out["decode_ms"] = result.decodeMs;
  out["decode_steps"] = result.decodeSteps;
  out["decode_tokens_per_s"] = result.decodeTokensPerSecond();
  llvm::outs() << out.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/true) << "\n";
}

void printSummary(const std::vector<int32_t> &prompt,
                  const rt::GenerationResult &result,
                  const CompiledModel &model) {
  llvm::errs() << "\n"
               << "prompt   " << prompt.size() << " tokens, prefill "
               << llvm::format("%.1f", result.prefillMs) << " ms\n"
               << "decode   " << result.generated.size() << " tokens ("
               << reasonName(result.reason) << "), "
               << llvm::format("%.2f", result.decodeTokensPerSecond())
               << " tokens/s over " << result.decodeSteps << " steps\n"
               << "kernels  " << model.stats.compiled << " compiled, "
               << model.stats.cacheHits << " from the cache"
               << deferredKernelsNote(model) << ", "
               << llvm::format("%.2f", model.stats.seconds) << " s\n";
}

/// The source ids and the search's options, checked; prints errors.
std::optional<std::vector<int32_t>> seq2seqSource(GenerateOptions &options) {
  PromptOptions source;
  source.ids = options.srcIds;
  std::optional<std::vector<int32_t>> ids =
      promptIds(source, TextStream(std::nullopt));
  if (!ids)
    return std::nullopt;
  rt::BeamOptions &beam = options.seq2seq.beam;
  beam.maxNewTokens = options.generation.maxNewTokens;
  beam.eosId = static_cast<int32_t>(options.eosId);
  const std::map<std::string, rt::EarlyStopping> modes = {
      {"heuristic", rt::EarlyStopping::Heuristic},
      {"immediate", rt::EarlyStopping::Immediate},
      {"never", rt::EarlyStopping::Never}};
  auto mode = modes.find(options.earlyStopping);
  if (mode == modes.end()) {
    llvm::errs() << "error: --early-stopping must be heuristic, immediate or "
                    "never, got '"
                 << options.earlyStopping << "'\n";
    return std::nullopt;
  }
  beam.earlyStopping = mode->second;
  return ids;
}

/// Checks source and target lengths against the entries' bounds.
rt::Status checkSeq2SeqLengths(const rt::Plan &plan,
                               const GenerateOptions &options,
                               size_t sourceLength) {
  rt::Expected<rt::Seq2SeqLimits> limits =
      rt::seq2seqLimits(plan, options.seq2seq);
  if (!limits)
    return limits.status();
  if (limits->source > 0 && static_cast<int64_t>(sourceLength) > limits->source)
    return rt::Status::error("the source has " + std::to_string(sourceLength) +
                             " tokens; the model takes at most " +
                             std::to_string(limits->source));
  // The start token and every new token but the last are decoder inputs.
  if (limits->target > 0 && options.generation.maxNewTokens > limits->target)
    return rt::Status::error(
        std::to_string(options.generation.maxNewTokens) +
        " new tokens are asked for; the decoder takes at most " +
        std::to_string(limits->target) + " target tokens (use a smaller -n)");
  return rt::validateBeamOptions(options.seq2seq.beam,
                                 static_cast<size_t>(limits->vocab));
}

void printHypotheses(const std::vector<rt::BeamHypothesis> &hypotheses,
                     const TextStream &text, bool json) {
  if (json) {
    nlohmann::json out, list = nlohmann::json::array();
    for (const rt::BeamHypothesis &h : hypotheses)
      list.push_back({{"ids", h.tokens}, {"score", h.score}});
    out["generated_ids"] = hypotheses.front().tokens;
    out["hypotheses"] = list;
    llvm::outs() << out.dump() << "\n";
    return;
  }
  for (const rt::BeamHypothesis &h : hypotheses) {
    llvm::outs() << llvm::format("%10.5f ", h.score);
    const rt::tok::Tokenizer *tokenizer = text.getTokenizer();
    rt::Expected<std::string> decoded =
        tokenizer ? tokenizer->decode(h.tokens) : rt::Status::error("");
    if (decoded) {
      llvm::outs() << *decoded << "\n";
      continue;
    }
    for (size_t i = 0; i < h.tokens.size(); ++i)
      llvm::outs() << (i ? " " : "") << h.tokens[i];
    llvm::outs() << "\n";
  }
}

/// Encoder-decoder models: greedy or beam search from --src-ids.
int runSeq2Seq(GenerateOptions &options, const TextStream &text) {
  std::optional<std::vector<int32_t>> source = seq2seqSource(options);
  if (!source)
    return 1;
  session::CompileOptions compile =
      compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return 1;
  rt::Status checked = rt::checkSeq2SeqPlan(model->plan(), options.seq2seq);
  if (checked.ok())
    checked = checkSeq2SeqLengths(model->plan(), options, source->size());
  if (!checked.ok()) {
    llvm::errs() << "error: " << checked.message() << "\n";
    return 1;
  }
  rt::Expected<std::vector<std::string>> entries =
      rt::seq2seqEntries(model->plan(), options.seq2seq);
  if (!entries) {
    llvm::errs() << "error: " << entries.message() << "\n";
    return 1;
  }
  compile.entries = *entries;
  if (!buildKernels(*model, compile))
    return 1;
  std::optional<rt::Executor> executor = makeExecutor(*model, options.weights);
  if (!executor)
    return 1;
  rt::Expected<std::vector<rt::BeamHypothesis>> hypotheses =
      rt::generateSeq2Seq(*executor, *source, options.seq2seq);
  if (!hypotheses) {
    llvm::errs() << "error: " << hypotheses.message() << "\n";
    return 1;
  }
  printHypotheses(*hypotheses, text, options.json);
  return 0;
}

int runGenerate(GenerateOptions &options) {
  rt::Status valid =
      options.generation.maxNewTokens >= 1
          ? rt::validateSamplerOptions(options.generation.sampler)
          : rt::Status::error("-n/--max-new-tokens must be at least 1");
  if (!valid.ok()) {
    llvm::errs() << "error: " << valid.message() << "\n";
    return 1;
  }
  std::optional<TextStream> text = openTextStream(options.prompt);
  if (!text)
    return 1;
  if (!options.srcIds.empty())
    return runSeq2Seq(options, *text);
  std::optional<std::vector<int32_t>> prompt = promptIds(options.prompt, *text);
  if (!prompt)
    return 1;
  rt::GenerationOptions &generation = options.generation;
  if (!options.ignoreEos) {
    int64_t eos = options.eosId >= 0 ? options.eosId : text->eosId();
    if (eos >= 0)
      generation.stopIds.push_back(static_cast<int32_t>(eos));
  }

  session::CompileOptions compile;
  std::optional<CompiledModel> model = planFor(options, *prompt, compile);
  if (!model || !buildKernels(*model, compile))
    return 1;
  std::optional<rt::Executor> executor = makeExecutor(*model, options.weights);
  if (!executor)
    return 1;

  if (!options.json)
    text->begin(*prompt);
  rt::Expected<rt::GenerationResult> result = rt::generate(
      *executor, *prompt, generation, [&](int32_t id) {
        bool stopString = text->push(id, options.stop);
        if (!options.json)
          text->flush(llvm::outs());
        return !stopString;
      });
  if (!result) {
    llvm::outs().flush();
    llvm::errs() << "\nerror: " << result.message() << "\n";
    return 1;
  }
  if (options.json) {
    printJson(*prompt, *result, *text);
    return 0;
  }
  text->finish(llvm::outs());
  llvm::outs().flush();
  printSummary(*prompt, *result, *model);
  return 0;
}

void addSamplerOptions(CLI::App &command, rt::SamplerOptions &sampler) {
  command.add_flag("--greedy", sampler.greedy,
                   "Pick the most likely token (argmax) every step");
  command.add_option("--temperature", sampler.temperature,
                     "Divide the logits by T before sampling (> 0)")
      ->default_val(1.0);
  command.add_option("--top-k", sampler.topK,
                     "Sample among the k most likely tokens (0: off)")
      ->default_val(0);
  command.add_option("--top-p", sampler.topP,
                     "Sample from the smallest set whose probability "
                     "reaches p (1: off)")
      ->default_val(1.0);
  command.add_option("--min-p", sampler.minP,
                     "Drop tokens less likely than p times the top one "
                     "(0: off)")
      ->default_val(0.0);
  command.add_option("--repetition-penalty", sampler.repetitionPenalty,
                     "Penalize tokens already in the sequence (1: off)")
      ->default_val(1.0);
  command.add_option("--seed", sampler.seed,
                     "Seed of the sampler's random numbers (xoshiro256**)")
      ->default_val(0);
}

} // namespace

CommandRunner driver::registerGenerateCommand(CLI::App &app) {
  auto options = std::make_shared<GenerateOptions>();
  CLI::App *command = app.add_subcommand(
      "generate", "Generate text with a decoder model (prefill + KV-cache "
                  "decode loop), streaming it as it is produced");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  addWeightOptions(*command, options->weights, "--weight-seed");
  addCacheOptions(*command, options->cache);
  addPromptOptions(*command, options->prompt);
  command->add_option("-n,--max-new-tokens", options->generation.maxNewTokens,
                      "How many tokens to generate at most")
      ->default_val(32);
  addSamplerOptions(*command, options->generation.sampler);
  command->add_option("--stop", options->stop,
                      "Stop once the generated text contains this string "
                      "(repeatable)");
  command->add_option("--eos-id", options->eosId,
                      "End-of-sequence id (default: the tokenizer's)");
  command->add_flag("--ignore-eos", options->ignoreEos,
                    "Do not stop at the end-of-sequence token");
  command->add_flag("--truncate-prompt", options->truncate,
                    "Keep the prompt's last tokens when prompt + new tokens "
                    "exceed the context (default: refuse)");
  command->add_option("--src-ids", options->srcIds,
                      "Encoder-decoder models: the source ids (runs greedy "
                      "or beam search with the encode/decode entries)");
  command->add_option("--start-id", options->seq2seq.startId,
                      "Encoder-decoder models: the decoder's start token")
      ->default_val(1);
  command->add_flag("--no-kv-cache", options->seq2seq.noCache,
                    "Encoder-decoder models: run the decoder on the whole "
                    "target every step (default: decode_start/decode_step "
                    "with a key/value cache when the model has them)");
  command->add_option("--beams", options->seq2seq.beam.numBeams,
                      "Encoder-decoder models: beams (1: greedy)")
      ->default_val(1);
  command->add_option("--length-penalty", options->seq2seq.beam.lengthPenalty,
                      "Beam score = sum of log-probs / length^penalty")
      ->default_val(1.0);
  command->add_option("--early-stopping", options->earlyStopping,
                      "When beam search stops: heuristic, immediate or never "
                      "(Hugging Face's False, True, \"never\")")
      ->default_val("heuristic");
  command->add_flag("--json", options->json,
                    "Print one JSON object (prompt_tokens, generated_ids, "
                    "text, prefill_ms, decode_tokens_per_s, ...)");
  return [options] { return runGenerate(*options); };
}
