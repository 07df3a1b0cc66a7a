"""null_slot.py (TEST ONLY): the example conv update declaring "null_slot0" (vLLM's null block 0)
that raises when a call hands it slot 0: the bench must hold slot 0 out of every batch it draws,
verification's sample rows included (docs/plugin-abi.md, LS_IMPL_NULL_SLOT0)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import conv_update as example  # noqa: E402


def conv_update(p, tuning):
    if (p.slot_idx == 0).any():
        raise ValueError("slot 0 (the null block) handed to an impl that reserves it: %s" % list(p.slot_idx))
    return example.conv_update_host(p, tuning)


def linstate_impl(source, runtime):
    return {"name": "pynull", "version": "test", "caps": ["null_slot0"], "ops": {"conv_update": conv_update}}
