"""Loss functions (every reduction), with targets of the right kind and range."""

from __future__ import annotations

import torch

from tests.fuzz.builder import Builder, Emit
from tests.fuzz.registry import spec

REDUCTIONS = ("mean", "sum", "none")


@spec("regression_loss", weight=1.0, family="loss")
def _regression(b: Builder) -> Emit:
    x = b.pick_float()
    y = b.new_tensor(x.shape, torch.float32) if b.chance(0.7) else b.partner(x)
    red = b.choice(REDUCTIONS)
    fn = b.choice(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
    extra = {"smooth_l1_loss": f", beta={b.choice([0.5, 1.0])}", "huber_loss": f", delta={b.choice([0.5, 2.0])}"}
    return f"F.{fn}({x}, {y}, reduction={red!r}{extra.get(fn, '')})"


@spec("kl_div", weight=0.6, family="loss")
def _kl_div(b: Builder) -> Emit:
    x = b.pick_float(1)
    log_target = b.chance(0.5)
    t = b.new_tensor(x.shape, torch.float32)
    target = f"F.log_softmax({t}, -1)" if log_target else f"F.softmax({t}, -1)"
    red = b.choice(REDUCTIONS + ("batchmean",))
    return f"F.kl_div(F.log_softmax({x}, -1), {target}, reduction={red!r}, log_target={log_target})"


@spec("bce_with_logits", weight=0.7, family="loss")
def _bce(b: Builder) -> Emit:
    x = b.pick_float(1)
    t = b.new_tensor(x.shape, torch.float32, "positive")
    extra = ""
    if b.chance(0.4):
        extra += f", weight={b.new_const(b.broadcast_shape(x.shape), torch.float32, 'positive')}"
    if b.chance(0.4):
        extra += f", pos_weight={b.new_const([x.shape[-1]], torch.float32, 'positive')}"
    return (f"F.binary_cross_entropy_with_logits({x}, torch.sigmoid({t}), "
            f"reduction={b.choice(REDUCTIONS)!r}{extra})")


@spec("nll_loss", weight=1.0, family="loss")
def _nll(b: Builder) -> Emit:
    n, c = b.size(1, 7), b.size(2, 11)
    spatial = [b.size(1, 5) for _ in range(b.choice([0, 0, 1, 2]))]
    x = b.pick_float(2 + len(spatial), 2 + len(spatial),
                     pred=lambda v: v.shape[1] >= 2 and v.shape[1] <= 37,
                     shape=lambda: [n, c] + spatial)
    n, c, spatial = x.shape[0], x.shape[1], x.shape[2:]
    ignore = b.choice([-100, 0, 1, c + 3])
    target = b.new_tensor([n] + spatial, torch.int64, f"range:{c}", const=0.7)
    extra = ""
    if b.chance(0.4):
        extra += f", weight={b.new_const([c], torch.float32, 'positive')}"
    red = b.choice(REDUCTIONS)
    if b.chance(0.5):
        ls = f", label_smoothing={b.choice([0.0, 0.1])}" if b.chance(0.3) else ""
        return f"F.cross_entropy({x}, {target}, ignore_index={ignore}, reduction={red!r}{extra}{ls})"
    return f"F.nll_loss(F.log_softmax({x}, 1), {target}, ignore_index={ignore}, reduction={red!r}{extra})"


@spec("cross_entropy_probs", weight=0.4, family="loss")
def _ce_probs(b: Builder) -> Emit:
    x = b.pick_float(2, 2, pred=lambda v: v.shape[1] >= 2)
    t = b.new_tensor(x.shape, torch.float32)
    return f"F.cross_entropy({x}, F.softmax({t}, 1), reduction={b.choice(REDUCTIONS)!r})"


@spec("poisson_nll_loss", weight=0.5, family="loss")
def _poisson(b: Builder) -> Emit:
    x = b.pick_float()
    t = b.new_tensor(x.shape, torch.float32, "positive")
    log_input = b.chance(0.6)
    inp = f"{x}.clamp(-5.0, 5.0)" if log_input else f"({x}.abs() + 0.25)"
    return (f"F.poisson_nll_loss({inp}, {t}, log_input={log_input}, full={b.chance(0.4)}, "
            f"reduction={b.choice(REDUCTIONS)!r})")
