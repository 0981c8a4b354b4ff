#!/usr/bin/env python3
"""PyTorch + CUDA-graph frame step of Qwen3-TTS 12 Hz: the baseline the megakernel is compared with.

This is the in-process stand-in for "what users run today": a plain, but not naive, PyTorch
implementation of one generation frame for a batch of B sessions, loaded from the same
Hugging Face safetensors checkpoint the megakernel loads, with

  * the whole frame captured as ONE torch.cuda.CUDAGraph per batch size:
    talker decode step -> codec head -> on-device sampling of codebook 0 ->
    15 code-predictor passes (each with its head and on-device sampling) ->
    next talker input (sum of the 16 code embeddings + a text vector);
  * static KV caches ([B, kv_heads, max_len, head_dim] per layer), fused QKV and gate/up
    weights, SDPA attention (torch.nn.functional.scaled_dot_product_attention);
  * optionally (--compile) torch.compile on the two per-layer blocks (attention input:
    RMSNorm + QKV + QK-norm + RoPE; attention output + MLP: o_proj + residual + RMSNorm +
    gate/up + SiLU + down + residual), compiled before capture, so the graph replays
    Inductor's fused kernels.

The math is the model's (kernels/reference/ is the spec): bf16 weights and activations,
RMSNorm computed in f32 and rounded to bf16 before the weight multiply (as in HF), QK-norm
per head before RoPE (rotate_half, theta from config.json), GQA, f32 logits, the talker's
processors (repetition penalty over a [B, hist] history, suppression of the control ids but
EOS, temperature, top-k) and the code predictor's (temperature, top-k), sampling by an
exponential race (argmax of logit - log(Exp(1)), the same distribution as softmax +
multinomial) so nothing syncs with the host.

What is measured, and its simplifications (none changes the work per frame):
  * a FIXED context: every replay writes the new K/V at the same position `--context` and
    attends over positions 0..context (the cache rows before it are filled once by eager
    talker steps on random inputs). A captured graph cannot move its position, so each
    measurement is at one context length; run several --context values for a curve.
  * all B sessions sit at the same position;
  * the repetition-penalty history is a static [B, --history] tensor of random codes; the
    min-new-tokens EOS mask (only the first 2 frames of an utterance) is off;
  * each replay feeds its next-input vector back as the next replay's input (in-graph
    copy), so consecutive replays chain like generation does;
  * the text-track vector is a static [B, hidden] input (the text projection is per text
    token, not per frame, and is not part of the frame step).

Usage (on a CUDA machine; needs torch and safetensors only):
  python3 bench/torch_frame_step.py --model DIR --batch 1 4 16 64 --frames 50 --warmup 10 \
      --context 64 [--compile [--compile-mode default]] [--check] [--json OUT]
  python3 bench/torch_frame_step.py --model DIR --check-only     # graph vs eager, greedy
  python3 bench/torch_frame_step.py --model ../shared/golden/tiny-cv06 --dtype float32 \
      --device cpu --golden ../shared/golden/tiny-cv06/cases/*.safetensors   # math vs goldens
Compile time on an H100 (torch 2.11), per batch size: --compile-mode default ~15 s;
max-autotune-no-cudagraphs (the default mode of --compile) ~20 s at B=1, ~70 s at B=64.
DIR is a Hugging Face Qwen3-TTS 12 Hz checkpoint directory (config.json, model.safetensors,
optional generation_config.json), e.g. one written by `megatts make-checkpoint`. Only the
talker and code-predictor tensors are read (not the text embedding or text projection).
"""

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from safetensors import safe_open

