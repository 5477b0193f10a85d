//===- EmbedCommand.cpp - tfc embed: sentence embeddings ------------------===//
//
// Encoders: tokenize each text ([CLS] ... [SEP] and truncation as the
// tokenizer file declares), run the batch through the model, and print or
// write one vector per text. A model with an `embed` entry computes the
// sentence embedding in its graph (all-MiniLM-L6-v2's mean pooling and L2
// normalization); for an entry that returns token states
// ([batch, seq, d]) the runtime pools them (runtime/Pooling.h).
//
//===----------------------------------------------------------------------===//

#include "tools/tfc/Commands.h"
#include "tools/tfc/ModelRunner.h"

#include "runtime/Npy.h"
#include "runtime/Pooling.h"
#include "runtime/tokenizer/Tokenizer.h"

#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fstream>

using namespace tfc;
using namespace tfc::driver;

namespace {

struct EmbedOptions {
  ModelOptions model;
  CacheOptions cache;
  WeightOptions weights;
  std::string tokenizer;
  std::vector<std::string> texts;
  std::string file;
  std::string entry;
  bool noNormalize = false;
  int64_t batchSize = 32;
  int64_t maxLength = 0; // 0: sentence_bert_config.json's, else the file's
  std::string output;
};

/// --text values, then the lines of --file.
std::optional<std::vector<std::string>> readTexts(const EmbedOptions &options) {
  std::vector<std::string> texts = options.texts;
  if (!options.file.empty()) {
    std::ifstream in(options.file, std::ios::binary);
    if (!in) {
      llvm::errs() << "error: cannot read --file '" << options.file << "'\n";
      return std::nullopt;
    }
    for (std::string line; std::getline(in, line);)
      texts.push_back(line);
  }
  if (texts.empty()) {
    llvm::errs() << "error: nothing to embed: pass --text or --file\n";
    return std::nullopt;
  }
  return texts;
}

/// The entry to run: --entry, else `embed` when the model has one, else
/// the first.
llvm::Expected<const rt::PlanEntry *>
chooseEntry(const CompiledModel &model, const std::string &requested) {
  if (requested.empty())
    if (const rt::PlanEntry *embed = model.plan().findEntry("embed"))
      return embed;
  return model.requireEntry(requested);
}

/// ids and (when the entry takes one) the mask of texts [begin, end),
/// padded to the longest.
rt::Expected<std::vector<rt::Tensor>>
batchInputs(const rt::PlanEntry &entry,
            const std::vector<rt::tok::Encoding> &encodings, size_t begin,
            size_t end, int32_t padId) {
  size_t longest = 1;
  for (size_t i = begin; i < end; ++i)
    longest = std::max(longest, encodings[i].ids.size());
  int64_t rows = static_cast<int64_t>(end - begin);
  int64_t cols = static_cast<int64_t>(longest);
  std::vector<int32_t> ids(static_cast<size_t>(rows * cols), padId);
  std::vector<uint8_t> mask(ids.size(), 0);
  for (size_t i = begin; i < end; ++i)
    for (size_t t = 0; t < encodings[i].ids.size(); ++t) {
      ids[(i - begin) * longest + t] = encodings[i].ids[t];
      mask[(i - begin) * longest + t] = 1;
    }
  std::vector<rt::Tensor> inputs;
  for (const std::string &name : entry.inputNames) {
    rt::Expected<rt::Tensor> t =
        name == "ids" ? rt::Tensor::fromI32({rows, cols}, ids)
        : name == "mask"
            ? rt::Tensor::zeros(rt::DType::Bool, {rows, cols})
            : rt::Expected<rt::Tensor>(rt::Status::error(
                  "entry '" + entry.name + "' takes input '" + name +
                  "'; tfc embed provides only 'ids' and 'mask'"));
    if (!t)
      return t.status();
    if (name == "mask")
      std::copy(mask.begin(), mask.end(), static_cast<uint8_t *>(t->data()));
    inputs.push_back(t.take());
  }
  return inputs;
}

/// One embedding per row of the batch: the entry's first output, pooled
/// when it holds token states.
rt::Expected<rt::Tensor> embedBatch(rt::Executor &executor,
                                    const rt::PlanEntry &entry,
                                    const std::vector<rt::Tensor> &inputs,
                                    bool normalize) {
  rt::Expected<std::vector<rt::Tensor>> outputs =
      executor.run(entry.name, inputs);
  if (!outputs)
    return outputs.status();
  rt::Tensor &first = outputs->front();
  if (first.rank() == 2 && first.dtype() == rt::DType::F32)
    return std::move(first); // the model pooled (and normalized) itself
  int maskIndex = entry.inputIndex("mask");
  const rt::Tensor &mask = maskIndex >= 0
                               ? inputs[static_cast<size_t>(maskIndex)]
                               : inputs.front();
  rt::Expected<rt::Tensor> pooled = rt::meanPool(first, mask);
  if (pooled && normalize)
    TFC_RT_RETURN_IF_ERROR(rt::l2Normalize(*pooled));
  return pooled;
}

void printRows(const rt::Tensor &all) {
  int64_t n = all.shape()[0], d = all.shape()[1];
  const float *v = all.dataAs<float>();
  for (int64_t i = 0; i < n; ++i) {
    llvm::outs() << "[";
    for (int64_t j = 0; j < d; ++j) {
      char buffer[32];
      std::snprintf(buffer, sizeof(buffer), "%.7g", v[i * d + j]);
      llvm::outs() << (j ? ", " : "") << buffer;
    }
    llvm::outs() << "]\n";
  }
}

rt::Status writeRows(const std::string &path, const rt::Tensor &all) {
  if (llvm::StringRef(path).ends_with(".npy"))
    return rt::writeNpy(path, all);
  if (llvm::StringRef(path).ends_with(".safetensors"))
    return rt::writeSafetensors(path, {{"embeddings", all}}, {});
  return rt::Status::error("-o must end in .npy or .safetensors: '" + path +
                           "'");
}

/// sentence-transformers' max_seq_length from the sentence_bert_config.json
/// next to the tokenizer (in its folder, or the folder given), if any: the
/// truncation sentence-transformers applies instead of the tokenizer file's.
std::optional<int64_t> sentenceTransformersMaxLength(const std::string &path) {
  llvm::SmallString<256> config(path);
  if (!llvm::sys::fs::is_directory(path))
    llvm::sys::path::remove_filename(config);
  llvm::sys::path::append(config, "sentence_bert_config.json");
  std::ifstream in(std::string(config.str()));
  if (!in)
    return std::nullopt;
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (json.is_discarded() || !json.contains("max_seq_length") ||
      !json["max_seq_length"].is_number_integer())
    return std::nullopt;
  return json["max_seq_length"].get<int64_t>();
}

/// Tokenizes every text; prints errors.
std::optional<std::vector<rt::tok::Encoding>>
encodeAll(const rt::tok::Tokenizer &tokenizer,
          const std::vector<std::string> &texts) {
  std::vector<rt::tok::Encoding> encodings;
  for (size_t i = 0; i < texts.size(); ++i) {
    rt::Expected<rt::tok::Encoding> e = tokenizer.encode(texts[i]);
    if (!e) {
      llvm::errs() << "error: text " << (i + 1) << ": " << e.message() << "\n";
      return std::nullopt;
    }
    encodings.push_back(e.take());
  }
  return encodings;
}

int runEmbed(const EmbedOptions &options) {
  if (options.batchSize < 1) {
    llvm::errs() << "error: --batch-size must be at least 1\n";
    return 1;
  }
  std::optional<std::vector<std::string>> texts = readTexts(options);
  if (!texts)
    return 1;
  rt::Expected<rt::tok::Tokenizer> tokenizer =
      rt::tok::Tokenizer::load(options.tokenizer);
  if (!tokenizer) {
    llvm::errs() << "error: " << tokenizer.message() << "\n";
    return 1;
  }
  tokenizer->disablePadding(); // batches are padded here, to their longest
  std::optional<int64_t> maxLength =
      options.maxLength > 0 ? std::optional<int64_t>(options.maxLength)
                            : sentenceTransformersMaxLength(options.tokenizer);
  if (maxLength)
    tokenizer->setMaxLength(static_cast<size_t>(*maxLength));
  std::optional<std::vector<rt::tok::Encoding>> encodings =
      encodeAll(*tokenizer, *texts);
  if (!encodings)
    return 1;
  int32_t padId = tokenizer->specialIds().pad.value_or(0);

  session::CompileOptions compile = compileOptions(options.model, options.cache);
  std::optional<CompiledModel> model = planModel(compile);
  if (!model)
    return 1;
  const rt::PlanEntry *entry =
      reportedEntry(chooseEntry(*model, options.entry));
  if (!entry)
    return 1;
  size_t count = texts->size(), step = static_cast<size_t>(options.batchSize);
  std::vector<std::vector<rt::Tensor>> batches;
  for (size_t begin = 0; begin < count; begin += step) {
    auto inputs = batchInputs(*entry, *encodings, begin,
                              std::min(count, begin + step), padId);
    rt::Status checked =
        inputs ? rt::checkInputs(*entry, *inputs) : inputs.status();
    if (!checked.ok()) {
      llvm::errs() << "error: " << checked.message() << "\n";
      return 1;
    }
    batches.push_back(inputs.take());
  }
  compile.entries = {entry->name};
  if (!buildKernels(*model, compile))
    return 1;
  std::optional<rt::Executor> executor = makeExecutor(*model, options.weights);
  if (!executor)
    return 1;

  std::vector<float> rows;
  int64_t d = 0;
  for (const std::vector<rt::Tensor> &inputs : batches) {
    rt::Expected<rt::Tensor> e =
        embedBatch(*executor, *entry, inputs, !options.noNormalize);
    if (!e) {
      llvm::errs() << "error: " << e.message() << "\n";
      return 1;
    }
    d = e->shape()[1];
    rows.insert(rows.end(), e->dataAs<float>(),
                e->dataAs<float>() + e->numElements());
  }
  rt::Expected<rt::Tensor> all =
      rt::Tensor::fromF32({static_cast<int64_t>(count), d}, rows);
  if (!all) {
    llvm::errs() << "error: " << all.message() << "\n";
    return 1;
  }
  if (options.output.empty()) {
    printRows(*all);
    return 0;
  }
  rt::Status written = writeRows(options.output, *all);
  if (!written.ok()) {
    llvm::errs() << "error: " << written.message() << "\n";
    return 1;
  }
  llvm::outs() << "wrote    " << options.output << " (" << count << " x " << d
               << ")\n";
  return 0;
}

} // namespace

