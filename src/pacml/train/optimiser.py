"""Adam over one flat buffer: torch's Adam, its numbers to the last bit, a quarter of its time.

`torch.optim.Adam` (foreach) spends most of its time launching its element-wise kernels once
per parameter tensor: the agent's actor has some forty small ones (LayerNorm weights of five
elements, say), and its step took 1.7 ms of a 12 ms imitation step (0.4 ms here;
`benchmarks/bench_imitation.py`). `FlatAdam` moves the parameters into one contiguous buffer (each
parameter becomes a view of its slice, and its gradient a view of the same slice of one gradient
buffer) and runs torch's own Adam on that buffer as a single tensor. Adam is element-wise, so
every element gets the same operations in the same order as before: the same numbers (the tests
compare the weights after many steps, bit for bit).

Three rules make that hold:

- every parameter gets a gradient in every step (true of the agent's towers: each parameter
  is on the loss's path). torch's Adam skips a parameter whose gradient is None; here its
  gradient is a zeroed slice, and Adam would still move it by its momentum;
- ``zero_grad`` zeroes the gradient buffer in place (never None), so that backward adds into
  the slices;
- every slice starts on a 64-byte boundary, where torch's allocator puts every tensor
  (`ALIGN_ELEMENTS`): the weights are views of the buffer, and matrix products may round
  differently on differently aligned operands.

``state_dict`` and ``load_state_dict`` speak torch's per-parameter format, so a checkpoint
written by either optimiser resumes under the other.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

ALIGN_ELEMENTS = 16
"""Floats per 64 bytes. Packed end to end instead, the critic's weights came out different
after one PPO step (MKL promises reproducible results on aligned memory only)."""


class FlatAdam(torch.optim.Adam):
    """`torch.optim.Adam` over ``params`` moved into one buffer (see the module doc)."""

    def __init__(self, params: Iterable[torch.nn.Parameter], **adam_kwargs):
        self.params = list(params)
        if not self.params:
            raise ValueError("FlatAdam: no parameters to optimise")
        self.starts, total = [], 0
        for p in self.params:  # each slice starts where torch's allocator would put a tensor
            self.starts.append(total)
            total += -(-p.numel() // ALIGN_ELEMENTS) * ALIGN_ELEMENTS
        flat = torch.zeros(total)
        grad = torch.zeros(total)
        if flat.data_ptr() % 64 or grad.data_ptr() % 64:
            raise RuntimeError("FlatAdam: torch allocated a buffer off a 64-byte boundary")
        for i, p in enumerate(self.params):
            weights = self._slice(flat, i)
            weights.copy_(p.detach())
            p.data, p.grad = weights, self._slice(grad, i)
        self.flat = torch.nn.Parameter(flat)
        self.flat.grad = grad
        self.addresses = [p.data_ptr() for p in self.params]
        super().__init__([self.flat], **adam_kwargs)

    def _slice(self, buf: torch.Tensor, i: int) -> torch.Tensor:
        """Parameter i's slice of a buffer shaped like the flat one, in the parameter's shape."""
        p = self.params[i]
        return buf[self.starts[i] : self.starts[i] + p.numel()].view_as(p)

    @torch.no_grad()
    def step(self, closure=None):
        if [p.data_ptr() for p in self.params] != self.addresses:
            raise RuntimeError("FlatAdam: a parameter no longer lies in this optimiser's buffer (moved since)")
        return super().step(closure)

    def zero_grad(self, set_to_none: bool = True) -> None:  # noqa: ARG002 - never None (module doc)
        self.flat.grad.zero_()

    def state_dict(self) -> dict:
        """torch's per-parameter layout: parameter i's slice of every state buffer."""
        flat_sd = super().state_dict()
        state = flat_sd["state"].get(0, {})
        per_param = {
            i: {
                "step": state["step"].clone(),
                **{key: self._slice(buf, i).clone() for key, buf in state.items() if key != "step"},
            }
            for i in range(len(self.params))
            if state
        }
        group = {**flat_sd["param_groups"][0], "params": list(range(len(self.params)))}
        return {"state": per_param, "param_groups": [group]}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != 1 or len(groups[0]["params"]) != len(self.params):
            raise ValueError(
                f"an optimiser state of {sum(len(g['params']) for g in groups)} parameters in "
                f"{len(groups)} groups for {len(self.params)} parameters in one"
            )
        state = [state_dict["state"].get(i) for i in groups[0]["params"]]
        flat_state = {}
        if any(s is not None for s in state):
            steps = {float(s["step"]) for s in state if s is not None}
            if any(s is None for s in state) or len(steps) != 1:
                raise ValueError("an optimiser state whose parameters took different numbers of steps")
            flat_state[0] = {"step": state[0]["step"]}
            for key in state[0]:
                if key != "step":
                    buf = torch.zeros_like(self.flat)
                    for i, s in enumerate(state):
                        self._slice(buf, i).copy_(s[key])
                    flat_state[0][key] = buf
        super().load_state_dict({"state": flat_state, "param_groups": [{**groups[0], "params": [0]}]})
