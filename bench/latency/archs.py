"""Real architectures with random weights, no downloads (issue 19's bench set).

* torchvision-style ResNet-18, MobileNetV3-small and EfficientNet-B0 written in plain torch (torchvision itself
  cannot be installed next to the CPU torch pin: its wheel is CUDA-built). They follow torchvision's
  definitions (``torchvision/models/{resnet,mobilenetv3,efficientnet}.py``): the same blocks, channel counts,
  strides, squeeze-and-excitation, Hardswish / Hardsigmoid / SiLU activations and BatchNorm eps; the weights
  are random (torchvision's initialisation: Kaiming for convolutions, BN at 1/0) and the BN running statistics
  are randomised a little so the folded affine transforms are not identities. Input 1x3x224x224 (``--image``).
* Hugging Face GPT-2, BERT and Llama from small configs (``transformers``), wrapped to take ``input_ids`` and
  return a tuple (``torch.export`` archives of ``ModelOutput`` load only where ``transformers`` is imported).
  Sequence 32, batch 1.

Every factory returns ``(model in eval mode, example_inputs)`` and seeds torch first.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Optional

#: Input image side of the CNNs (``--image`` changes it before the models are made).
IMAGE = {"size": 224}

#: Sequence length and vocabulary of the small Hugging Face configs.
SEQ, VOCAB = 32, 2048


def _make_divisible(v: float, divisor: int = 8, min_value: Optional[int] = None) -> int:
    """torchvision's ``_make_divisible`` (channel counts rounded to multiples of 8)."""
    min_value = min_value or divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


def _init(model: Any) -> Any:
    """torchvision's initialisation, plus random BN running statistics (so BN is not an identity)."""
    import torch
    from torch import nn

    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
            with torch.no_grad():
                if m.running_mean is not None and m.running_var is not None:
                    m.running_mean.uniform_(-0.1, 0.1)
                    m.running_var.uniform_(0.5, 1.5)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)
    return model.eval()


def _image() -> tuple[Any, ...]:
    import torch

    return (torch.randn(1, 3, IMAGE["size"], IMAGE["size"]),)


def _conv_bn_act(cin: int, cout: int, k: int, stride: int = 1, groups: int = 1, act: Optional[Callable] = None,
                 norm: Optional[Callable] = None) -> Any:
    """torchvision's ``Conv2dNormActivation``: conv (no bias, padding (k-1)//2), BN, optional activation."""
    from torch import nn

    norm = norm or nn.BatchNorm2d
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False), norm(cout)]
    if act is not None:
        layers.append(act(inplace=True))
    return nn.Sequential(*layers)


# ------------------------------------------------------------------------------------------------- ResNet-18


def resnet18() -> tuple[Any, tuple[Any, ...]]:
    """torchvision ``resnet18`` (BasicBlock x [2, 2, 2, 2], 1000 classes)."""
    import torch
    from torch import nn

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + identity)

    class ResNet(nn.Module):
        def __init__(self, classes: int = 1000) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            cin, stages = 64, []
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                stages.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
                cin = cout
            self.layer1, self.layer2, self.layer3, self.layer4 = stages
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, classes)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    torch.manual_seed(0)
    return _init(ResNet()), _image()


# ------------------------------------------------------------------------------------------ MobileNetV3-small

#: torchvision's ``mobilenet_v3_small`` inverted-residual settings:
#: (input, kernel, expanded, output, use SE, activation "RE"/"HS", stride).
MOBILENET_V3_SMALL = (
    (16, 3, 16, 16, True, "RE", 2), (16, 3, 72, 24, False, "RE", 2), (24, 3, 88, 24, False, "RE", 1),
    (24, 5, 96, 40, True, "HS", 2), (40, 5, 240, 40, True, "HS", 1), (40, 5, 240, 40, True, "HS", 1),
    (40, 5, 120, 48, True, "HS", 1), (48, 5, 144, 48, True, "HS", 1), (48, 5, 288, 96, True, "HS", 2),
    (96, 5, 576, 96, True, "HS", 1), (96, 5, 576, 96, True, "HS", 1),
)


