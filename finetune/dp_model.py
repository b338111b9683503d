"""The KLUE-DP parser: a pretrained encoder (`AutoModel`) under KLUE-baseline's biaffine head, as one
`nn.Module` that saves and loads as safetensors (never pickle).

Reference: KLUE-baseline `klue_baseline/models/dependency_parsing.py` (`DPTransformer`, `BiAttention`,
`BiLinear`) and `klue_baseline/data/klue_dp.py` (`collate_fn`). The head, in the order the data flows:

1. Word states: each eojeol is `concat(state of its first subword, state of its last subword)`; ROOT (position
   0) is `concat([CLS], [CLS])` (`resize_outputs`).
2. A POS embedding (45 tags + one index for ROOT and padding, `pos_dim` 256) is concatenated to each word
   state; the tag is the last one of the eojeol's `+`-joined POS.
3. A BiLSTM encoder over ROOT + words (hidden 768, 1 layer), then a unidirectional LSTM decoder over the words
   (input `elu(src_dense(encoder states))`, initial state from the encoder's final cell state through
   `hx_dense`, hidden state its tanh: `_transform_decoder_init_state`).
4. Arc scores: `elu` projections of decoder states (dependents, `arc_space` 512) and encoder states (heads,
   ROOT included), scored by a biaffine form `d U eᵀ + W_d d + W_e e + b` (`BiAttention`, one label).
5. Label scores: a bilinear form over `elu` projections (`type_space` 256) of the dependent and of its head
   (`BiLinear`, 38 labels): the gold head in training, the argmax head at evaluation.
6. Loss: cross-entropy of the gold head over the sentence's positions plus cross-entropy of the gold label,
   each summed over words and divided by the number of words.

Dropout as the baseline means it: its `nn.Dropout2d(0.33)` is applied to 3-D tensors, which the PyTorch of its
time read as (N, C, L) and dropped whole channels: whole word positions of the POS embeddings, whole feature
channels (the same ones for every position) of the LSTM outputs. Current PyTorch reads a 3-D input of
`Dropout2d` differently, so this module uses `nn.Dropout1d`, which has that (N, C, L) behaviour.

Departures: at evaluation, positions past the end of a sentence are masked out of the head argmax (the
baseline's `BiAttention` multiplies their scores by 0, so a word could take a padding position as its head
when all its real scores are negative); words are gathered with `torch.gather` instead of Python loops; the
LSTMs run in fp32 when the trainer autocasts to bf16 on a GPU.

Saved checkpoint (`save_pretrained(dir)`, read back by `DependencyParser.from_pretrained(dir)`):

    dir/config.json         the encoder's transformers config (so AutoConfig / AutoTokenizer read the folder)
    dir/parser.json         {"format": "klue-pipeline/dependency-parser", "version": 1, "head": {ParserConfig},
                             "labels": [38 DEPREL names, id order], "pos_tags": [45 POS tags, id order]}
    dir/model.safetensors   every weight: "encoder.*" (the AutoModel) and the head's ("pos_embedding.*",
                             "lstm_encoder.*", "lstm_decoder.*", "src_dense.*", "hx_dense.*", "arc_c.*",
                             "type_c.*", "arc_h.*", "type_h.*", "arc_scorer.*", "label_scorer.*")

plus the tokenizer files, which the trainer saves beside them. Every file is written atomically (pipeline.io).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from finetune.records import read_head_file
from pipeline import io

FORMAT = "klue-pipeline/dependency-parser"
VERSION = 1
HEAD_FILE = "parser.json"
WEIGHTS_FILE = "model.safetensors"
IGNORE_INDEX = -100  # as finetune.tasks.base.IGNORE_INDEX: padded words and heads that fell to truncation
_MINUS_INF = -1e8  # the baseline's mask value for positions outside the sentence


@dataclass(frozen=True)
class ParserConfig:
    """Head sizes; defaults are KLUE-baseline's `DPTransformer.add_specific_args`."""

    n_pos: int
    n_labels: int
    pos_dim: int = 256
    lstm_hidden: int = 768
    encoder_layers: int = 1
    decoder_layers: int = 1
    arc_space: int = 512
    type_space: int = 256
    dropout: float = 0.33


