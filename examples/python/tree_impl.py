"""tree_impl.py: a Python impl that times the kernels of a source folder you name, so two versions
of your code (before and after a change) run side by side in one process (docs/plugin-abi.md,
"A source tree, before and after"). Copy it, set KERNELS to the file of your tree that holds the
ops, and run
    linstate-bench --impl-path tree_impl.py --impl tree@before=DIR_A,tree@after=DIR_B ... --out run.csv
    scripts/compare.py run.csv --impls tree@before:tree@after
Each instance loads DIR/KERNELS under a module name of its own: a plain `import` would hand the
second instance the first one's module. KERNELS defines any of OPS as `f(p, tuning)` (numpy arrays
on the host runtime, torch tensors on cuda); the others are skipped:unsupported. It may import
installed packages and this folder's modules; other files of its own tree it must load the same
way. Optional: VERSION (the impl_version column), RUNTIMES (default host only), CAPS.
Without a source (`--impl-path` loads the module once with None) it reads tree_kernels.py here.
"""
import importlib.util
import itertools
import os
import sys

KERNELS = "tree_kernels.py"  # relative to the source folder
OPS = ("conv_update", "gdn", "kda", "ssu", "state_copy", "state_accept", "state_zero", "conv_delta")
_instances = itertools.count(1)


def load(path):
    """The module of one file, under a name no other instance has."""
    spec = importlib.util.spec_from_file_location("tree_kernels_%d" % next(_instances), path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an import would: dataclasses, pickle, ... find it there
    spec.loader.exec_module(module)
    return module


def linstate_impl(source, runtime):
    folder = source or os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(folder, KERNELS)
    if not os.path.isfile(path):
        raise FileNotFoundError("%s has no %s" % (folder, KERNELS))
    k = load(path)
    runtimes = getattr(k, "RUNTIMES", ("host",))
    if runtime not in runtimes:
        raise RuntimeError("%s runs on %s, not %s" % (path, ", ".join(runtimes), runtime))
    return {
        "name": "tree",
        "version": "tree " + getattr(k, "VERSION", "-"),
        "source": {"path": folder, "files": [path]},
        "caps": list(getattr(k, "CAPS", ())),
        "ops": {op: getattr(k, op) for op in OPS if hasattr(k, op)},
    }
