"""The WoS state tracker: a pretrained encoder (`AutoModel`) under KLUE-baseline's TRADE-style slot generator,
as one `nn.Module` that saves and loads as safetensors (never pickle).

Reference: KLUE-baseline `klue_baseline/models/dialogue_state_tracking.py` (`DSTTransformer`, `SlotGenerator`,
`masked_cross_entropy_for_value`), run with `--parallel_decoding` as `run_all.sh` does. In the order the data
flows:

1. The encoder reads the dialogue (`[CLS] history [SEP] system turn [SEP] user turn [SEP]`); its last hidden
   states are the memory, its pooled output (the encoder's pooler; a fresh `Linear + tanh` over `[CLS]` when
   the encoder has none, as the baseline adds a `BertPooler` for ELECTRA) is the GRU's initial state, the same
   for every slot.
2. Each of the J slots ("domain-slot", sorted) is queried by the **sum of the word embeddings of its name's
   tokens** (`"관광-이름"` tokenized as `"관광 이름"`). Word embeddings are the encoder's own (`tie_weight`):
   the decoder holds no embedding matrix of its own, it reads `encoder.get_input_embeddings()`.
3. A one-layer GRU (hidden = the encoder's hidden size) decodes every slot in parallel for up to
   `max_decode` (10) steps. Per step, from the input embedding `w` (dropout first) and the new state `h`:
   attention over the input `a = softmax(memory · h)` (padding masked), context `c = a · memory`, vocabulary
   distribution `softmax(h Eᵀ)` over the tied embeddings `E`, copy distribution = `a` scattered onto the input
   token ids, `p_gen = sigmoid(W_gen [w; h; c])`, final `p = p_gen · vocab + (1 − p_gen) · copy`. The next input
   is the gold token (teacher forcing, drawn once per batch with probability 0.5 in training) or the argmax.
   `p` is never built as a (batch, J, vocabulary) tensor: the loss needs it at the gold token (`mixed_at`) and
   decoding its argmax, which lies at the best logit or at an input token (`argmax_mixed`). On the tiny CPU model
   (16k vocabulary) that made a training step 2.4x faster; the numbers are the dense formula's (tested). In
   training, the vocabulary distribution is computed only for the (example, slot) rows whose gold value still
   has a token at that step: most values are "none" (3 tokens with [SEP] in the tiny models' vocabularies), so
   after the 4th step ~5 % of the rows are left. A training step of the tiny model on synthetic WoS (batch 16,
   one thread, the 2 cores shared with two other jobs) took 1.9-2.1 s instead of 3.7-4.8 s. The loss and the
   gradients are those of decoding every row (`decode_all_rows`; tests/test_finetune_dst.py). In generation
   (evaluation) only the rows whose predicted gate is ptr are decoded past the gate: no other slot's value is
   read, and the kept rows' tokens are those of decoding every row (tested). Most gates are none, so this cuts
   the evaluations that made DST the suite's dearest task (298-381 s of a 398-569 s run, 2026-12-03).
4. The slot gate (none / dontcare / ptr / yes / no, `WoSProcessor.gating2id`) is a linear layer on the first
   step's context `c`.
5. Loss = masked cross-entropy of the gold value tokens under `p` (the log of the mixed probability; padding
   of the value matrix masked, every slot's value trained, "none" included: its tokens are the target of an
   absent slot) + cross-entropy of the gates over all slots. With `ptr_values_only` (a departure, off by
   default) the values of the slots whose gold gate is not ptr are masked too: only a ptr gate's value is read
   at prediction, and on the tiny CPU model the "none" targets (4 in 5) taught the generator to decode "none"
   under every ptr gate, so slot F1 stayed 0 (finetune/README.md, "MRC and DST at tiny scale").

Departures (also in finetune/README.md): the slot query sums only the name's tokens, not the padding the
baseline's padded index matrix adds (zero only while the pad row of the embeddings is zero); attention,
context and copy are computed per (example, slot) without repeating the memory J times (the same numbers);
the generation loss is accumulated step by step instead of storing the (batch, J, steps, vocabulary) tensor,
and the mixture is evaluated only where it is needed (point 3);
`log` is taken of the probability clamped at 1e-12 (the baseline can produce `-inf`); the GRU has no
`dropout` argument (PyTorch ignores it for one layer and warns); the decoder runs in fp32 under bf16
autocast; the teacher-forcing draw uses torch's generator (seeded with the run), not Python's `random`.

Saved checkpoint (`save_pretrained(dir)`, read back by `StateTracker.from_pretrained(dir)`):

    dir/config.json         the encoder's transformers config (AutoConfig / AutoTokenizer read the folder)
    dir/tracker.json        {"format": "klue-pipeline/dst-trade", "version": 1, "head": {TrackerConfig},
                             "slots": [J "domain-slot" names, sorted], "gates": [5 gate names, id order],
                             "slot_token_ids": [[token ids of each slot name]]}
    dir/model.safetensors   every weight: "encoder.*" (the AutoModel) and the head's ("gru.*", "w_gen.*",
                             "w_gate.*", and "pooler.*" when the encoder has no pooler)

plus the tokenizer files, which the trainer saves beside them. Every file is written atomically (pipeline.io).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from finetune.records import read_head_file
from pipeline import io

FORMAT = "klue-pipeline/dst-trade"
VERSION = 1
HEAD_FILE = "tracker.json"
WEIGHTS_FILE = "model.safetensors"
GATES = ["none", "dontcare", "ptr", "yes", "no"]  # WoSProcessor.gating2id order
GATE_PTR = GATES.index("ptr")
_MASKED = -1e9  # the baseline's attention mask value


@dataclass(frozen=True)
class TrackerConfig:
    """Head settings; defaults are KLUE-baseline's (`--teacher_forcing 0.5`, `max_len=10` at evaluation, the
    encoder's hidden-state dropout for the decoder's input dropout: `hidden_dropout_prob`, or ModernBERT's,
    `finetune.encoders.hidden_dropout`)."""

    pad_token_id: int
    dropout: float = 0.1
    teacher_forcing: float = 0.5
    max_decode: int = 10
    own_pooler: bool = False
    # True: the value loss covers only the slots whose gold gate is ptr (`Hyperparams.ptr_values_only`); False:
    # every slot, "none" the value of an absent one (the baseline)
    ptr_values_only: bool = False


@dataclass
class TrackerOutput:
    loss: torch.Tensor | None  # when gold gates and values are given
    gate_logits: torch.Tensor  # (batch, J, 5)
    # (batch, J, steps): the argmax token of every step; the pad id once a gold value ends (training) and on the
    # rows whose gate is not ptr (generation)
    tokens: torch.Tensor


def _take(x: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
    """The rows (flattened (B, J) index, a boolean mask) of a (B, J, ...) tensor; all of them, flattened, for
    None."""
    flat = x.reshape(-1, *x.shape[2:])
    return flat if rows is None else flat[rows]


class StateTracker(nn.Module):
    slot_ids: torch.Tensor  # (J, longest name) token ids of each slot name, padded; buffers, rebuilt from the JSON
    slot_mask: torch.Tensor  # (J, longest name) 1.0 on a name's tokens
    # True: training computes the vocabulary distribution of every row at every step, finished values included
    # (the baseline's way); the loss and gradients are the same either way (tests/test_finetune_dst.py)
    decode_all_rows: bool = False

    def __init__(self, encoder: Any, head: TrackerConfig, slots: list[str], slot_token_ids: list[list[int]]) -> None:
        super().__init__()
        if len(slots) != len(slot_token_ids) or any(not ids for ids in slot_token_ids):
            raise ValueError("every slot needs a non-empty list of name token ids")
        self.encoder = encoder
        self.config: Any = encoder.config  # what the trainer reads (max positions, pad id)
        self.head_config = head
        self.slots = list(slots)
        self.gates = list(GATES)
        self.slot_token_ids = [list(map(int, ids)) for ids in slot_token_ids]
        width = max(map(len, self.slot_token_ids))
        ids = torch.tensor([s + [head.pad_token_id] * (width - len(s)) for s in self.slot_token_ids])
        mask = torch.tensor([[1.0] * len(s) + [0.0] * (width - len(s)) for s in self.slot_token_ids])
        self.register_buffer("slot_ids", ids, persistent=False)
        self.register_buffer("slot_mask", mask, persistent=False)
        hidden = encoder.config.hidden_size
        self.pooler = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh()) if head.own_pooler else None
        self.gru = nn.GRU(hidden, hidden, 1, batch_first=True)
        self.dropout = nn.Dropout(head.dropout)
        self.w_gen = nn.Linear(3 * hidden, 1)
        self.w_gate = nn.Linear(hidden, len(GATES))

    @staticmethod
    def needs_own_pooler(encoder: Any) -> bool:
        return getattr(encoder, "pooler", None) is None

    # ---- forward -------------------------------------------------------------------------------
    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, gating_ids: torch.Tensor | None = None,
                target_ids: torch.Tensor | None = None) -> TrackerOutput:
        """Training (gold `gating_ids` (B, J) and `target_ids` (B, J, L) given): decodes L steps, teacher
        forcing with probability `teacher_forcing` for the whole batch, and returns the loss. Otherwise decodes
        `max_decode` steps greedily."""
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, return_dict=True)
        memory = out.last_hidden_state
        pooled = self.pooler(memory[:, 0]) if self.pooler is not None else out.pooler_output
        train = gating_ids is not None and target_ids is not None
        steps = target_ids.shape[-1] if train and target_ids is not None else self.head_config.max_decode
        teacher = None
        if train and self.training and self.head_config.teacher_forcing > 0:
            if float(torch.rand(())) < self.head_config.teacher_forcing:
                teacher = target_ids
        targets = target_ids if train else None
        if targets is not None and gating_ids is not None and self.head_config.ptr_values_only:
            # the other slots' values become padding, which the loss masks and the decoder skips (point 3)
            targets = targets.masked_fill((gating_ids != GATE_PTR).unsqueeze(-1), self.head_config.pad_token_id)
        with torch.autocast(device_type=memory.device.type, enabled=False):
            gate_logits, tokens, loss = self._decode(input_ids, attention_mask, memory.float(), pooled.float(),
                                                     steps, teacher, targets)
        if train and gating_ids is not None:
            gate_loss = F.cross_entropy(gate_logits.reshape(-1, len(GATES)), gating_ids.reshape(-1))
            loss = (loss if loss is not None else 0.0) + gate_loss
        return TrackerOutput(loss=loss if train else None, gate_logits=gate_logits, tokens=tokens)

    def _decode(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, memory: torch.Tensor,
                pooled: torch.Tensor, steps: int, teacher: torch.Tensor | None,
                targets: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        embed = self.encoder.get_input_embeddings().weight.float()  # (V, D), tied
        batch, _, size = memory.shape
        n_slots = self.slot_ids.shape[0]
        slot_e = (embed[self.slot_ids] * self.slot_mask.unsqueeze(-1)).sum(1)  # (J, D)
        w = slot_e.unsqueeze(0).expand(batch, n_slots, size).reshape(batch * n_slots, 1, size)
        hidden = pooled.unsqueeze(1).expand(batch, n_slots, size).reshape(1, batch * n_slots, size).contiguous()
        pad = ~attention_mask.bool()  # (B, T)
        # same[b, t, s]: input positions t and s hold the same token, so `attn @ same` is the copy probability
        # of the token at each position, the dense scatter's value read back where it can be nonzero
        same = (input_ids.unsqueeze(2) == input_ids.unsqueeze(1)).float()  # (B, T, T)
        cand_ids = input_ids.unsqueeze(1).expand(batch, n_slots, input_ids.shape[1])  # (B, J, T)
        gate_logits = memory.new_zeros(batch, n_slots, len(GATES))
        tokens = []
        nll = memory.new_zeros(())
        count = memory.new_zeros(())
        pad_id = self.head_config.pad_token_id
        for k in range(steps):
            w = self.dropout(w)
            _, hidden = self.gru(w, hidden)  # (1, B*J, D)
            h = hidden.view(batch, n_slots, size)
            scores = torch.einsum("btd,bjd->bjt", memory, h).masked_fill(pad.unsqueeze(1), _MASKED)
            attn = F.softmax(scores, dim=-1)  # (B, J, T)
            context = torch.einsum("bjt,btd->bjd", attn, memory)  # (B, J, D)
            p_gen = torch.sigmoid(self.w_gen(torch.cat([w.view(batch, n_slots, size), h, context], dim=-1)))
            if k == 0:
                gate_logits = self.w_gate(context)
                ptr_rows = (gate_logits.argmax(-1) == GATE_PTR).flatten()
            # The rows (example, slot) whose value is needed at step k. In training, those whose gold value (padded
            # at its end) is not over: a finished row adds nothing to the loss at k or later. In generation, those
            # whose gate is ptr: a prediction reads no other slot's value (`DstTask.recover_state`), and each row
            # decodes on its own (its GRU state, attention and copy read no other row), so the kept rows' tokens
            # are those of decoding every row. The vocabulary distribution, the largest cost, is computed for these
            # rows only; the others' tokens are the pad id.
            if self.decode_all_rows:
                rows = None
            else:
                rows = ptr_rows if targets is None else (targets[:, :, k] != pad_id).flatten()
            log_vocab = F.log_softmax(_take(h, rows) @ embed.T, dim=-1)  # (rows, V): log of the vocabulary dist.
            p_gen_r, attn_r, cand_r = _take(p_gen, rows), _take(attn, rows), _take(cand_ids, rows)
            copy_r = _take(torch.bmm(attn, same), rows)  # the copy probability of each input position's token
            best = torch.full((batch * n_slots,), pad_id, dtype=torch.long, device=memory.device)
            best[rows if rows is not None else slice(None)] = self.argmax_mixed(log_vocab, p_gen_r, attn_r, copy_r,
                                                                                cand_r)
            best = best.view(batch, n_slots)  # finished rows: the pad id
            tokens.append(best)
            if targets is not None:
                gold = targets[:, :, k]
                mask = (_take(gold, rows) != pad_id).float()
                logp = torch.log(self.mixed_at(_take(gold, rows), log_vocab, p_gen_r, attn_r, cand_r).clamp(min=1e-12))
                nll = nll - (logp * mask).sum()
                count = count + mask.sum()
            nxt = teacher[:, :, k] if teacher is not None else best
            w = embed[nxt].reshape(batch * n_slots, 1, size)
        loss = nll / count.clamp(min=1) if targets is not None else None
        return gate_logits, torch.stack(tokens, dim=-1), loss

    @staticmethod
    def mixed_at(token: torch.Tensor, log_vocab: torch.Tensor, p_gen: torch.Tensor, attn: torch.Tensor,
                 cand_ids: torch.Tensor) -> torch.Tensor:
        """`p_final[token]` for one token per row: `p_gen · vocab[token] + (1 − p_gen) · (attention on the input
        positions that hold token)`, with `log_vocab` the log of the vocabulary distribution (..., V), `p_gen`
        (..., 1), `attn` and `cand_ids` (the input ids) (..., T); the leading dimensions are the rows', e.g.
        (B, J) or (rows,)."""
        p_vocab = torch.exp(log_vocab.gather(-1, token.unsqueeze(-1))).squeeze(-1)
        p_copy = (attn * (cand_ids == token.unsqueeze(-1))).sum(-1)
        return p_gen.squeeze(-1) * p_vocab + (1 - p_gen.squeeze(-1)) * p_copy

    @staticmethod
    @torch.no_grad()
    def argmax_mixed(log_vocab: torch.Tensor, p_gen: torch.Tensor, attn: torch.Tensor, copy: torch.Tensor,
                     cand_ids: torch.Tensor) -> torch.Tensor:
        """argmax over the vocabulary of `p_gen · exp(log_vocab) + (1 − p_gen) · copy distribution`, without
        building the (rows, V) mixture; `copy` (..., T) is the copy probability of the token at each input
        position (`attn @ same`, where `same[t, s]` says positions t and s hold the same token). Written by hand
        because no library op does it: a token absent from the input has copy probability 0, so the best of
        those is the most probable word; every other candidate is an input position. The winner is the largest
        of those 1 + T values; equal values go to the lowest token id, as a dense `argmax` would."""
        top = log_vocab.argmax(-1, keepdim=True)  # (..., 1)
        ids = torch.cat([top, cand_ids], dim=-1)  # (..., 1 + T)
        copy = torch.cat([(attn * (cand_ids == top)).sum(-1, keepdim=True), copy], dim=-1)
        value = p_gen * torch.exp(log_vocab.gather(-1, ids)) + (1 - p_gen) * copy
        best = value.max(-1, keepdim=True).values
        return torch.where(value == best, ids, log_vocab.shape[-1]).min(-1).values

    @torch.no_grad()
    def generate(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(gate ids (B, J), value token ids (B, J, max_decode)), greedy, as the baseline's `validation_step`."""
        out = self.forward(input_ids, attention_mask)
        return out.gate_logits.argmax(-1), out.tokens

    # ---- saving and loading --------------------------------------------------------------------
    def save_pretrained(self, save_directory: Path | str, safe_serialization: bool = True) -> None:
        """Writes the layout in the module docstring; safetensors only."""
        if not safe_serialization:
            raise ValueError("StateTracker saves safetensors only")
        from safetensors.torch import save

        out = Path(save_directory)
        io.write_text(out / "config.json", self.encoder.config.to_json_string())
        io.write_json(out / HEAD_FILE, {"format": FORMAT, "version": VERSION, "head": asdict(self.head_config),
                                        "slots": self.slots, "gates": self.gates,
                                        "slot_token_ids": self.slot_token_ids}, indent=2, sort_keys=False)
        state = {k: v.detach().cpu().contiguous() for k, v in self.state_dict().items()}
        io.write_bytes(out / WEIGHTS_FILE, save(state, metadata={"format": "pt", "producer": FORMAT}))

    @classmethod
    def from_pretrained(cls, directory: Path | str) -> StateTracker:
        """Rebuilds the encoder from `config.json` and the head from `tracker.json`, then loads every weight
        strictly from `model.safetensors`."""
        from safetensors.torch import load_file
        from transformers import AutoConfig, AutoModel

        d = Path(directory)
        meta = read_head_file(d, HEAD_FILE, FORMAT, VERSION, "DST")
        head = TrackerConfig(**meta["head"])
        encoder = AutoModel.from_config(AutoConfig.from_pretrained(d), dtype=torch.float32)
        model = cls(encoder, head, meta["slots"], meta["slot_token_ids"])
        model.load_state_dict(load_file(str(d / WEIGHTS_FILE)), strict=True)
        return model