# ---------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StackDims:
    """One transformer stack (talker or code predictor)."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    eps: float
    rope_theta: float

    @property
    def q_width(self):
        return self.heads * self.head_dim

    @property
    def kv_width(self):
        return self.kv_heads * self.head_dim


@dataclass(frozen=True)
class ModelDims:
    talker: StackDims
    cp: StackDims
    codec_vocab: int      # talker vocabulary (codec head / codec embedding rows), 3072
    cp_vocab: int         # code-predictor vocabulary (audio codes), 2048
    num_code_groups: int  # codebooks per frame, 16
    eos: int              # codec EOS id, 2150

    @property
    def cp_steps(self):
        return self.num_code_groups - 1


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 0.9
    top_k: int = 50
    repetition_penalty: float = 1.05
    cp_temperature: float = 0.9
    cp_top_k: int = 50


def _stack_dims(c, where):
    def get(key):
        if key not in c:
            raise SystemExit(f"config.json: {where}{key} is missing")
        return c[key]

    heads = int(get("num_attention_heads"))
    d = StackDims(
        layers=int(get("num_hidden_layers")),
        hidden=int(get("hidden_size")),
        intermediate=int(get("intermediate_size")),
        heads=heads,
        kv_heads=int(get("num_key_value_heads")),
        head_dim=int(c.get("head_dim") or int(get("hidden_size")) // heads),
        eps=float(get("rms_norm_eps")),
        rope_theta=float(get("rope_theta")),
    )
    assert d.heads % d.kv_heads == 0, f"{where}num_attention_heads must be a multiple of num_key_value_heads"
    assert d.head_dim % 2 == 0, f"{where}head_dim must be even (RoPE pairs)"
    return d


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    tc = cfg["talker_config"]
    pc = tc["code_predictor_config"]
    dims = ModelDims(
        talker=_stack_dims(tc, "talker_config."),
        cp=_stack_dims(pc, "talker_config.code_predictor_config."),
        codec_vocab=int(tc["vocab_size"]),
        cp_vocab=int(pc["vocab_size"]),
        num_code_groups=int(tc["num_code_groups"]),
        eos=int(tc["codec_eos_token_id"]),
    )
    assert int(pc["num_code_groups"]) == dims.num_code_groups, "talker and code predictor num_code_groups differ"
    assert dims.cp_vocab <= dims.eos < dims.codec_vocab, "codec EOS must be a control id"
    return dims


def read_sampling(model_dir):
    """generation_config.json when present (the published file: 0.9 / 50 / 1.05, 0.9 / 50)."""
    path = os.path.join(model_dir, "generation_config.json")
    if not os.path.exists(path):
        return SamplingParams()
    with open(path) as f:
        g = json.load(f)
    d = SamplingParams()
    return SamplingParams(
        temperature=float(g.get("temperature", d.temperature)),
        top_k=int(g.get("top_k", d.top_k)),
        repetition_penalty=float(g.get("repetition_penalty", d.repetition_penalty)),
        cp_temperature=float(g.get("subtalker_temperature", d.cp_temperature)),
        cp_top_k=int(g.get("subtalker_top_k", d.cp_top_k)),
    )


# ---------------------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------------------


class LayerWeights:
    """One decoder layer with fused projections (all bf16)."""

    def __init__(self, in_norm, qkv, qk_norm, o, post_norm, gate_up, down):
        self.in_norm = in_norm      # [hidden]
        self.qkv = qkv              # [q_width + 2 * kv_width, hidden]: q_proj; k_proj; v_proj
        self.qk_norm = qk_norm      # [heads + kv_heads, head_dim]: q_norm per q head, k_norm per kv head
        self.o = o                  # [hidden, q_width]
        self.post_norm = post_norm  # [hidden]
        self.gate_up = gate_up      # [2 * intermediate, hidden]: gate_proj; up_proj
        self.down = down            # [hidden, intermediate]

    def tensors(self):
        return [self.in_norm, self.qkv, self.qk_norm, self.o, self.post_norm, self.gate_up, self.down]


class Weights:
    def __init__(self, dtype):
        self.dtype = dtype           # bf16 (the model's); f32 only for the golden check
        self.talker_layers = []
        self.talker_norm = None
        self.codec_embedding = None  # [codec_vocab, H]
        self.codec_head = None       # [codec_vocab, H]
        self.cp_layers = []
        self.cp_norm = None
        self.cp_embedding = None     # [15, cp_vocab, H]   table j embeds codebook j+1
        self.cp_heads = None         # [15, cp_vocab, Hc]  head j predicts codebook j+1
        self.proj_w = None           # small_to_mtp_projection [Hc, H] (1.7B), else None
        self.proj_b = None


class CheckpointReader:
    """Reads named tensors from model.safetensors (or a sharded index) and checks shapes."""

    def __init__(self, model_dir, dtype=torch.bfloat16):
        self.dtype = dtype
        index = os.path.join(model_dir, "model.safetensors.index.json")
        if os.path.exists(index):
            with open(index) as f:
                weight_map = json.load(f)["weight_map"]
            files = sorted(set(weight_map.values()))
        else:
            files = ["model.safetensors"]
        self.handles = [safe_open(os.path.join(model_dir, f), framework="pt", device="cpu") for f in files]
        self.where = {}
        for h in self.handles:
            for name in h.keys():
                self.where[name] = h

    def has(self, name):
        return name in self.where

    def get(self, name, shape, device):
        if name not in self.where:
            raise SystemExit(f"checkpoint: tensor {name} is missing")
        t = self.where[name].get_tensor(name)
        if tuple(t.shape) != tuple(shape):
            raise SystemExit(f"checkpoint: {name} has shape {list(t.shape)}, config.json implies {list(shape)}")
        return t.to(device=device, dtype=self.dtype)


def _load_layer(r, prefix, d, device):
    def get(suffix, shape):
        return r.get(prefix + suffix, shape, device)

    q = get("self_attn.q_proj.weight", (d.q_width, d.hidden))
    k = get("self_attn.k_proj.weight", (d.kv_width, d.hidden))
    v = get("self_attn.v_proj.weight", (d.kv_width, d.hidden))
    q_norm = get("self_attn.q_norm.weight", (d.head_dim,))
    k_norm = get("self_attn.k_norm.weight", (d.head_dim,))
    gate = get("mlp.gate_proj.weight", (d.intermediate, d.hidden))
    up = get("mlp.up_proj.weight", (d.intermediate, d.hidden))
    return LayerWeights(
        in_norm=get("input_layernorm.weight", (d.hidden,)),
        qkv=torch.cat([q, k, v], dim=0).contiguous(),
        qk_norm=torch.cat([q_norm.expand(d.heads, -1), k_norm.expand(d.kv_heads, -1)], dim=0).contiguous(),
        o=get("self_attn.o_proj.weight", (d.hidden, d.q_width)),
        post_norm=get("post_attention_layernorm.weight", (d.hidden,)),
        gate_up=torch.cat([gate, up], dim=0).contiguous(),
        down=get("mlp.down_proj.weight", (d.hidden, d.intermediate)),
    )


def load_weights(model_dir, dims, device, dtype=torch.bfloat16):
    """Builds the weights (names as in pipeline/model/tensor_names.cpp), checking every shape."""
    r = CheckpointReader(model_dir, dtype)
    t, c = dims.talker, dims.cp
    w = Weights(dtype)
    w.talker_layers = [_load_layer(r, f"talker.model.layers.{i}.", t, device) for i in range(t.layers)]
    w.talker_norm = r.get("talker.model.norm.weight", (t.hidden,), device)
    w.codec_embedding = r.get("talker.model.codec_embedding.weight", (dims.codec_vocab, t.hidden), device)
    w.codec_head = r.get("talker.codec_head.weight", (dims.codec_vocab, t.hidden), device)
    w.cp_layers = [_load_layer(r, f"talker.code_predictor.model.layers.{i}.", c, device) for i in range(c.layers)]
    w.cp_norm = r.get("talker.code_predictor.model.norm.weight", (c.hidden,), device)
    w.cp_embedding = torch.stack([
        r.get(f"talker.code_predictor.model.codec_embedding.{j}.weight", (dims.cp_vocab, t.hidden), device)
        for j in range(dims.cp_steps)])
    w.cp_heads = torch.stack([
        r.get(f"talker.code_predictor.lm_head.{j}.weight", (dims.cp_vocab, c.hidden), device)
        for j in range(dims.cp_steps)])
    proj = "talker.code_predictor.small_to_mtp_projection."
    if r.has(proj + "weight"):
        w.proj_w = r.get(proj + "weight", (c.hidden, t.hidden), device)
        w.proj_b = r.get(proj + "bias", (c.hidden,), device)
    elif t.hidden != c.hidden:
        raise SystemExit("checkpoint: talker and code-predictor widths differ but small_to_mtp_projection is missing")
    return w


def _nbytes(tensors):
    return sum(x.numel() * x.element_size() for x in tensors)


def step_bytes(w, dims, batch, context):
    """Bytes one frame step must move at least: weights once per step (shared by the batch) and,
    per session, the gathered embedding rows and the KV-cache traffic."""
    t, c = dims.talker, dims.cp
    talker = _nbytes([x for lw in w.talker_layers for x in lw.tensors()] + [w.talker_norm, w.codec_head])
    cp_body = _nbytes([x for lw in w.cp_layers for x in lw.tensors()] + [w.cp_norm])
    if w.proj_w is not None:
        cp_body += _nbytes([w.proj_w, w.proj_b])
    weights = talker + dims.cp_steps * cp_body + _nbytes([w.cp_heads])  # each pass reads one head
    el = w.codec_head.element_size()
    cp_keys = 2 + sum(j + 2 for j in range(1, dims.cp_steps))        # keys attended over the 15 passes
    per_session = (
        t.layers * 2 * el * t.kv_width * (context + 1)               # talker K and V read (incl. the new row)
        + c.layers * 2 * el * c.kv_width * cp_keys                   # code-predictor K and V read
        + dims.num_code_groups * t.hidden * el                       # 16 embedding rows gathered
    )
    return {"weights": weights, "talker_weights": talker, "cp_weights": weights - talker,
            "per_session": per_session, "total": weights + batch * per_session}


# ---------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------

_HAS_RMS_NORM = hasattr(F, "rms_norm")


def rms_norm(x, weight, eps):
    """HF Qwen3 RMSNorm: normalize in f32, round to the activation dtype, then multiply by the weight."""
    if _HAS_RMS_NORM:  # fused; computes in f32 for bf16 input; no weight, so the bf16 rounding precedes it
        y = F.rms_norm(x, (x.shape[-1],), None, eps)
    else:
        xf = x.float()
        y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    return weight * y


def rope_table(theta, head_dim, positions, device, dtype):
    """cos/sin [positions, head_dim], computed in f32 and cast to the activation dtype as HF does."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
    freqs = torch.arange(positions, dtype=torch.float32)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos().to(device, dtype), emb.sin().to(device, dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def apply_rope(x, cos, sin):
    """x [B, T, heads, head_dim]; cos/sin [T, head_dim]."""
    cos = cos[None, :, None, :]
    sin = sin[None, :, None, :]
    return x * cos + rotate_half(x) * sin


def attention(q, k, v):
    """Causal GQA attention of T new positions that are the LAST T of the cached keys.

    q [B, T, heads, hd]; k, v [B, kv_heads, L, hd] (cache slices, L >= T). Returns [B, T, heads*hd].
    Query head h uses kv head h // (heads / kv_heads).
    """
    b, t, nh, hd = q.shape
    nkv, length = k.shape[1], k.shape[2]
    g = nh // nkv
    if t == 1:
        # Decode: every query sees all L keys, so the group's queries can be folded into the
        # query-length axis of their kv head: one SDPA over [B, kv_heads, group, hd], no repeat.
        out = F.scaled_dot_product_attention(q.reshape(b, nkv, g, hd), k, v)
        return out.reshape(b, 1, nh * hd)
    assert t == length, "a multi-position pass must start at position 0 (code-predictor pass 0)"
    k = k.repeat_interleave(g, dim=1)
    v = v.repeat_interleave(g, dim=1)
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k, v, is_causal=True)
    return out.transpose(1, 2).reshape(b, t, nh * hd)


