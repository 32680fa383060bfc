"""Built-in model ``builtin:decoder``: a Llama-style decoder stack (32 layers, hidden 512) for large graphs.

Symbolic sequence length ``seq_len``; the rotary tables ``cos``/``sin`` (seq_len, head_dim) and the additive
attention ``mask`` (1, 1, seq_len, seq_len) are function inputs shared by every layer. Each layer: RMSNorm,
multi-head self-attention with rotary embeddings (q/k/v/o projections without bias), residual add, RMSNorm,
SwiGLU MLP (gate/up/down projections), residual add; a final RMSNorm. Weight names keep the module path
(``layers.3.self_attn.q_proj.weight``), which the graph view uses to group bindings by layer and block.
Follows the nn.Module file convention: defines ``model`` and ``spec``. ``builtin:decoder128`` is this
file with ``LAYERS = 128`` (``pipeline_model.models.BUILTIN_SIZES``, for the benches): keep the layer count on
the one top-level line ``LAYERS = <n>``.
"""

from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op

LAYERS = 32
HIDDEN = 512
HEADS = 8
HEAD_DIM = HIDDEN // HEADS
FFN = 1376
EPS = 1e-5


class RMSNorm(nn.Module):
    """x / rms(x) * weight."""

    def __init__(self, dim):
        super().__init__()
        self.weight = nn.Parameter((dim,), "float32")

    def forward(self, x):
        return op.rms_norm(x, self.weight, axes=[-1], epsilon=EPS)


def _rotate(x, cos, sin):
    """Rotary embedding of x (1, seq, heads, head_dim) with tables (seq, head_dim)."""
    x1 = op.split(x, 2, axis=-1)
    rotated = op.concat([op.negative(x1[1]), x1[0]], dim=-1)
    c = op.reshape(cos, (1, -1, 1, HEAD_DIM))
    s = op.reshape(sin, (1, -1, 1, HEAD_DIM))
    return x * c + rotated * s


class Attention(nn.Module):
    """Multi-head self-attention with rotary embeddings and an additive mask."""

    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = op.reshape(self.q_proj(x), (b, s, HEADS, HEAD_DIM))
        k = op.reshape(self.k_proj(x), (b, s, HEADS, HEAD_DIM))
        v = op.reshape(self.v_proj(x), (b, s, HEADS, HEAD_DIM))
        q = op.permute_dims(_rotate(q, cos, sin), [0, 2, 1, 3])
        k = op.permute_dims(_rotate(k, cos, sin), [0, 2, 3, 1])
        v = op.permute_dims(v, [0, 2, 1, 3])
        scores = op.matmul(q, k) * (1.0 / HEAD_DIM**0.5) + mask
        probs = op.softmax(scores, axis=-1)
        ctx = op.permute_dims(op.matmul(probs, v), [0, 2, 1, 3])
        return self.o_proj(op.reshape(ctx, (b, s, HIDDEN)))


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) * up(x))."""

    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.up_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x):
        return self.down_proj(op.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    """x + attn(norm(x)), then h + mlp(norm(h))."""

    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(HIDDEN)
        self.self_attn = Attention()
        self.post_attention_layernorm = RMSNorm(HIDDEN)
        self.mlp = MLP()

    def forward(self, x, cos, sin, mask):
        h = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return h + self.mlp(self.post_attention_layernorm(h))


class Decoder(nn.Module):
    """LAYERS decoder layers and a final norm."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([DecoderLayer() for _ in range(LAYERS)])
        self.norm = RMSNorm(HIDDEN)

    def forward(self, x, cos, sin, mask):
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        return self.norm(x)


model = Decoder()
spec = {
    "forward": {
        "x": nn.spec.Tensor((1, "seq_len", HIDDEN), "float32"),
        "cos": nn.spec.Tensor(("seq_len", HEAD_DIM), "float32"),
        "sin": nn.spec.Tensor(("seq_len", HEAD_DIM), "float32"),
        "mask": nn.spec.Tensor((1, 1, "seq_len", "seq_len"), "float32"),
    }
}