@dataclass
class ParserOutput:
    loss: torch.Tensor | None  # when gold heads are given
    arc_scores: torch.Tensor  # (batch, words, words + 1): dependent x head position (0 = ROOT)
    pred_heads: torch.Tensor | None  # (batch, words) at evaluation; IGNORE_INDEX on padding
    pred_labels: torch.Tensor | None  # (batch, words) label ids for the predicted heads


class Biaffine(nn.Module):
    """Arc scorer `d U eᵀ + W_d d + W_e e + b` for every (dependent, head) pair. Parameter shapes and init as
    `BiAttention(num_labels=1, biaffine=True)` (the leading 1 keeps xavier's fan-in/fan-out the same)."""

    def __init__(self, dec_dim: int, enc_dim: int) -> None:
        super().__init__()
        self.W_d = nn.Parameter(torch.empty(1, dec_dim))
        self.W_e = nn.Parameter(torch.empty(1, enc_dim))
        self.b = nn.Parameter(torch.zeros(1, 1, 1))
        self.U = nn.Parameter(torch.empty(1, dec_dim, enc_dim))
        nn.init.xavier_uniform_(self.W_d)
        nn.init.xavier_uniform_(self.W_e)
        nn.init.xavier_uniform_(self.U)

    def forward(self, dep: torch.Tensor, head: torch.Tensor) -> torch.Tensor:
        """dep (B, W, dec), head (B, L, enc) -> (B, W, L)."""
        out_d = dep @ self.W_d.t()  # (B, W, 1)
        out_e = (head @ self.W_e.t()).transpose(1, 2)  # (B, 1, L)
        return dep @ self.U[0] @ head.transpose(1, 2) + out_d + out_e + self.b[0]