def attn_in(x, in_norm, qkv_w, qk_norm_w, cos, sin, heads, kv_heads, head_dim, eps):
    """Pre-attention block: RMSNorm, fused QKV, per-head QK-norm (q and k heads in one op), RoPE."""
    b, t, _ = x.shape
    h = rms_norm(x, in_norm, eps)
    qkv = F.linear(h, qkv_w).view(b, t, heads + 2 * kv_heads, head_dim)
    qk = apply_rope(rms_norm(qkv[:, :, :heads + kv_heads], qk_norm_w, eps), cos, sin)
    q, k = qk.split([heads, kv_heads], dim=2)
    return q, k, qkv[:, :, heads + kv_heads:]


def attn_out_mlp(x, a, o_w, post_norm, gate_up_w, down_w, eps):
    """Post-attention block: o_proj + residual, RMSNorm, fused gate/up, SiLU * up, down + residual."""
    x = x + F.linear(a, o_w)
    gate, up = F.linear(rms_norm(x, post_norm, eps), gate_up_w).chunk(2, dim=-1)
    return x + F.linear(F.silu(gate) * up, down_w)


class Blocks:
    """The per-layer block functions a step uses: plain, or torch.compile'd."""

    def __init__(self, compile_mode=None):
        self.compiled = compile_mode is not None
        if not self.compiled:
            self.attn_in, self.attn_out_mlp = attn_in, attn_out_mlp
            return
        import torch._dynamo
        import torch._inductor.config

        cfg = torch._dynamo.config
        # One specialization per (stack, batch size, T): raise the per-function limit.
        for name in ("recompile_limit", "cache_size_limit"):
            if hasattr(cfg, name):
                setattr(cfg, name, max(getattr(cfg, name), 64))
        ind = torch._inductor.config
        for name, value in (("autotune_num_choices_displayed", 0), ("max_autotune_report_choices_stats", False)):
            if hasattr(ind, name):  # keep max-autotune's per-GEMM tables off the console
                setattr(ind, name, value)
        opts = dict(mode=compile_mode, dynamic=False, fullgraph=True)
        self.attn_in = torch.compile(attn_in, **opts)
        self.attn_out_mlp = torch.compile(attn_out_mlp, **opts)


