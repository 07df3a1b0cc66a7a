"""A stand-in `torch` module, so that a peer's kernel file can be imported where torch is not
installed (the host tests, the ahead-of-time compile of FlashInfer's CuTe-DSL kernels). Kernel
files touch torch at import only for annotations (`torch.Tensor`), base classes
(`torch.autograd.Function`) and dtype constants: every attribute of the stand-in, at any depth, is
one class that can be subclassed and called. Never used where torch is installed."""
import sys
import types


class _Meta(type):
    def __getattr__(cls, name):
        return cls

    def __call__(cls, *args, **kwargs):
        return cls


class Anything(metaclass=_Meta):
    pass


def install():
    """Puts the stand-in at sys.modules["torch"] (and torch.nn) unless a torch is there already;
    returns the module in place."""
    if "torch" in sys.modules:
        return sys.modules["torch"]
    torch = types.ModuleType("torch")
    torch.__getattr__ = lambda name: Anything
    torch.nn = types.ModuleType("torch.nn")
    torch.nn.__getattr__ = lambda name: Anything
    sys.modules["torch"] = torch
    sys.modules["torch.nn"] = torch.nn
    return torch