class Bilinear(nn.Module):
    """Label scorer `l U_o rᵀ + W_l l + W_r r + bias` for each label o (`BiLinear`: `F.bilinear` plus two linear
    terms); init as there. The bilinear term is computed as one matrix product (`l @ U` reshaped, then a product
    with r summed over its features): the same numbers as `F.bilinear`, whose CPU backward (`_trilinear`) took
    seconds per batch."""

    def __init__(self, left: int, right: int, out: int) -> None:
        super().__init__()
        self.U = nn.Parameter(torch.empty(out, left, right))
        self.W_l = nn.Parameter(torch.empty(out, left))
        self.W_r = nn.Parameter(torch.empty(out, right))
        self.bias = nn.Parameter(torch.zeros(out))
        nn.init.xavier_uniform_(self.W_l)
        nn.init.xavier_uniform_(self.W_r)
        nn.init.xavier_uniform_(self.U)

    def forward(self, left: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        shape = left.shape[:-1]
        n_out, n_left, n_right = self.U.shape
        lf, rf = left.reshape(-1, n_left), right.reshape(-1, n_right)
        lu = (lf @ self.U.permute(1, 0, 2).reshape(n_left, n_out * n_right)).view(-1, n_out, n_right)
        out = (lu * rf.unsqueeze(1)).sum(-1) + self.bias + F.linear(lf, self.W_l) + F.linear(rf, self.W_r)
        return out.reshape(*shape, n_out)


class DependencyParser(nn.Module):
    def __init__(self, encoder: Any, head: ParserConfig, labels: list[str], pos_tags: list[str]) -> None:
        """`encoder`: a transformers `AutoModel` (its `config.hidden_size` sizes the head)."""
        super().__init__()
        if len(labels) != head.n_labels or len(pos_tags) != head.n_pos:
            raise ValueError(f"{len(labels)} labels / {len(pos_tags)} POS tags for a head built for "
                             f"{head.n_labels} / {head.n_pos}")
        self.encoder = encoder
        self.config: Any = encoder.config  # the encoder's: what the trainer reads (max positions, pad id)
        self.head_config = head
        self.labels = list(labels)
        self.pos_tags = list(pos_tags)
        hidden, lstm = encoder.config.hidden_size, head.lstm_hidden
        self.pos_embedding = nn.Embedding(head.n_pos + 1, head.pos_dim)  # index n_pos: ROOT and padding
        self.dropout = nn.Dropout1d(head.dropout)
        self.lstm_encoder = nn.LSTM(2 * hidden + head.pos_dim, lstm, head.encoder_layers, batch_first=True,
                                    bidirectional=True, dropout=head.dropout if head.encoder_layers > 1 else 0.0)
        self.lstm_decoder = nn.LSTM(lstm, lstm, head.decoder_layers, batch_first=True,
                                    dropout=head.dropout if head.decoder_layers > 1 else 0.0)
        self.src_dense = nn.Linear(2 * lstm, lstm)
        self.hx_dense = nn.Linear(2 * lstm, lstm)
        self.arc_c = nn.Linear(2 * lstm, head.arc_space)
        self.type_c = nn.Linear(2 * lstm, head.type_space)
        self.arc_h = nn.Linear(lstm, head.arc_space)
        self.type_h = nn.Linear(lstm, head.type_space)
        self.arc_scorer = Biaffine(head.arc_space, head.arc_space)
        self.label_scorer = Bilinear(head.type_space, head.type_space, head.n_labels)

    # ---- forward -------------------------------------------------------------------------------
    def _channels_dropout(self, x: torch.Tensor) -> torch.Tensor:
        """Drop whole feature channels, the same for every position (x is (B, L, D))."""
        return self.dropout(x.transpose(1, 2)).transpose(1, 2)

    def _decoder_state(self, cn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        last = cn[-2:].transpose(0, 1).reshape(1, cn.shape[1], -1)  # last layer, both directions: (1, B, 2H)
        c0 = self.hx_dense(last)
        if self.lstm_decoder.num_layers > 1:
            c0 = torch.cat([c0, c0.new_zeros(self.lstm_decoder.num_layers - 1, *c0.shape[1:])], dim=0)
        return torch.tanh(c0), c0

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, word_first: torch.Tensor,
                word_last: torch.Tensor, word_mask: torch.Tensor, pos_ids: torch.Tensor,
                heads: torch.Tensor | None = None, deprels: torch.Tensor | None = None) -> ParserOutput:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        batch, n_words = word_first.shape
        size = hidden.shape[-1]
        first = hidden.gather(1, word_first.unsqueeze(-1).expand(batch, n_words, size))
        last = hidden.gather(1, word_last.unsqueeze(-1).expand(batch, n_words, size))
        cls = hidden[:, :1]
        x = torch.cat([torch.cat([cls, cls], dim=-1), torch.cat([first, last], dim=-1)], dim=1)
        root_pos = pos_ids.new_full((batch, 1), self.head_config.n_pos)
        pos = self.dropout(self.pos_embedding(torch.cat([root_pos, pos_ids], dim=1)))  # drops whole positions
        x = torch.cat([x, pos.to(x.dtype)], dim=-1)

        lengths = (word_mask.sum(dim=1) + 1).cpu()
        # The LSTMs run in fp32 even under the trainer's bf16 autocast on GPU (cuDNN's bf16 RNN support varies).
        with torch.autocast(device_type=x.device.type, enabled=False):
            packed = pack_padded_sequence(x.float(), lengths, batch_first=True, enforce_sorted=False)
            enc_packed, (_, cn) = self.lstm_encoder(packed)
            enc, _ = pad_packed_sequence(enc_packed, batch_first=True, total_length=n_words + 1)
            enc = self._channels_dropout(enc)
            src = F.elu(self.src_dense(enc[:, 1:]))
            packed = pack_padded_sequence(src, lengths - 1, batch_first=True, enforce_sorted=False)
            dec_packed, _ = self.lstm_decoder(packed, self._decoder_state(cn))
            dec, _ = pad_packed_sequence(dec_packed, batch_first=True, total_length=n_words)
            dec = self._channels_dropout(dec)

        arc_c, type_c = F.elu(self.arc_c(enc)), F.elu(self.type_c(enc))
        arc_h, type_h = F.elu(self.arc_h(dec)), F.elu(self.type_h(dec))
        head_mask = torch.cat([word_mask.new_ones(batch, 1), word_mask], dim=1).bool()  # (B, W + 1)
        arc = self.arc_scorer(arc_h, arc_c).masked_fill(~head_mask.unsqueeze(1), _MINUS_INF)

        def labels_for(head_index: torch.Tensor) -> torch.Tensor:
            at_head = type_c.gather(1, head_index.unsqueeze(-1).expand(-1, -1, type_c.shape[-1]))
            return self.label_scorer(type_h, at_head)

        loss = None
        if heads is not None and deprels is not None:
            valid = word_mask.bool() & (heads != IGNORE_INDEX)
            gold_heads = heads.masked_fill(~valid, 0)
            arc_logp = F.log_softmax(arc.float(), dim=-1).gather(2, gold_heads.unsqueeze(-1)).squeeze(-1)
            label_logp = F.log_softmax(labels_for(gold_heads).float(), dim=-1)
            label_logp = label_logp.gather(2, deprels.masked_fill(~valid, 0).unsqueeze(-1)).squeeze(-1)
            n = valid.sum().clamp(min=1)
            loss = -(arc_logp * valid).sum() / n - (label_logp * valid).sum() / n

        pred_heads = pred_labels = None
        if not self.training:
            pred_heads = arc.argmax(dim=-1)
            pred_labels = labels_for(pred_heads).argmax(dim=-1)
            pad = ~word_mask.bool()
            pred_heads = pred_heads.masked_fill(pad, IGNORE_INDEX)
            pred_labels = pred_labels.masked_fill(pad, IGNORE_INDEX)
        return ParserOutput(loss=loss, arc_scores=arc, pred_heads=pred_heads, pred_labels=pred_labels)

    # ---- saving and loading --------------------------------------------------------------------
    def save_pretrained(self, save_directory: Path | str, safe_serialization: bool = True) -> None:
        """Writes the layout in the module docstring; safetensors only (`safe_serialization=False` is refused:
        this project never writes pickles)."""
        if not safe_serialization:
            raise ValueError("DependencyParser saves safetensors only")
        from safetensors.torch import save

        out = Path(save_directory)
        io.write_text(out / "config.json", self.encoder.config.to_json_string())
        io.write_json(out / HEAD_FILE, {"format": FORMAT, "version": VERSION, "head": asdict(self.head_config),
                                        "labels": self.labels, "pos_tags": self.pos_tags}, indent=2, sort_keys=False)
        state = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}
        io.write_bytes(out / WEIGHTS_FILE, save(state, metadata={"format": "pt", "producer": FORMAT}))

    @classmethod
    def from_pretrained(cls, directory: Path | str) -> DependencyParser:
        """Rebuilds the encoder from `config.json` and the head from `parser.json`, then loads every weight
        strictly from `model.safetensors` (a missing or unexpected key is an error)."""
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoModel

        d = Path(directory)
        meta = read_head_file(d, HEAD_FILE, FORMAT, VERSION, "dependency-parser")
        encoder = AutoModel.from_config(AutoConfig.from_pretrained(d), dtype=torch.float32)
        model = cls(encoder, ParserConfig(**meta["head"]), meta["labels"], meta["pos_tags"])
        model.load_state_dict(load_file(str(d / WEIGHTS_FILE)), strict=True)
        return model
