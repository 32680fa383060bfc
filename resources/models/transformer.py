"""Built-in model ``builtin:transformer``: one pre-norm transformer encoder block with static shapes.

Sequence 32, hidden 128, 4 heads, MLP 4x with GELU: layer norm, multi-head self-attention written with
matmuls and softmax, residual adds, then the feed-forward network. Follows the nn.Module file convention:
defines ``model`` and ``spec``.
"""

from tvm.relax.frontend import nn
from tvm.relax.frontend.nn import op

SEQ = 32
HIDDEN = 128
HEADS = 4
HEAD_DIM = HIDDEN // HEADS
FFN = 4 * HIDDEN


class TransformerBlock(nn.Module):
    """x + Attention(LayerNorm(x)), then h + MLP(LayerNorm(h))."""

    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(HIDDEN)
        self.q_proj = nn.Linear(HIDDEN, HIDDEN)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN)
        self.ln2 = nn.LayerNorm(HIDDEN)
        self.fc1 = nn.Linear(HIDDEN, FFN)
        self.fc2 = nn.Linear(FFN, HIDDEN)

    def _heads(self, t):
        # (1, SEQ, HIDDEN) -> (1, HEADS, SEQ, HEAD_DIM)
        return op.permute_dims(op.reshape(t, (1, SEQ, HEADS, HEAD_DIM)), [0, 2, 1, 3])

    def forward(self, x):
        h = self.ln1(x)
        q = self._heads(self.q_proj(h))
        k = self._heads(self.k_proj(h))
        v = self._heads(self.v_proj(h))
        scores = op.matmul(q, op.permute_dims(k, [0, 1, 3, 2])) * (1.0 / HEAD_DIM**0.5)
        probs = op.softmax(scores, axis=-1)
        ctx = op.matmul(probs, v)
        ctx = op.reshape(op.permute_dims(ctx, [0, 2, 1, 3]), (1, SEQ, HIDDEN))
        x = x + self.o_proj(ctx)
        h = self.ln2(x)
        h = self.fc2(op.gelu(self.fc1(h)))
        return x + h


model = TransformerBlock()
spec = {"forward": {"x": nn.spec.Tensor((1, SEQ, HIDDEN), "float32")}}