def decoder_layer(x, lw, k_cache, v_cache, pos, cos, sin, d, blocks):
    """One Qwen3 decoder layer over x [B, T, hidden] at positions pos..pos+T-1 (Python ints:
    static inside a graph). Writes K/V into the static cache [B, kv_heads, max_len, hd]."""
    t = x.shape[1]
    q, k, v = blocks.attn_in(x, lw.in_norm, lw.qkv, lw.qk_norm, cos, sin, d.heads, d.kv_heads, d.head_dim, d.eps)
    k_cache[:, :, pos:pos + t].copy_(k.transpose(1, 2))
    v_cache[:, :, pos:pos + t].copy_(v.transpose(1, 2))
    a = attention(q, k_cache[:, :, :pos + t], v_cache[:, :, :pos + t])
    return blocks.attn_out_mlp(x, a, lw.o, lw.post_norm, lw.gate_up, lw.down, d.eps)


# ---------------------------------------------------------------------------------------
# Sampling (on device, no host sync)
# ---------------------------------------------------------------------------------------


def talker_processors(logits, history, penalty, suppress, eos_mask=None):
    """HF order: repetition penalty over the history ids (each id once), [min-new-tokens EOS mask],
    suppression of the control ids but EOS. logits [B, V] f32, history [B, n] int64."""
    if history is not None and history.shape[1] > 0 and penalty != 1.0:
        seen = logits.gather(1, history)
        logits = logits.scatter(1, history, torch.where(seen < 0, seen * penalty, seen / penalty))
    logits = logits + suppress
    if eos_mask is not None:
        logits = logits + eos_mask
    return logits


def sample_top_k(logits, temperature, top_k, greedy):
    """Temperature + top-k + multinomial, as an exponential race: argmax_i(l_i - log E_i) with
    E_i ~ Exp(1) picks i with probability softmax(l)_i. Greedy: first arg-max."""
    if greedy:
        return logits.argmax(dim=-1)
    vals, idx = torch.topk(logits / temperature, top_k, dim=-1)
    race = vals - torch.empty_like(vals).exponential_().log()
    return idx.gather(-1, race.argmax(dim=-1, keepdim=True)).squeeze(-1)


# ---------------------------------------------------------------------------------------
# Static state of one batch
# ---------------------------------------------------------------------------------------


class FrameState:
    """Static buffers of a batch of B sessions: KV caches, RoPE tables, inputs, outputs."""

    def __init__(self, w, dims, batch, talker_len, history_len, device, seed=0):
        t, c = dims.talker, dims.cp
        bf16 = w.dtype
        gen = torch.Generator(device="cpu").manual_seed(seed)
        self.batch = batch
        self.tk_k = torch.zeros(t.layers, batch, t.kv_heads, talker_len, t.head_dim, dtype=bf16, device=device)
        self.tk_v = torch.zeros_like(self.tk_k)
        self.cp_k = torch.zeros(c.layers, batch, c.kv_heads, dims.num_code_groups, c.head_dim, dtype=bf16,
                                device=device)
        self.cp_v = torch.zeros_like(self.cp_k)
        self.tk_cos, self.tk_sin = rope_table(t.rope_theta, t.head_dim, talker_len, device, bf16)
        self.cp_cos, self.cp_sin = rope_table(c.rope_theta, c.head_dim, dims.num_code_groups, device, bf16)

        # Suppression mask: -inf on the control ids (cp_vocab..codec_vocab-1) except EOS.
        self.suppress = torch.zeros(dims.codec_vocab, dtype=torch.float32)
        self.suppress[dims.cp_vocab:] = -math.inf
        self.suppress[dims.eos] = 0.0
        self.suppress = self.suppress.to(device)

        # Inputs: a frame-like first input (16 code embeddings + text vector), text vector, history.
        def rand_codes(*shape):
            return torch.randint(0, dims.cp_vocab, shape, generator=gen).to(device)

        emb_std = w.codec_embedding[:dims.cp_vocab].float().std().item()
        self.text_vec = (torch.randn(batch, t.hidden, generator=gen) * emb_std).to(device, bf16)
        self.history = rand_codes(batch, max(history_len, 0))
        self.x_in = frame_input(w, rand_codes(batch, dims.num_code_groups), self.text_vec)

        # Outputs.
        self.hidden = torch.zeros(batch, t.hidden, dtype=bf16, device=device)
        self.talker_logits = torch.zeros(batch, dims.codec_vocab, dtype=torch.float32, device=device)
        self.codes = torch.zeros(batch, dims.num_code_groups, dtype=torch.int64, device=device)
        self.cp_logits = torch.zeros(batch, dims.cp_steps, dims.cp_vocab, dtype=torch.float32, device=device)
        self.x_next = torch.zeros_like(self.x_in)
        self._rand_codes = rand_codes

    def fill_context(self, w, dims, context, blocks):
        """Fills talker cache rows 0..context-1 with eager talker steps on random frame inputs."""
        for p in range(context):
            x = frame_input(w, self._rand_codes(self.batch, dims.num_code_groups), self.text_vec)
            talker_step(w, dims, self, x, p, blocks)


