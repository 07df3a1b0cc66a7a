"""Loading vLLM's kernel modules from an extracted source tree without `import vllm`.

vLLM's Triton kernels live in ordinary modules whose imports reach deep into vLLM (config,
platforms, envs, the custom-op registry). We import only the few kernel files the py_vllm impl
calls, with the smallest stand-ins for the vLLM modules those files import (STUBBED below), and
with every package between `vllm` and the file replaced by an empty package (its __init__.py,
which would import half of vLLM, is never run).

Each call of load() imports a fresh copy under the real names (`vllm....`, which the files'
absolute imports need), then takes those names out of sys.modules again: two instances built
from two source trees in one process keep two sets of modules, and a real vLLM imported later is
not shadowed. No torch is imported here; the kernel files import it themselves.
"""
import contextlib
import importlib
import logging
import os
import re
import sys
import types

# Paths inside the wheel (= inside the extracted tree) of the kernel files py_vllm calls.
KERNEL_FILES = {
    "fla_fused_recurrent": "vllm/third_party/flash_linear_attention/ops/fused_recurrent.py",
    "fla_sigmoid_gating": "vllm/third_party/flash_linear_attention/ops/fused_sigmoid_gating.py",
    "kda_fused_recurrent": "vllm/models/kimi_k3/nvidia/ops/third_party/kda/fused_recurrent.py",
    "conv1d": "vllm/model_executor/layers/mamba/ops/causal_conv1d.py",
    "mamba_ssm": "vllm/model_executor/layers/mamba/ops/mamba_ssm.py",
}
# Files those import from the tree as they are (not stubbed).
DEPENDENCY_FILES = [
    "vllm/third_party/flash_linear_attention/ops/op.py",
    "vllm/third_party/flash_linear_attention/ops/utils.py",
    "vllm/model_executor/layers/mamba/ops/triton_helpers.py",
    "vllm/utils/math_utils.py",
]
# The SSU launch tables (per GPU name, head_dim, dstate, cache dtype) mamba_ssm.py reads.
SSU_CONFIG_DIR = "vllm/model_executor/layers/mamba/ops/configs/selective_state_update"

# vLLM modules replaced by stand-ins (the names the kernel files import from them).
STUBBED = {
    "vllm.envs": ["VLLM_TUNED_CONFIG_FOLDER", "VLLM_TRITON_FORCE_FIRST_CONFIG"],
    "vllm.logger": ["init_logger"],
    "vllm._custom_ops": [],
    "vllm.platforms": ["current_platform"],
    "vllm.triton_utils": ["triton", "tl", "tldevice", "HAS_TRITON"],
    "vllm.utils.platform_utils": ["get_device_name_as_file_name", "num_compute_units"],
    "vllm.v1.attention.backends.utils": ["NULL_BLOCK_ID", "PAD_SLOT_ID"],
}
# vLLM's values (vllm/v1/attention/backends/utils.py): block 0 is the null block.
NULL_BLOCK_ID = 0
PAD_SLOT_ID = -1


def source_root(source, repo_root, pin):
    """The directory holding `vllm/` for an instance's source argument.

    None or a version ("0.33.0", "vllm-0.33.0") -> repo_root/.peers/src/vllm-<version>;
    otherwise a path: a directory holding vllm/ (an extracted wheel, a site-packages, a
    checkout) or the vllm/ package directory itself. Raises ValueError naming the value."""
    if source is None or source == "":
        source = pin
    if re.fullmatch(r"(vllm-)?[0-9][0-9A-Za-z.+-]*", source) and not os.path.exists(source):
        ver = source[len("vllm-"):] if source.startswith("vllm-") else source
        root = os.path.join(repo_root, ".peers", "src", "vllm-" + ver)
    else:
        root = os.path.abspath(source)
        if os.path.basename(root.rstrip(os.sep)) == "vllm" and not os.path.isdir(os.path.join(root, "vllm")):
            root = os.path.dirname(root.rstrip(os.sep))
    missing = [f for f in list(KERNEL_FILES.values()) + DEPENDENCY_FILES
               if not os.path.isfile(os.path.join(root, f))]
    if missing:
        raise ValueError(f"vllm source {source!r}: {os.path.join(root, missing[0])} missing "
                         f"(run scripts/peers.sh fetch, or give a tree holding vllm/)")
    return root


