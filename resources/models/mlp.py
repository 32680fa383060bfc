"""Built-in model ``builtin:mlp``: the MLP of TVM's "Customize Optimization" tutorial.

Model file convention (nn.Module files): the file defines ``model`` (a ``tvm.relax.frontend.nn.Module``
instance) and ``spec`` (the ``export_tvm`` spec); the loader calls ``model.export_tvm(spec=spec)``.
"""

from tvm.relax.frontend import nn


class MLPModel(nn.Module):
    """Linear(784, 256) -> ReLU -> Linear(256, 10, bias=False)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10, bias=False)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


model = MLPModel()
spec = {"forward": {"x": nn.spec.Tensor((1, 784), "float32")}}