# ---------------------------------------------------------------------------------------
# The frame step
# ---------------------------------------------------------------------------------------


def talker_step(w, dims, st, x_in, pos, blocks):
    """One new talker position for every session. Returns the post-final-norm hidden [B, H]
    and the raw codec-head logits [B, codec_vocab] (f32)."""
    d = dims.talker
    x = x_in.unsqueeze(1)
    cos, sin = st.tk_cos[pos:pos + 1], st.tk_sin[pos:pos + 1]
    for i, lw in enumerate(w.talker_layers):
        x = decoder_layer(x, lw, st.tk_k[i], st.tk_v[i], pos, cos, sin, d, blocks)
    h = rms_norm(x[:, 0], w.talker_norm, d.eps)
    return h, F.linear(h, w.codec_head).float()


def cp_forward(w, dims, st, x, pos, blocks):
    """Code-predictor positions pos..pos+T-1 for x [B, T, H]; returns the final-norm hidden of
    the last position [B, Hc]."""
    d = dims.cp
    if w.proj_w is not None:
        x = F.linear(x, w.proj_w, w.proj_b)
    t = x.shape[1]
    cos, sin = st.cp_cos[pos:pos + t], st.cp_sin[pos:pos + t]
    for i, lw in enumerate(w.cp_layers):
        x = decoder_layer(x, lw, st.cp_k[i], st.cp_v[i], pos, cos, sin, d, blocks)
    return rms_norm(x[:, -1], w.cp_norm, d.eps)


def code_predictor_frame(w, dims, st, h, c0, sp, blocks, greedy, record, forced=None):
    """15 passes with a fresh 16-position cache. Pass 0 runs positions {0, 1} on
    [h, talker codec_embedding(c0)]; pass j >= 1 runs position j+1 on cp_embedding[j-1](c_j).
    Head j gives c_{j+1}. `forced` [B, 15] replaces the sampled codes (teacher forcing).
    Returns codes [B, 16] and their 16 embeddings [B, 16, H]."""
    e = F.embedding(c0, w.codec_embedding)
    codes, embeds = [c0], [e]
    x = torch.stack([h, e], dim=1)
    for j in range(dims.cp_steps):
        pos = 0 if j == 0 else j + 1
        logits = F.linear(cp_forward(w, dims, st, x, pos, blocks), w.cp_heads[j]).float()
        if record:
            st.cp_logits[:, j].copy_(logits)
        c = forced[:, j] if forced is not None else sample_top_k(logits, sp.cp_temperature, sp.cp_top_k, greedy)
        e = F.embedding(c, w.cp_embedding[j])
        codes.append(c)
        embeds.append(e)
        x = e.unsqueeze(1)
    return torch.stack(codes, dim=1), torch.stack(embeds, dim=1)


def frame_input(w, codes, text_vec):
    """Next talker input: C(c0) + sum_j cp_embedding[j](c_{j+1}) + text vector, summed in bf16
    like HF's codec_hiddens.sum(1)."""
    embeds = [F.embedding(codes[:, 0], w.codec_embedding)]
    embeds += [F.embedding(codes[:, j + 1], w.cp_embedding[j]) for j in range(codes.shape[1] - 1)]
    return torch.stack(embeds, dim=1).sum(dim=1) + text_vec


def frame_step(w, dims, st, pos, sp, blocks, greedy=False, record=False, chain=True):
    """The whole frame for B sessions: talker step at `pos`, codebook-0 sampling, 15 code-predictor
    passes, next input. Reads st.x_in / st.text_vec / st.history; writes st.codes, st.x_next
    (and st.x_in when chaining; st.hidden, st.talker_logits, st.cp_logits when recording)."""
    h, logits = talker_step(w, dims, st, st.x_in, pos, blocks)
    c0 = sample_top_k(talker_processors(logits, st.history, sp.repetition_penalty, st.suppress),
                      sp.temperature, sp.top_k, greedy)
    codes, embeds = code_predictor_frame(w, dims, st, h, c0, sp, blocks, greedy, record)
    x_next = embeds.sum(dim=1) + st.text_vec
    if record:
        st.hidden.copy_(h)
        st.talker_logits.copy_(logits)
    st.codes.copy_(codes)
    st.x_next.copy_(x_next)
    if chain:
        st.x_in.copy_(x_next)


def capture_frame(w, dims, st, pos, sp, blocks, greedy=False, record=False, chain=True):
    """Warms up (compiles, autotunes, picks kernels) on a side stream, then captures one frame step
    as one CUDA graph. Restores st.x_in afterwards."""
    x0 = st.x_in.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            frame_step(w, dims, st, pos, sp, blocks, greedy, record, chain)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        frame_step(w, dims, st, pos, sp, blocks, greedy, record, chain)
    torch.cuda.synchronize()
    st.x_in.copy_(x0)
    return graph


# ---------------------------------------------------------------------------------------
# Measurements
# ---------------------------------------------------------------------------------------


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _percentile(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))]


def copy_bandwidth(device, mib, reps=20):
    """Device-to-device copy bandwidth, (bytes read + bytes written) / time, median of `reps`."""
    n = mib << 20
    src = torch.empty(n, dtype=torch.uint8, device=device).fill_(1)
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    del src, dst
    torch.cuda.empty_cache()
    return 2.0 * n / _median(times)


