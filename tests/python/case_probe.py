"""case_probe.py (TEST ONLY): the example conv update keeping a copy of x per input address, as
py_sglang keeps its packed layouts, dropped by case_begin; it logs "case" at each case_begin and
"op PTR" at each call to SRC/probe.log (--impl caseprobe@log=DIR). Without the bench's
case_begin a later case at the same address would compute on the last case's x."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python"))
import conv_update as example  # noqa: E402


def linstate_impl(source, runtime):
    # --impl-path reads the table with source None; the instance caseprobe@log=DIR gets DIR
    log = open(os.path.join(source, "probe.log"), "a", buffering=1) if source else open(os.devnull, "w")
    kept = {}

    class View:  # p with x replaced by the kept copy
        def __init__(self, p, x):
            self._p, self.x = p, x

        def __getattr__(self, name):
            return getattr(self._p, name)

    def case_begin():
        kept.clear()
        log.write("case\n")

    def conv_update(p, tuning):
        key = (p.x.__array_interface__["data"][0], p.x.shape)
        if key not in kept:
            kept[key] = np.array(p.x)
        log.write("op %d\n" % key[0])
        return example.conv_update_host(View(p, kept[key]), tuning)

    return {"name": "caseprobe", "version": "test", "ops": {"conv_update": conv_update},
            "case_begin": case_begin}
