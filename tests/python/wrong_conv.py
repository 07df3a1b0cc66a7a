"""wrong_conv.py (TEST ONLY): the example conv update (examples/python/conv_update.py) with every
output nudged by +8 bf16 ulps: its rows must be fail_numerics."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import conv_update as example  # noqa: E402


def conv_update(p, tuning):
    rc = example.conv_update_host(p, tuning)
    rows = p.slot_idx >= 0
    p.y[rows] = p.y[rows] + 8  # raw bf16 bits: 8 ulps up (the values are positive and far from 0)
    return rc


def linstate_impl(source, runtime):
    return {"name": "pywrong", "version": "test", "ops": {"conv_update": conv_update}}
