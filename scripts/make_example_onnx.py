"""Write resources/models/cnn_bn.onnx: a small CNN with batch norm and random weights (seed 0), exported by torch.

The bundled example of "weights bound as constants" (resources/pipelines/cpu_build_bound.json) needs a model that
carries its own weights; built-in models get random weights at run time. The file is small (~60 KB) and
committed; this script is how it was made (needs torch and onnx; no downloads):

    .venv/bin/python scripts/make_example_onnx.py
"""

from __future__ import annotations

import os

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")


class SmallCNN(torch.nn.Module):
    """conv-bn-relu, conv-bn-relu, pool, linear: 3x32x32 -> 10."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.b1 = torch.nn.Conv2d(3, 16, 3, padding=1, bias=False), torch.nn.BatchNorm2d(16)
        self.c2, self.b2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1, bias=False), torch.nn.BatchNorm2d(32)
        self.fc = torch.nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.b1(self.c1(x)))
        x = torch.relu(self.b2(self.c2(x)))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))


def main() -> None:
    """Build the model with non-trivial batch-norm statistics and export it with batch norm kept as its own op."""
    torch.manual_seed(0)
    model = SmallCNN()
    with torch.no_grad():
        for bn in (model.b1, model.b2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
    model.eval()
    torch.onnx.export(model, (torch.randn(1, 3, 32, 32),), OUT, dynamo=False, input_names=["x"],
                      output_names=["logits"], do_constant_folding=False,
                      training=torch.onnx.TrainingMode.PRESERVE, opset_version=17)
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