def time_graph(graph, warmup, frames):
    """Per-replay times in ms, each bracketed by CUDA events (replays back to back)."""
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(frames)]
    t0 = time.perf_counter()
    for a, b in ev:
        a.record()
        graph.replay()
        b.record()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return [a.elapsed_time(b) for a, b in ev], wall * 1e3 / frames


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def rel_err(x, ref):
    """max|x - ref| / max|ref| over the finite entries of ref (the golden README's measure)."""
    x, ref = x.float(), ref.float()
    fin = torch.isfinite(ref)
    if not bool(fin.any()):
        return 0.0
    scale = ref[fin].abs().max().clamp_min(1e-30)
    return float((x[fin] - ref[fin]).abs().max() / scale)


def check_primitives(device):
    """The building blocks against their plain f32 definitions."""
    g = torch.Generator(device="cpu").manual_seed(1)
    ok = True
    x = torch.randn(4, 3, 256, generator=g).to(device, torch.bfloat16)
    wt = (1 + 0.1 * torch.randn(256, generator=g)).to(device, torch.bfloat16)
    xf = x.float()
    ref = wt * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)).to(torch.bfloat16)
    e = rel_err(rms_norm(x, wt, 1e-6), ref)
    print(f"  rms_norm vs HF formula: rel err {e:.2e}")
    ok &= e <= 1e-2
    # attention, decode and pass-0 forms, vs an f32 softmax over repeated kv heads
    for t, length in ((1, 37), (2, 2)):
        q = torch.randn(3, t, 16, 128, generator=g).to(device, torch.bfloat16)
        k = torch.randn(3, 8, length, 128, generator=g).to(device, torch.bfloat16)
        v = torch.randn(3, 8, length, 128, generator=g).to(device, torch.bfloat16)
        kr, vr = k.float().repeat_interleave(2, 1), v.float().repeat_interleave(2, 1)
        s = torch.einsum("bthd,bhld->bhtl", q.float(), kr) / math.sqrt(128)
        qpos = torch.arange(length - t, length, device=device)[:, None]
        s = s.masked_fill(torch.arange(length, device=device)[None, :] > qpos, -math.inf)
        ref = torch.einsum("bhtl,bhld->bthd", s.softmax(-1), vr).reshape(3, t, -1)
        e = rel_err(attention(q, k, v), ref)
        print(f"  attention T={t} L={length} vs f32 softmax: rel err {e:.2e}")
        ok &= e <= 2e-2
    return ok


def _compare(got, ref, dims):
    """Errors of one greedy frame against another. Code-predictor logits are compared up to and
    including the first pass whose code differs (its inputs were still equal); the next input only
    for sessions whose 16 codes all agree."""
    same = got["codes"] == ref["codes"]
    errs = {"hidden": rel_err(got["hidden"], ref["hidden"]),
            "talker_logits": rel_err(got["talker_logits"], ref["talker_logits"]),
            "cp_logits": 0.0, "next_input": 0.0}
    for b in range(same.shape[0]):
        row = same[b].tolist()
        n = row.index(False) if False in row else len(row)  # codes 0..n-1 agree
        if n >= 1:
            upto = min(n, dims.cp_steps)
            errs["cp_logits"] = max(errs["cp_logits"], rel_err(got["cp_logits"][b, :upto], ref["cp_logits"][b, :upto]))
    full = same.all(1)
    if bool(full.any()):
        errs["next_input"] = rel_err(got["x_next"][full], ref["x_next"][full])
    return errs, float(same.float().mean())


def check_graph(w, dims, batch, context, history_len, sp, blocks, device, seed):
    """Greedy, same inputs and cache: one eager step (no graph) with the same blocks against the
    captured step (they must agree to rounding, codes exactly); with --compile also the compiled
    eager step against the plain one (bf16 rounding differences only, so a loose tolerance;
    codes may flip on near-ties and are reported, not required)."""
    st = FrameState(w, dims, batch, context + 1, history_len, device, seed)
    st.fill_context(w, dims, context, Blocks())
    t0 = time.perf_counter()
    graph = capture_frame(w, dims, st, context, sp, blocks, greedy=True, record=True)
    capture_s = time.perf_counter() - t0
    x0 = st.x_in.clone()
    keys = ("hidden", "talker_logits", "codes", "cp_logits", "x_next")

    def outputs():
        torch.cuda.synchronize()
        return {k: getattr(st, k).clone() for k in keys}

    def eager(bl):
        st.x_in.copy_(x0)
        frame_step(w, dims, st, context, sp, bl, greedy=True, record=True)
        return outputs()

    ref = eager(blocks)
    st.x_in.copy_(x0)
    graph.replay()
    got = outputs()
    del graph

    # Shapes and ranges against the config.
    assert got["codes"].shape == (batch, dims.num_code_groups)
    assert got["x_next"].shape == (batch, dims.talker.hidden)
    assert got["talker_logits"].shape == (batch, dims.codec_vocab)
    assert got["cp_logits"].shape == (batch, dims.cp_steps, dims.cp_vocab)
    assert bool(((got["codes"] >= 0) & (got["codes"] < dims.cp_vocab)).all())

    errs, agree = _compare(got, ref, dims)
    ok = all(v <= 1e-3 for v in errs.values()) and agree == 1.0
    print(f"  B={batch} graph vs eager: " + ", ".join(f"{k} {v:.1e}" for k, v in errs.items())
          + f", codes equal {agree * 100:.1f}% -> {'ok' if ok else 'MISMATCH'} (tol 1e-3, codes exact; "
          f"capture {capture_s:.1f} s)")
    if blocks.compiled:
        errs, agree = _compare(ref, eager(Blocks()), dims)
        ok_c = errs["hidden"] <= 0.1 and errs["talker_logits"] <= 0.1
        print(f"  B={batch} compiled vs plain: hidden {errs['hidden']:.1e}, talker logits "
              f"{errs['talker_logits']:.1e}, codes equal {agree * 100:.1f}% (bf16 rounding; near-ties flip codes) "
              f"-> {'ok' if ok_c else 'MISMATCH'} (tol 0.1)")
        ok = ok and ok_c
    return ok