def _squeeze_excitation(channels: int, squeeze: int, act: Callable, scale: Callable) -> Any:
    """torchvision's ``SqueezeExcitation``: avg pool, 1x1 conv, act, 1x1 conv, scale activation, times input."""
    from torch import nn

    class SqueezeExcitation(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc1 = nn.Conv2d(channels, squeeze, 1)
            self.fc2 = nn.Conv2d(squeeze, channels, 1)
            self.activation, self.scale_activation = act(), scale()

        def forward(self, x: Any) -> Any:
            s = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
            return s * x

    return SqueezeExcitation()


def mobilenet_v3_small() -> tuple[Any, tuple[Any, ...]]:
    """torchvision ``mobilenet_v3_small`` (11 inverted residuals, last channel 1024, 1000 classes)."""
    import torch
    from torch import nn

    norm = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)

    class InvertedResidual(nn.Module):
        def __init__(self, cin: int, k: int, exp: int, cout: int, se: bool, act_name: str, stride: int) -> None:
            super().__init__()
            act = nn.Hardswish if act_name == "HS" else nn.ReLU
            self.use_res = stride == 1 and cin == cout
            layers = []
            if exp != cin:
                layers.append(_conv_bn_act(cin, exp, 1, act=act, norm=norm))
            layers.append(_conv_bn_act(exp, exp, k, stride, groups=exp, act=act, norm=norm))
            if se:
                layers.append(_squeeze_excitation(exp, _make_divisible(exp // 4, 8), nn.ReLU, nn.Hardsigmoid))
            layers.append(_conv_bn_act(exp, cout, 1, norm=norm))
            self.block = nn.Sequential(*layers)

        def forward(self, x: Any) -> Any:
            y = self.block(x)
            return y + x if self.use_res else y

    class MobileNetV3(nn.Module):
        def __init__(self, classes: int = 1000, last_channel: int = 1024) -> None:
            super().__init__()
            layers = [_conv_bn_act(3, 16, 3, 2, act=nn.Hardswish, norm=norm)]
            layers += [InvertedResidual(*cfg) for cfg in MOBILENET_V3_SMALL]
            layers.append(_conv_bn_act(96, 6 * 96, 1, act=nn.Hardswish, norm=norm))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Linear(576, last_channel), nn.Hardswish(inplace=True),
                                            nn.Dropout(p=0.2, inplace=True), nn.Linear(last_channel, classes))

        def forward(self, x: Any) -> Any:
            return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    torch.manual_seed(0)
    return _init(MobileNetV3()), _image()


# -------------------------------------------------------------------------------------------- EfficientNet-B0

#: torchvision's EfficientNet-B0 MBConv stages: (expand ratio, kernel, stride, input, output, layers).
EFFICIENTNET_B0 = ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
                   (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1))


def efficientnet_b0() -> tuple[Any, tuple[Any, ...]]:
    """torchvision ``efficientnet_b0`` (MBConv with SE and SiLU, head 1280, 1000 classes; stochastic depth is
    the identity in eval mode)."""
    import torch
    from torch import nn

    class MBConv(nn.Module):
        def __init__(self, expand: int, k: int, stride: int, cin: int, cout: int) -> None:
            super().__init__()
            self.use_res = stride == 1 and cin == cout
            exp = _make_divisible(cin * expand, 8)
            layers = []
            if exp != cin:
                layers.append(_conv_bn_act(cin, exp, 1, act=nn.SiLU))
            layers.append(_conv_bn_act(exp, exp, k, stride, groups=exp, act=nn.SiLU))
            layers.append(_squeeze_excitation(exp, max(1, cin // 4), partial(nn.SiLU, inplace=True), nn.Sigmoid))
            layers.append(_conv_bn_act(exp, cout, 1))
            self.block = nn.Sequential(*layers)

        def forward(self, x: Any) -> Any:
            y = self.block(x)
            return y + x if self.use_res else y

    class EfficientNet(nn.Module):
        def __init__(self, classes: int = 1000) -> None:
            super().__init__()
            layers = [_conv_bn_act(3, 32, 3, 2, act=nn.SiLU)]
            for expand, k, stride, cin, cout, n in EFFICIENTNET_B0:
                layers.append(nn.Sequential(*[MBConv(expand, k, stride if i == 0 else 1, cin if i == 0 else cout,
                                                     cout) for i in range(n)]))
            layers.append(_conv_bn_act(320, 1280, 1, act=nn.SiLU))
            self.features = nn.Sequential(*layers)
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Dropout(p=0.2, inplace=True), nn.Linear(1280, classes))

        def forward(self, x: Any) -> Any:
            return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))

    torch.manual_seed(0)
    return _init(EfficientNet()), _image()


# ----------------------------------------------------------------------------------------------- Hugging Face


def _hf(model: Any, field: str) -> tuple[Any, tuple[Any, ...]]:
    """``model`` wrapped to take ``input_ids`` (1 x :data:`SEQ`) and return ``(output.<field>,)``."""
    import torch

    class TupleOutput(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model.eval()

        def forward(self, input_ids: Any) -> Any:
            kwargs = {"use_cache": False} if field == "logits" else {}
            # An explicit all-ones mask (what a tokenizer gives): without one, transformers 5 looks for packed
            # sequences (diff, ne, cumsum of the position ids), and a cumsum of a bool tensor does not build in
            # TVM 0.27 ("Check failed: t.MatchesCode(kDLFloat)")
            mask = torch.ones_like(input_ids)
            return (getattr(self.model(input_ids=input_ids, attention_mask=mask, **kwargs), field),)

    return TupleOutput().eval(), (torch.randint(0, VOCAB, (1, SEQ)),)


def _quiet_transformers() -> Any:
    import transformers

    transformers.logging.set_verbosity_error()
    return transformers


def hf_gpt2() -> tuple[Any, tuple[Any, ...]]:
    """Hugging Face ``GPT2LMHeadModel``: 2 layers, hidden 128, 4 heads, vocabulary 2048 (logits)."""
    import torch

    tf = _quiet_transformers()
    torch.manual_seed(0)
    cfg = tf.GPT2Config(n_layer=2, n_embd=128, n_head=4, vocab_size=VOCAB, n_positions=64)
    return _hf(tf.GPT2LMHeadModel(cfg), "logits")


def hf_bert() -> tuple[Any, tuple[Any, ...]]:
    """Hugging Face ``BertModel``: 2 layers, hidden 128, 2 heads, FFN 512, vocabulary 2048 (last hidden state)."""
    import torch

    tf = _quiet_transformers()
    torch.manual_seed(0)
    cfg = tf.BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512,
                        vocab_size=VOCAB, max_position_embeddings=64)
    return _hf(tf.BertModel(cfg, add_pooling_layer=False), "last_hidden_state")


def hf_llama() -> tuple[Any, tuple[Any, ...]]:
    """Hugging Face ``LlamaForCausalLM``: 2 layers, hidden 128, 4 heads (2 KV heads), FFN 344, vocabulary 2048."""
    import torch

    tf = _quiet_transformers()
    torch.manual_seed(0)
    cfg = tf.LlamaConfig(hidden_size=128, intermediate_size=344, num_hidden_layers=2, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=64)
    return _hf(tf.LlamaForCausalLM(cfg), "logits")


#: name -> factory of the real architectures.
REAL_MODELS: dict[str, Callable[[], tuple[Any, tuple[Any, ...]]]] = {
    "resnet18_tv": resnet18,
    "mobilenet_v3_small": mobilenet_v3_small,
    "efficientnet_b0": efficientnet_b0,
    "gpt2_hf": hf_gpt2,
    "bert_hf": hf_bert,
    "llama_hf": hf_llama,
}

#: The real architectures that need ``transformers``.
NEEDS_TRANSFORMERS = ("gpt2_hf", "bert_hf", "llama_hf")
