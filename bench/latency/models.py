"""The bench models: the small models of the original bench set (PyTorch source with random weights, also
loadable by the app as ``.py`` model files) and the real architectures of :mod:`bench.latency.archs`.

:func:`make_model` gives ``(model, example_inputs)`` for any of them (eval mode, seeded, no downloads).
"""

from __future__ import annotations

from typing import Any

MODELS_SOURCE = {
    "mlp": '''
import torch

class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 10, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

torch.manual_seed(0)
model = MLP().eval()
example_inputs = (torch.randn(1, 784),)
''',
    "cnn": '''
import torch

class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = torch.nn.Conv2d(16, 32, 3, padding=1)
        self.fc = torch.nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        x = torch.nn.functional.max_pool2d(torch.relu(self.c2(x)), 2)
        return self.fc(torch.flatten(x, 1))

torch.manual_seed(0)
model = CNN().eval()
example_inputs = (torch.randn(1, 3, 32, 32),)
''',
    "transformer": '''
import torch

class Block(torch.nn.Module):
    def __init__(self, hidden=128, heads=4):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.qkv = torch.nn.ModuleList([torch.nn.Linear(hidden, hidden) for _ in range(3)])
        self.o = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc1 = torch.nn.Linear(hidden, 4 * hidden)
        self.fc2 = torch.nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        b, s, h = x.shape
        y = self.ln1(x)
        q, k, v = [p(y).reshape(b, s, self.heads, self.dim).transpose(1, 2) for p in self.qkv]
        att = torch.softmax(q @ k.transpose(-1, -2) / self.dim ** 0.5, dim=-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

torch.manual_seed(0)
model = Block().eval()
example_inputs = (torch.randn(1, 32, 128),)
''',
    "resnet18": '''
import torch

class Basic(torch.nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = torch.nn.BatchNorm2d(cout)
        self.c2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            torch.nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))

class ResNet18(torch.nn.Module):
    """ResNet-18 layout (64-128-256-512 channels, 2 basic blocks per stage), random weights."""
    def __init__(self, classes=1000):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(64),
                                        torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            blocks += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
            cin = cout
        self.blocks = torch.nn.Sequential(*blocks)
        self.fc = torch.nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))

torch.manual_seed(0)
model = ResNet18().eval()
example_inputs = (torch.randn(1, 3, 64, 64),)
''',
    "gpt2": '''
import torch

class Block(torch.nn.Module):
    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads, self.dim = heads, hidden // heads
        self.ln1 = torch.nn.LayerNorm(hidden)
        self.attn = torch.nn.Linear(hidden, 3 * hidden)
        self.proj = torch.nn.Linear(hidden, hidden)
        self.ln2 = torch.nn.LayerNorm(hidden)
        self.fc = torch.nn.Linear(hidden, 4 * hidden)
        self.out = torch.nn.Linear(4 * hidden, hidden)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.attn(self.ln1(x)).split(h, dim=-1)
        q, k, v = [t.reshape(b, s, self.heads, self.dim).transpose(1, 2) for t in (q, k, v)]
        att = (q @ k.transpose(-1, -2)) / self.dim ** 0.5
        att = torch.softmax(att.masked_fill(~self.mask[:s, :s], float("-inf")), dim=-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, h))
        return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

class GPT2(torch.nn.Module):
    """GPT-2-style decoder (token + position embeddings, 2 pre-LN blocks, tied LM head), random weights."""
    def __init__(self, vocab=2048, hidden=128, heads=4, layers=2, seq=32):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab, hidden)
        self.wpe = torch.nn.Embedding(seq, hidden)
        self.blocks = torch.nn.ModuleList([Block(hidden, heads, seq) for _ in range(layers)])
        self.ln = torch.nn.LayerNorm(hidden)
        self.register_buffer("pos", torch.arange(seq).unsqueeze(0))

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(self.pos[:, :ids.shape[1]])
        for blk in self.blocks:
            x = blk(x)
        return self.ln(x) @ self.wte.weight.t()

torch.manual_seed(0)
model = GPT2().eval()
example_inputs = (torch.randint(0, 2048, (1, 32)),)
''',
}


#: The small models (``MODELS_SOURCE``): also runnable through the app as ``.py`` files (the legacy columns).
SMALL_MODELS = tuple(MODELS_SOURCE)


def small_model(name: str) -> tuple[Any, tuple[Any, ...]]:
    """``(model, example_inputs)`` of one of :data:`MODELS_SOURCE` (its source executed here)."""
    ns: dict[str, Any] = {}
    exec(compile(MODELS_SOURCE[name], name, "exec"), ns)  # noqa: S102 - our own model definitions
    return ns["model"], ns["example_inputs"]


def all_models() -> tuple[str, ...]:
    """Every model name the bench knows: the small ones, then the real architectures."""
    from bench.latency.archs import REAL_MODELS

    return (*SMALL_MODELS, *REAL_MODELS)


def make_model(name: str) -> tuple[Any, tuple[Any, ...]]:
    """``(model, example_inputs)`` for ``name`` (a small model or a real architecture)."""
    from bench.latency import archs

    if name in MODELS_SOURCE:
        return small_model(name)
    if name in archs.REAL_MODELS:
        return archs.REAL_MODELS[name]()
    raise SystemExit(f"unknown model {name!r}; known: {', '.join(all_models())}")