class Platform:
    """Stand-in for vllm.platforms.current_platform: CUDA only; capability and name from a
    `device` callable (returns (major, minor, name, sm_count)) read lazily, at the first kernel
    call that asks (module import never touches the GPU)."""

    def __init__(self, device):
        self._device = device
        self._info = None

    def _get(self):
        if self._info is None:
            self._info = self._device()
        return self._info

    def is_cuda(self):
        return True

    def is_cuda_alike(self):
        return True

    def is_rocm(self):
        return False

    def is_cpu(self):
        return False

    def is_xpu(self):
        return False

    def get_device_capability(self, device_id=0):
        return types.SimpleNamespace(major=self._get()[0], minor=self._get()[1])

    def is_device_capability(self, cap, device_id=None):
        major, minor = self._get()[:2]
        return major * 10 + minor == cap

    def is_device_capability_family(self, cap, device_id=None):
        return self._get()[0] == cap // 10

    def has_device_capability(self, cap, device_id=None):
        major, minor = self._get()[:2]
        return major * 10 + minor >= cap

    def is_arch_support_pdl(self):
        # vLLM: PDL on CUDA from sm_90 on
        return self._get()[0] >= 9

    def get_device_name(self, device_id=0):
        return self._get()[2]

    def num_compute_units(self, device_id=0):
        return self._get()[3]


class _Logger(logging.LoggerAdapter):
    """vllm.logger's loggers also have info_once / warning_once / debug_once."""

    def __getattr__(self, name):
        if name.endswith("_once"):
            return getattr(self, name[:-len("_once")])
        raise AttributeError(name)


def _init_logger(name):
    return _Logger(logging.getLogger(name), {})


def _device_from_torch():
    import torch  # only when a kernel first asks for the device
    i = torch.cuda.current_device()
    p = torch.cuda.get_device_properties(i)
    return (p.major, p.minor, torch.cuda.get_device_name(i), p.multi_processor_count)


def _module(name, path=None, **attrs):
    m = types.ModuleType(name)
    if path is not None:
        m.__path__ = [path]
    m.__dict__.update(attrs)
    return m


def _stubs(root, platform):
    import triton
    import triton.language as tl
    import triton.language.extra.libdevice as tldevice

    def device_file_name(device_id=0):
        # vllm/utils/platform_utils.py: spaces and slashes -> "_"
        return re.sub(r"[\s/]+", "_", platform.get_device_name(device_id))

    return {
        "vllm.envs": _module("vllm.envs", VLLM_TUNED_CONFIG_FOLDER=None, VLLM_TRITON_FORCE_FIRST_CONFIG=False),
        "vllm.logger": _module("vllm.logger", init_logger=_init_logger),
        "vllm._custom_ops": _module("vllm._custom_ops"),
        "vllm.platforms": _module("vllm.platforms", current_platform=platform),
        "vllm.triton_utils": _module("vllm.triton_utils", triton=triton, tl=tl, tldevice=tldevice,
                                     HAS_TRITON=True),
        "vllm.utils.platform_utils": _module("vllm.utils.platform_utils",
                                             get_device_name_as_file_name=device_file_name,
                                             num_compute_units=platform.num_compute_units),
        "vllm.v1.attention.backends.utils": _module("vllm.v1.attention.backends.utils",
                                                    NULL_BLOCK_ID=NULL_BLOCK_ID, PAD_SLOT_ID=PAD_SLOT_ID),
    }


def _packages(root, files):
    """Empty package modules for every directory between vllm/ and the files (and the stubs)."""
    names = set()
    for f in files:
        parts = f[:-3].split("/")[:-1]
        for i in range(1, len(parts) + 1):
            names.add(".".join(parts[:i]))
    for s in STUBBED:
        parts = s.split(".")[:-1]
        for i in range(1, len(parts) + 1):
            names.add(".".join(parts[:i]))
    return {n: _module(n, os.path.join(root, *n.split("."))) for n in sorted(names)}


@contextlib.contextmanager
def _isolated(prefix):
    """sys.modules without any `prefix` module inside the block; restored afterwards."""
    def ours(k):
        return k == prefix or k.startswith(prefix + ".")
    saved = {k: v for k, v in sys.modules.items() if ours(k)}
    for k in saved:
        del sys.modules[k]
    try:
        yield
    finally:
        for k in [k for k in sys.modules if ours(k)]:
            del sys.modules[k]
        sys.modules.update(saved)


def load(root, device=_device_from_torch):
    """Imports the KERNEL_FILES from `root` (see source_root). Returns (modules, platform):
    modules maps each KERNEL_FILES key to its module object."""
    platform = Platform(device)
    files = list(KERNEL_FILES.values()) + DEPENDENCY_FILES
    mods = {}
    with _isolated("vllm"):
        sys.modules.update(_packages(root, files))
        sys.modules.update(_stubs(root, platform))
        for key, f in KERNEL_FILES.items():
            mods[key] = importlib.import_module(f[:-3].replace("/", "."))
    return mods, platform


def source_files(root):
    """Absolute paths of every source file load() executes (the bridge hashes them)."""
    return [os.path.join(root, f) for f in list(KERNEL_FILES.values()) + DEPENDENCY_FILES]
