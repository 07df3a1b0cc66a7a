"""srcdemo.py (TEST ONLY): a Python impl that runs the code of a source tree given as @PATH, as
py_sglang runs SGLang's. The tree holds conv_kernels.py (tests/python/srcdemo_tree.py is the
template the tests copy), loaded under a name of its own per instance, so two trees run side by
side in one process. Without a source it runs the template itself."""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
import conv_update as example  # noqa: E402
from tree_kernels import state_accept, state_copy, state_zero  # noqa: E402  (numpy state ops)

_n = 0


def linstate_impl(source, runtime):
    global _n
    if runtime != "host":
        raise RuntimeError("srcdemo runs on the host runtime only")
    path = os.path.join(source, "conv_kernels.py") if source else os.path.join(HERE, "srcdemo_tree.py")
    _n += 1
    spec = importlib.util.spec_from_file_location(f"srcdemo_tree_{_n}", path)
    tree = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tree)
    return {
        "name": "srcdemo",
        "version": f"srcdemo tree {tree.VERSION}",
        "source": {"path": source or HERE, "files": [path]},
        "ops": {"conv_update": lambda p, t: tree.conv_update(p, t, example.conv_update_host),
                "state_copy": state_copy, "state_accept": state_accept, "state_zero": state_zero},
        "layout": lambda op: f"{op}: linstate's views",
    }
