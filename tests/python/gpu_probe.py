"""gpu_probe.py (TEST ONLY, cuda runtime): the example's Triton conv update (examples/python),
checking in every call that each tensor aliases linstate's buffer (data_ptr equals the raw
address in p.ptrs) and which stream is current and whether it is being captured. Each distinct
observation is one line of <source>/probe.log (the source folder is the test's temp dir)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
from conv_triton import conv_update_cuda  # noqa: E402


def linstate_impl(source, runtime):
    if runtime != "cuda":
        raise RuntimeError("gpu_probe runs on the cuda runtime")
    import torch
    log = open(os.path.join(source, "probe.log"), "a", buffering=1) if source else None  # --impl-path: None
    seen = set()

    def conv_update(p, tuning):
        alias = all(getattr(p, k) is None or getattr(p, k).data_ptr() == v for k, v in p.ptrs.items())
        obs = ("alias=%d" % alias, "stream=%d" % torch.cuda.current_stream().cuda_stream,
               "capturing=%d" % torch.cuda.is_current_stream_capturing(), "device=" + p.x.device.type)
        if log and obs not in seen:
            seen.add(obs)
            log.write(" ".join(obs) + "\n")
        return conv_update_cuda(p, tuning)

    return {"name": "gpuprobe", "version": "test", "caps": ["graph"],
            "knobs": [("conv.block", "256|128|512", "channels per Triton program")],
            "ops": {"conv_update": conv_update}}