CommandRunner driver::registerEmbedCommand(CLI::App &app) {
  auto options = std::make_shared<EmbedOptions>();
  CLI::App *command = app.add_subcommand(
      "embed", "Sentence embeddings from an encoder model (mean pooling over "
               "the attention mask, L2-normalized)");
  addModelOptions(*command, options->model);
  addPipelineOptions(*command, options->model);
  addWeightOptions(*command, options->weights);
  addCacheOptions(*command, options->cache);
  command->add_option("--tokenizer", options->tokenizer,
                      "tokenizer.json (or vocab.txt, or a folder)")
      ->required();
  command->add_option("--text", options->texts, "A text to embed (repeatable)");
  command->add_option("--file", options->file, "Texts to embed, one per line");
  command->add_option("--entry", options->entry,
                      "Entry to run (default: 'embed' if the model has one, "
                      "else the first)");
  command->add_flag("--no-normalize", options->noNormalize,
                    "Keep the pooled vectors' length (entries that return "
                    "token states)");
  command->add_option("--max-length", options->maxLength,
                      "Truncate texts to this many tokens (default: "
                      "sentence_bert_config.json's max_seq_length next to "
                      "the tokenizer, else the tokenizer file's truncation)");
  command->add_option("--batch-size", options->batchSize,
                      "Texts per run of the model")
      ->default_val(32);
  command->add_option("-o,--output", options->output,
                      "Write the [texts, d] matrix to .npy or .safetensors "
                      "('embeddings') instead of printing it");
  return [options] { return runEmbed(*options); };
}
