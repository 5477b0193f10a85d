"""The encoder-decoder ``Transformer`` from the seed article the project started from
("Transformer models: What are they, and how do they work?", section "Here is the entire
code"), re-typed as printed there so that the module
attribute names -- and so the state_dict names -- are the seed's:

    encoder.embedding.weight                          [vocab, d_model]
    encoder.pos_encoding.pe                           [max_len, 1, d_model]  (persistent buffer)
    encoder.layers.{i}.attention.linear_{q,k,v}.{weight,bias}
    encoder.layers.{i}.attention.fc.{weight,bias}
    encoder.layers.{i}.feed_forward.linear{1,2}.{weight,bias}
    encoder.layers.{i}.norm{1,2}.{weight,bias}
    decoder.embedding.weight, decoder.pos_encoding.pe
    decoder.layers.{i}.self_attention.{linear_q,linear_k,linear_v,fc}.{weight,bias}
    decoder.layers.{i}.encoder_attention.{linear_q,linear_k,linear_v,fc}.{weight,bias}
    decoder.layers.{i}.feed_forward.linear{1,2}.{weight,bias}
    decoder.layers.{i}.norm{1,2,3}.{weight,bias}
    fc_out.{weight,bias}                              [vocab, d_model], [vocab]

Only the model classes are copied (not the example Dataset or the training loop). The code
below is the seed's, including its quirks, which a faithful implementation must reproduce:

* One ``vocab_size`` for source and target; no final LayerNorm after either stack;
  embeddings are scaled by sqrt(d_model); nothing is shared or tied.
* ``PositionalEncoding.forward`` adds ``self.pe[:x.size(0), :]`` where ``pe`` is
  ``[max_len, 1, d_model]`` but ``x`` is batch-first ``[batch, seq, d_model]``: row *b* of
  the table (b = batch index) is added to every position of sequence *b*, so the model gets
  no per-position information (and batch > max_len fails to broadcast). The
  position-indexed variant that the article describes is available, outside the seed
  code, as ``use_position_indexed_pe(model)``.
* ``MultiHeadAttention`` replaces masked scores by -1e9 (``masked_fill(mask == 0, -1e9)``);
  a fully masked row therefore becomes a uniform average, not NaN.
* The seed never builds masks (its training and inference call ``transformer(src, tgt)``
  with ``src_mask = tgt_mask = None``: no padding mask and no causal mask).
  ``make_masks`` below (not seed code) builds the conventional ones for callers that want
  them.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- seed code, verbatim (class bodies), from 003_13fec87de5f45068.txt -------------------

# Positional Encoding
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=5000):
        super(PositionalEncoding, self).__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        return x + self.pe[:x.size(0), :]


# Multi-Head Attention Mechanism
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super(MultiHeadAttention, self).__init__()
        assert d_model % num_heads == 0
        self.d_k = d_model // num_heads
        self.num_heads = num_heads
        self.linear_q = nn.Linear(d_model, d_model)
        self.linear_k = nn.Linear(d_model, d_model)
        self.linear_v = nn.Linear(d_model, d_model)
        self.fc = nn.Linear(d_model, d_model)
        self.scale = math.sqrt(self.d_k)

    def forward(self, query, key, value, mask=None):
        batch_size = query.size(0)
        Q = self.linear_q(query).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        K = self.linear_k(key).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)
        V = self.linear_v(value).view(batch_size, -1, self.num_heads, self.d_k).transpose(1, 2)

        scores = torch.matmul(Q, K.transpose(-2, -1)) / self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, -1e9)
        attn = F.softmax(scores, dim=-1)
        output = torch.matmul(attn, V)
        output = output.transpose(1, 2).contiguous().view(batch_size, -1, self.num_heads * self.d_k)
        return self.fc(output)


# Feed Forward Network
class FeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.1):
        super(FeedForward, self).__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


# Transformer Encoder Layer
class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super(EncoderLayer, self).__init__()
        self.attention = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        attn_output = self.attention(x, x, x, mask)
        x = self.norm1(x + self.dropout(attn_output))
        ff_output = self.feed_forward(x)
        x = self.norm2(x + self.dropout(ff_output))
        return x


# Transformer Encoder
class Encoder(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, num_layers, vocab_size, max_len, dropout=0.1):
        super(Encoder, self).__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.pos_encoding = PositionalEncoding(d_model, max_len)
        self.layers = nn.ModuleList([EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, src, mask=None):
        x = self.embedding(src) * math.sqrt(self.embedding.embedding_dim)
        x = self.pos_encoding(x)
        x = self.dropout(x)
        for layer in self.layers:
            x = layer(x, mask)
        return x


# Transformer Decoder Layer
class DecoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super(DecoderLayer, self).__init__()
        self.self_attention = MultiHeadAttention(d_model, num_heads)
        self.encoder_attention = MultiHeadAttention(d_model, num_heads)
        self.feed_forward = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, enc_output, src_mask=None, tgt_mask=None):
        self_attn_output = self.self_attention(x, x, x, tgt_mask)
        x = self.norm1(x + self.dropout(self_attn_output))
        enc_attn_output = self.encoder_attention(x, enc_output, enc_output, src_mask)
        x = self.norm2(x + self.dropout(enc_attn_output))
        ff_output = self.feed_forward(x)
        x = self.norm3(x + self.dropout(ff_output))
        return x


# Transformer Decoder
class Decoder(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, num_layers, vocab_size, max_len, dropout=0.1):
        super(Decoder, self).__init__()
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.pos_encoding = PositionalEncoding(d_model, max_len)
        self.layers = nn.ModuleList([DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])
        self.dropout = nn.Dropout(dropout)

    def forward(self, tgt, enc_output, src_mask=None, tgt_mask=None):
        x = self.embedding(tgt) * math.sqrt(self.embedding.embedding_dim)
        x = self.pos_encoding(x)
        x = self.dropout(x)
        for layer in self.layers:
            x = layer(x, enc_output, src_mask, tgt_mask)
        return x


# Transformer Model
class Transformer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, num_layers, vocab_size, max_len, dropout=0.1):
        super(Transformer, self).__init__()
        self.encoder = Encoder(d_model, num_heads, d_ff, num_layers, vocab_size, max_len, dropout)
        self.decoder = Decoder(d_model, num_heads, d_ff, num_layers, vocab_size, max_len, dropout)
        self.fc_out = nn.Linear(d_model, vocab_size)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        enc_output = self.encoder(src, src_mask)
        dec_output = self.decoder(tgt, enc_output, src_mask, tgt_mask)
        output = self.fc_out(dec_output)
        return output


# ---- end of seed code ----------------------------------------------------------------------

# The seed's example hyper-parameters (its `if __name__ == "__main__":` block).
SEED_CONFIG = dict(d_model=512, num_heads=8, d_ff=2048, num_layers=6, vocab_size=10000,
                   max_len=100, dropout=0.1)


def make_masks(src, tgt, pad_id=0):
    """Not seed code. Conventional masks in the shape the seed's MultiHeadAttention accepts
    (broadcast against scores [batch, heads, q_len, k_len]; 0 = masked):

    src_mask [B, 1, 1, S]: key padding, (src != pad_id).
    tgt_mask [B, 1, T, T]: (tgt != pad_id) over *query* rows, AND no-peak (j <= i), i.e.
      (tgt != pad).unsqueeze(1).unsqueeze(3) & tril(ones(T, T)) -- the construction of the
      widely copied companion tutorial's ``generate_mask``. A padded query row is fully
      masked, so with the seed's masked_fill(-1e9) it attends uniformly to all T positions.
    """
    src_mask = (src != pad_id).unsqueeze(1).unsqueeze(2)
    tgt_pad = (tgt != pad_id).unsqueeze(1).unsqueeze(3)
    t = tgt.size(1)
    nopeak = (1 - torch.triu(torch.ones(1, t, t), diagonal=1)).bool()
    return src_mask, tgt_pad & nopeak


def use_position_indexed_pe(model):
    """Not seed code. Returns a callable that runs ``model`` with position-indexed positional
    encodings -- x + pe[position], what the article's prose describes -- instead of the seed's
    x + pe[batch index]. Same weights and buffers; the swap lasts for one call."""

    def run(*args, **kwargs):
        mods = (model.encoder.pos_encoding, model.decoder.pos_encoding)
        for m in mods:
            m.forward = (lambda m: lambda x: x + m.pe[:x.size(1), 0, :].unsqueeze(0))(m)
        try:
            return model(*args, **kwargs)
        finally:
            for m in mods:
                del m.forward

    return run
