"""Convolutional bench models in plain PyTorch (torchvision is not installable next to the CPU torch pin):
torchvision-style ResNet-18, MobileNetV3-small and EfficientNet-B0 (same layer shapes as torchvision's,
random weights, eval mode), plus the models of ``bench/bench_latency.py`` (its small CNN, 64x64 ResNet-18, MLP, transformer block, GPT-2-style
decoder: to check that the convolution work leaves them alone).

:func:`build` returns ``(model, example_inputs)``; used by ``bench/bench_conv_rule.py``."""

from __future__ import annotations

from typing import Any, Callable


def _nn() -> Any:
    import torch

    return torch.nn


def _conv_bn(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, act: Any = None) -> Any:
    nn = _nn()
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


def resnet18(size: int = 224) -> tuple[Any, tuple[Any, ...]]:
    """torchvision's ResNet-18 layout (7x7 stem, 4 stages of 2 basic blocks, 64-512 channels)."""
    import torch

    nn = _nn()

    class Basic(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.c1 = _conv_bn(cin, cout, 3, stride, act=nn.ReLU)
            self.c2 = _conv_bn(cout, cout, 3)
            self.down = _conv_bn(cin, cout, 1, stride) if stride != 1 or cin != cout else None

        def forward(self, x: Any) -> Any:
            return torch.relu(self.c2(self.c1(x)) + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(_conv_bn(3, 64, 7, 2, act=nn.ReLU), nn.MaxPool2d(3, 2, 1))
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(512, 1000)

        def forward(self, x: Any) -> Any:
            x = self.blocks(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    return ResNet18(), (torch.randn(1, 3, size, size),)


def _divisible(v: float, d: int = 8) -> int:
    new = max(d, int(v + d / 2) // d * d)
    return new + d if new < 0.9 * v else new


def mobilenet_v3_small() -> tuple[Any, tuple[Any, ...]]:
    """torchvision's MobileNetV3-small (inverted residuals, depthwise 3x3/5x5, squeeze-excitation, hardswish)."""
    import torch

    nn = _nn()

    class SE(nn.Module):
        def __init__(self, ch: int) -> None:
            super().__init__()
            sq = _divisible(ch // 4)
            self.fc1, self.fc2 = nn.Conv2d(ch, sq, 1), nn.Conv2d(sq, ch, 1)

        def forward(self, x: Any) -> Any:
            s = nn.functional.adaptive_avg_pool2d(x, 1)
            return x * nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))

    class Block(nn.Module):
        def __init__(self, cin: int, k: int, exp: int, cout: int, se: bool, hs: bool, stride: int) -> None:
            super().__init__()
            act = nn.Hardswish if hs else nn.ReLU
            layers = [] if exp == cin else [_conv_bn(cin, exp, 1, act=act)]
            layers.append(_conv_bn(exp, exp, k, stride, groups=exp, act=act))
            if se:
                layers.append(SE(exp))
            layers.append(_conv_bn(exp, cout, 1))
            self.body = nn.Sequential(*layers)
            self.res = stride == 1 and cin == cout

        def forward(self, x: Any) -> Any:
            y = self.body(x)
            return x + y if self.res else y

    cfg = [(16, 3, 16, 16, True, False, 2), (16, 3, 72, 24, False, False, 2), (24, 3, 88, 24, False, False, 1),
           (24, 5, 96, 40, True, True, 2), (40, 5, 240, 40, True, True, 1), (40, 5, 240, 40, True, True, 1),
           (40, 5, 120, 48, True, True, 1), (48, 5, 144, 48, True, True, 1), (48, 5, 288, 96, True, True, 2),
           (96, 5, 576, 96, True, True, 1), (96, 5, 576, 96, True, True, 1)]

    class MobileNetV3Small(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers = [_conv_bn(3, 16, 3, 2, act=nn.Hardswish)] + [Block(*c) for c in cfg]
            layers.append(_conv_bn(96, 576, 1, act=nn.Hardswish))
            self.features = nn.Sequential(*layers)
            self.head = nn.Sequential(nn.Linear(576, 1024), nn.Hardswish(), nn.Linear(1024, 1000))

        def forward(self, x: Any) -> Any:
            return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))

    return MobileNetV3Small(), (torch.randn(1, 3, 224, 224),)


def efficientnet_b0() -> tuple[Any, tuple[Any, ...]]:
    """torchvision's EfficientNet-B0 (MBConv blocks, depthwise 3x3/5x5, squeeze-excitation, SiLU)."""
    import torch

    nn = _nn()

    class MBConv(nn.Module):
        def __init__(self, expand: int, k: int, stride: int, cin: int, cout: int) -> None:
            super().__init__()
            exp = cin * expand
            layers = [] if expand == 1 else [_conv_bn(cin, exp, 1, act=nn.SiLU)]
            layers.append(_conv_bn(exp, exp, k, stride, groups=exp, act=nn.SiLU))
            self.pre = nn.Sequential(*layers)
            sq = max(1, cin // 4)
            self.se1, self.se2 = nn.Conv2d(exp, sq, 1), nn.Conv2d(sq, exp, 1)
            self.project = _conv_bn(exp, cout, 1)
            self.res = stride == 1 and cin == cout

        def forward(self, x: Any) -> Any:
            y = self.pre(x)
            s = nn.functional.adaptive_avg_pool2d(y, 1)
            y = self.project(y * torch.sigmoid(self.se2(nn.functional.silu(self.se1(s)))))
            return x + y if self.res else y

    stages = [(1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
              (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1)]

    class EfficientNetB0(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            layers = [_conv_bn(3, 32, 3, 2, act=nn.SiLU)]
            for expand, k, stride, cin, cout, n in stages:
                for i in range(n):
                    layers.append(MBConv(expand, k, stride if i == 0 else 1, cin if i == 0 else cout, cout))
            layers.append(_conv_bn(320, 1280, 1, act=nn.SiLU))
            self.features = nn.Sequential(*layers)
            self.fc = nn.Linear(1280, 1000)

        def forward(self, x: Any) -> Any:
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))

    return EfficientNetB0(), (torch.randn(1, 3, 224, 224),)


def _from_bench_latency(name: str) -> tuple[Any, tuple[Any, ...]]:
    from bench.bench_latency import MODELS_SOURCE

    namespace: dict[str, Any] = {}
    exec(MODELS_SOURCE[name], namespace)  # noqa: S102 - the bench's own model source
    return namespace["model"], tuple(namespace["example_inputs"])


MODELS: dict[str, Callable[[], tuple[Any, tuple[Any, ...]]]] = {
    "mlp": lambda: _from_bench_latency("mlp"),
    "transformer": lambda: _from_bench_latency("transformer"),
    "gpt2": lambda: _from_bench_latency("gpt2"),
    "cnn": lambda: _from_bench_latency("cnn"),
    "resnet18_64": lambda: _from_bench_latency("resnet18"),
    "resnet18": resnet18,
    "mobilenet_v3_small": mobilenet_v3_small,
    "efficientnet_b0": efficientnet_b0,
}


def build(name: str) -> tuple[Any, tuple[Any, ...]]:
    """``(model in eval mode with seeded random weights, example inputs)`` of bench model ``name``."""
    import torch

    torch.manual_seed(0)
    model, inputs = MODELS[name]()
    return model.eval(), inputs