def check_golden(w, dims, case_path, sp, device):
    """Teacher-forced comparison with a golden case (shared/golden/<ckpt>/cases/*.safetensors):
    talker hidden and logits of every step, processed logits, code-predictor logits of frames 0
    and 1, frame input embeddings. Tolerance (golden README's measure): 1e-4 with f32 weights and
    activations (--dtype float32: the math must then match the f32 goldens), 3e-2 in bf16."""
    g = {}
    with safe_open(case_path, framework="pt", device="cpu") as f:
        for k in f.keys():
            g[k] = f.get_tensor(k)
    bf16 = w.dtype
    tol = 1e-4 if bf16 == torch.float32 else 3e-2
    blocks = Blocks()
    prefill = g["prefill_embeds"].to(device, bf16)
    frames_in = g["frame_input_embeds"].to(device, bf16)
    hidden_ref, raw_ref, proc_ref = g["talker_hidden"], g["talker_logits_raw"], g["talker_logits_processed"]
    c0_ref, codes_ref = g["c0"].long(), g["codes"].long()
    n_prompt, n_steps = prefill.shape[0], hidden_ref.shape[0]
    assert prefill.shape[1] == dims.talker.hidden, "golden case does not match this checkpoint"
    st = FrameState(w, dims, 1, n_prompt + n_steps, 0, device)
    errs = {"hidden": 0.0, "logits_raw": 0.0, "logits_processed": 0.0, "cp_logits": 0.0, "frame_input": 0.0}
    argmax_equal = 0
    eos_mask = torch.zeros(dims.codec_vocab, device=device)
    eos_mask[dims.eos] = -math.inf

    h = logits = None
    for p in range(n_prompt):
        h, logits = talker_step(w, dims, st, prefill[p:p + 1], p, blocks)
    for s in range(n_steps):
        if s > 0:
            h, logits = talker_step(w, dims, st, frames_in[s - 1:s], n_prompt + s - 1, blocks)
        errs["hidden"] = max(errs["hidden"], rel_err(h[0].cpu(), hidden_ref[s]))
        errs["logits_raw"] = max(errs["logits_raw"], rel_err(logits[0].cpu(), raw_ref[s]))
        hist = c0_ref[:s].to(device)[None, :]
        proc = talker_processors(logits, hist, sp.repetition_penalty, st.suppress, eos_mask if s < 2 else None)
        proc = proc[0].cpu()
        if not torch.equal(torch.isfinite(proc), torch.isfinite(proc_ref[s])):
            errs["logits_processed"] = math.inf
        errs["logits_processed"] = max(errs["logits_processed"], rel_err(proc, proc_ref[s]))
        argmax_equal += int(int(proc.argmax()) == int(c0_ref[s]))

    for f in (0, 1):
        key = f"cp_logits_f{f}"
        if key not in g or f >= codes_ref.shape[0]:
            continue
        hf = hidden_ref[f:f + 1].to(device, bf16)
        codes = codes_ref[f:f + 1].to(device)
        code_predictor_frame(w, dims, st, hf, codes[:, 0], sp, blocks, greedy=True, record=True,
                             forced=codes[:, 1:])
        errs["cp_logits"] = max(errs["cp_logits"], rel_err(st.cp_logits[0].cpu(), g[key]))

    trailing, pad = g["trailing_text_embeds"], g["tts_pad_embed"]
    for t in range(codes_ref.shape[0]):
        text = (trailing[t] if t < trailing.shape[0] else pad).to(device, bf16)[None, :]
        x = frame_input(w, codes_ref[t:t + 1].to(device), text)
        errs["frame_input"] = max(errs["frame_input"], rel_err(x[0].cpu(), frames_in[t].cpu()))

    ok = all(v <= tol for v in errs.values())
    print(f"  {os.path.basename(case_path)}: " + ", ".join(f"{k} {v:.1e}" for k, v in errs.items())
          + f", argmax = golden c0 in {argmax_equal}/{n_steps} steps -> {'ok' if ok else 'MISMATCH'} (tol {tol:g})")
    return ok


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="Hugging Face Qwen3-TTS 12 Hz checkpoint directory")
    p.add_argument("--batch", type=int, nargs="+", default=[1, 4, 16, 64], help="batch sizes (sessions)")
    p.add_argument("--frames", type=int, default=50, help="timed replays per batch size")
    p.add_argument("--warmup", type=int, default=10, help="untimed replays before timing")
    p.add_argument("--context", type=int, default=64,
                   help="talker context: the new position attends over positions 0..context (fixed per graph)")
    p.add_argument("--history", type=int, default=None,
                   help="repetition-penalty history length (default: --context)")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the per-layer blocks before capture (15-70 s per batch size)")
    p.add_argument("--compile-mode", default="max-autotune-no-cudagraphs",
                   help="torch.compile mode with --compile (e.g. 'default' compiles much faster)")
    p.add_argument("--check", action="store_true", help="eager-vs-graph greedy check per batch size, then time")
    p.add_argument("--check-only", action="store_true", help="the check alone, no timing")
    p.add_argument("--golden", nargs="+", metavar="CASE",
                   help="teacher-forced comparison with golden case files (the matching tiny checkpoint as "
                        "--model), then exit; runs on --device cpu too")
    p.add_argument("--device", default="cuda")
    p.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16",
                   help="weights and activations; float32 only with --golden (exact-math check)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--copy-mib", type=int, default=1024, help="buffer size of the copy-bandwidth measurement")
    p.add_argument("--json", metavar="OUT", help="write the results as JSON")
    a = p.parse_args(argv)
    if a.history is None:
        a.history = a.context
    if a.dtype != "bfloat16" and not a.golden:
        p.error("--dtype float32 is for --golden only; the frame step is timed in bf16")
    if a.context < 0 or a.frames < 1 or a.warmup < 0 or min(a.batch) < 1:
        p.error("--context >= 0, --frames >= 1, --warmup >= 0, --batch >= 1")
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    dims = read_config(a.model)
    sp = read_sampling(a.model)
    t0 = time.perf_counter()
    w = load_weights(a.model, dims, device, getattr(torch, a.dtype))
    print(f"model {a.model}: talker {dims.talker.layers}x{dims.talker.hidden} (heads {dims.talker.heads}/"
          f"{dims.talker.kv_heads}x{dims.talker.head_dim}, mlp {dims.talker.intermediate}), code predictor "
          f"{dims.cp.layers}x{dims.cp.hidden}, projection {'yes' if w.proj_w is not None else 'no'}; "
          f"loaded in {time.perf_counter() - t0:.1f} s")
    print(f"sampling: T {sp.temperature} top-k {sp.top_k} rep {sp.repetition_penalty}; "
          f"code predictor T {sp.cp_temperature} top-k {sp.cp_top_k}")

    if a.golden:
        ok = all([check_golden(w, dims, path, sp, device) for path in a.golden])
        print("golden:", "ok" if ok else "FAILED")
        return 0 if ok else 1

    if device.type != "cuda":
        raise SystemExit("timing and --check need a CUDA device")
    blocks = Blocks(a.compile_mode if a.compile else None)
    props = torch.cuda.get_device_properties(device)
    print(f"device {props.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"compile: {a.compile_mode if a.compile else 'off'}")

    if a.check or a.check_only:
        print("check (greedy, eager plain blocks vs captured graph):")
        ok = check_primitives(device)
        for b in a.batch:
            ok &= check_graph(w, dims, b, a.context, a.history, sp, blocks, device, a.seed)
        print("check:", "ok" if ok else "FAILED")
        if not ok:
            return 1
        if a.check_only:
            return 0

    copy_bps = copy_bandwidth(device, a.copy_mib)
    sb1 = step_bytes(w, dims, 1, a.context)
    print(f"copy bandwidth {copy_bps / 1e9:.0f} GB/s (read + write, {a.copy_mib} MiB, median of 20)")
    print(f"weight bytes per step {sb1['weights'] / 1e6:.1f} MB (talker {sb1['talker_weights'] / 1e6:.1f}, "
          f"code predictor 15 passes {sb1['cp_weights'] / 1e6:.1f}); per session {sb1['per_session'] / 1e3:.1f} kB "
          f"(KV at context {a.context}, embedding rows)")

    results = []
    print(f"\n{'B':>4} {'ms/frame':>9} {'p10':>7} {'p90':>7} {'wall':>7} {'frames/s':>9} {'x real':>7} "
          f"{'GB/s':>7} {'% copy':>7} {'setup s':>8}")
    for b in a.batch:
        st = FrameState(w, dims, b, a.context + 1, a.history, device, a.seed)
        t_setup = time.perf_counter()
        st.fill_context(w, dims, a.context, blocks)
        graph = capture_frame(w, dims, st, a.context, sp, blocks)
        setup_s = time.perf_counter() - t_setup
        times, wall_ms = time_graph(graph, a.warmup, a.frames)
        ms = _median(times)
        sb = step_bytes(w, dims, b, a.context)
        gbps = sb["total"] / (ms * 1e-3) / 1e9
        r = {
            "batch": b,
            "ms_per_frame_median": ms,
            "ms_per_frame_mean": sum(times) / len(times),
            "ms_per_frame_p10": _percentile(times, 10),
            "ms_per_frame_p90": _percentile(times, 90),
            "ms_per_frame_wall": wall_ms,
            "frames_per_s": b * 1e3 / ms,
            "x_real_time": b * 1e3 / ms / 12.5,
            "bytes_per_step": sb["total"],
            "GBps": gbps,
            "pct_of_copy": 100.0 * gbps * 1e9 / copy_bps,
            "setup_s": setup_s,
        }
        results.append(r)
        print(f"{b:>4} {ms:>9.3f} {r['ms_per_frame_p10']:>7.3f} {r['ms_per_frame_p90']:>7.3f} {wall_ms:>7.3f} "
              f"{r['frames_per_s']:>9.1f} {r['x_real_time']:>7.1f} {gbps:>7.0f} {r['pct_of_copy']:>6.1f}% "
              f"{setup_s:>8.1f}")
        del graph, st
        torch.cuda.empty_cache()

    if a.json:
        out = {
            "script": "bench/torch_frame_step.py",
            "device": props.name,
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "model": os.path.abspath(a.model),
            "dims": {"talker": vars(dims.talker), "code_predictor": vars(dims.cp),
                     "codec_vocab": dims.codec_vocab, "cp_vocab": dims.cp_vocab,
                     "num_code_groups": dims.num_code_groups, "projection": w.proj_w is not None},
            "sampling": vars(sp),
            "context": a.context,
            "history": a.history,
            "frames": a.frames,
            "warmup": a.warmup,
            "compile": a.compile_mode if a.compile else None,
            "copy_bandwidth_GBps": copy_bps / 1e9,
            "weight_bytes_per_step": sb1["weights"],
            "per_session_bytes_per_step": sb1["per_session"],
            "results": results,
        }
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
        print(f"wrote {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
