"""
sg_source.py — load SGLang's kernel modules from a source tree without `import sglang`.

A source is a version ("0.5.23": the pinned wheel's extracted files under
<repo>/.peers/src/sglang-<version>/) or a PATH holding `sglang/` (a checkout's `python/` folder or
a site-packages). `SourceTree.load(name)` imports one module of that tree, e.g.
"sglang.kernels.ops.mamba.triton_ops.mamba_ssm", with a private meta-path finder:

* a name in STUBS gets a small stub module (the SGLang internals the kernel files import: device
  and arch queries, SGLang's JIT loader); the stubbed names are listed in STUBS and returned by
  `stubbed()`;
* a package (a folder) gets an empty package whose __path__ is the folder: its __init__.py is not
  run (SGLang's package inits import the registry, server args, ...; `skipped_inits()` lists them);
* any other `sglang.*` name is the real file of the tree, recorded in `files()` (the bridge hashes
  them: the row's content hash).

Several trees may be loaded in one process (a before/after): each tree keeps its own `sglang.*`
modules; sys.modules holds those of the tree that loaded or ran last (`activate()`), so the lazy
imports inside SGLang's wrappers resolve to the same tree.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys
import types

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_CURRENT = None   # the SourceTree whose modules sys.modules holds now
VERSION_RE = re.compile(r"^[0-9]+(\.[0-9]+)+([a-z0-9.+-]*)$")


def _torch():
    return sys.modules.get("torch") or __import__("torch")


def _cuda_capability():
    t = _torch()
    if not t.cuda.is_available():
        return (0, 0)
    return tuple(t.cuda.get_device_capability())


# ------------------------------------------------------------------ the stubs (one per module)
# Each stub states what SGLang's own function returns on an NVIDIA CUDA build (sglang 0.5.23:
# kernels/jit/utils/{arch,common}.py, srt/utils/common.py). Nothing else of SGLang is emulated.

def _stub_jit_utils(m):
    def is_hip_runtime():
        return bool(_torch().version.hip)

    def is_arch_support_pdl():           # arch.py: not HIP/MUSA and the device's major >= 9
        return not is_hip_runtime() and _cuda_capability()[0] >= 9

    def cache_once(fn):                  # common.py: a result cache keyed by the arguments
        memo = {}

        def wrapper(*a, **kw):
            key = (a, tuple(sorted(kw.items())))
            if key not in memo:
                memo[key] = fn(*a, **kw)
            return memo[key]
        wrapper.__wrapped__ = fn
        return wrapper

    def _no_jit(*_a, **_kw):
        raise NotImplementedError("SGLang's C++/CUDA JIT loader (tvm-ffi) is not loaded by py_sglang")

    m.is_hip_runtime = is_hip_runtime
    m.is_arch_support_pdl = is_arch_support_pdl
    m.cache_once = cache_once
    m.load_jit = _no_jit
    m.make_cpp_args = _no_jit


def _stub_srt_utils(m):
    def is_hip():
        return _torch().version.hip is not None

    def is_cuda():
        t = _torch()
        return t.cuda.is_available() and t.version.cuda is not None

    def get_device_sm():
        major, minor = _cuda_capability()
        return major * 10 + minor

    def is_sm90_supported(device=None):  # common.py: CUDA, capability >= 9.0, CUDA >= 12.3
        return is_cuda() and _cuda_capability() >= (9, 0)

    m.is_hip = is_hip
    m.is_cuda = is_cuda
    m.get_device_sm = get_device_sm
    m.is_sm90_supported = is_sm90_supported
    m.is_gfx95_supported = lambda: False          # AMD only
    m.is_cpu = lambda: False
    m.is_npu = lambda: False
    m.is_xpu = lambda: False


def _stub_srt_utils_common(m):
    _stub_srt_utils(m)

    def get_device_core_count(device_id=0):
        t = _torch()
        return t.cuda.get_device_properties(device_id).multi_processor_count if t.cuda.is_available() else 0

    m.get_device_core_count = get_device_core_count
    ver = getattr(_torch(), "__version__", "0")
    m.torch_release = tuple(int(x) for x in re.findall(r"\d+", ver.split("+")[0])[:3])


STUBS = {
    "sglang.kernels.jit.utils": (_stub_jit_utils, ["is_arch_support_pdl", "is_hip_runtime", "cache_once",
                                                   "load_jit", "make_cpp_args"]),
    "sglang.srt.utils": (_stub_srt_utils, ["is_hip", "is_cuda", "get_device_sm", "is_sm90_supported",
                                           "is_gfx95_supported", "is_cpu", "is_npu", "is_xpu"]),
    "sglang.srt.utils.common": (_stub_srt_utils_common, ["get_device_core_count", "torch_release",
                                                         "is_hip", "is_cuda", "get_device_sm",
                                                         "is_sm90_supported"]),
}


def pinned_version(repo=REPO):
    """The sglang version peers/pins.txt pins (the source of a plain `py_sglang`)."""
    try:
        with open(os.path.join(repo, "peers", "pins.txt"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"\s*sglang\s*==\s*([^\s#]+)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    raise ValueError("py_sglang: no source given and no sglang pin in peers/pins.txt")


def resolve(source, repo=REPO):
    """(root holding sglang/, version string, git describe or "") for a `source` argument: a
    version, a PATH, or None / "" for the pinned version (the bridge passes absolute paths, and
    None to a module loaded with --impl-path)."""
    if source is None or source == "":
        source = pinned_version(repo)
    if VERSION_RE.match(source) and not os.path.isdir(source):
        root = os.path.join(repo, ".peers", "src", f"sglang-{source}")
        if not os.path.isdir(os.path.join(root, "sglang")):
            raise ValueError(f"sglang {source}: no extracted source at {root} (add sglang=={source} to "
                             "peers/pins.txt and run scripts/peers.sh fetch)")
        return root, f"sglang {source}", ""
    root = os.path.abspath(source)
    if os.path.isdir(os.path.join(root, "python", "sglang")):
        root = os.path.join(root, "python")       # a checkout's top folder
    if not os.path.isdir(os.path.join(root, "sglang")):
        raise ValueError(f"{source}: no sglang/ package folder there (give a checkout's python/ folder "
                         "or a site-packages)")
    return root, _version_of(root), _git_describe(root)


def _version_of(root):
    """'sglang X (root)' from sglang/_version.py (a wheel's or an installed tree's; a checkout
    has none: its git describe says which code it is)."""
    try:
        with open(os.path.join(root, "sglang", "_version.py"), encoding="utf-8") as f:
            m = re.search(r"^__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)", f.read(), re.M)
        if m:
            return f"sglang {m.group(1)} ({root})"
    except OSError:
        pass
    m = re.match(r"sglang-([0-9][^/]*)$", os.path.basename(root.rstrip("/")))
    if m:  # .peers/src/sglang-<version>/ extracted before _version.py was
        return f"sglang {m.group(1)} ({root})"
    return f"sglang ({root})"


def _git(root, *args):
    try:
        r = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return ""
    return r.stdout.strip() if r.returncode == 0 else ""


def _git_describe(root):
    """`git describe` when root is a checkout (its top folder, or its python/ folder); "" for a
    folder that merely lies inside some other repository (e.g. .peers/src in linstate's own)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    top = os.path.realpath(top) if top else ""
    here = os.path.realpath(root)
    if not top or (top != here and not (os.path.basename(here) == "python" and top == os.path.dirname(here))):
        return ""
    return _git(root, "describe", "--always", "--dirty", "--tags")


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, tree):
        self.tree = tree

    def find_spec(self, name, path=None, target=None):
        if name != "sglang" and not name.startswith("sglang."):
            return None
        t = self.tree
        if name in STUBS:  # a package when another stub lives under it (sglang.srt.utils.common)
            return importlib.machinery.ModuleSpec(name, self, is_package=any(k.startswith(name + ".") for k in STUBS))
        rel = os.path.join(t.root, *name.split("."))
        if os.path.isdir(rel) or any(k.startswith(name + ".") for k in STUBS):  # a stub's parents too
            spec = importlib.machinery.ModuleSpec(name, self, is_package=True)
            spec.submodule_search_locations = [rel]
            return spec
        if os.path.isfile(rel + ".py"):
            return importlib.util.spec_from_file_location(name, rel + ".py")
        raise ImportError(f"py_sglang: {name} is neither in {t.root} nor stubbed "
                          f"(extend scripts/peers.sh's sglang subtrees or the STUBS of sg_source.py)",
                          name=name)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        if name in STUBS:
            STUBS[name][0](module)
            module.__py_sglang_stub__ = True
            return
        module.__path__ = [os.path.join(self.tree.root, *name.split("."))]   # package: init not run
        self.tree._skipped.append(name)


class SourceTree:
    def __init__(self, source, repo=REPO):
        self.root, self.version, self.git_describe = resolve(source, repo)
        self.source = source
        self._mods = {}
        self._skipped = []
        self._finder = _Finder(self)

    def activate(self):
        """Makes sys.modules hold this tree's sglang.* modules, with its finder first on
        sys.meta_path (SGLang's wrappers import lazily, e.g. fused_recurrent.py's CUDA KDA path).
        Cheap when the tree is already current (one identity test): call it before each op."""
        global _CURRENT
        if _CURRENT is self:
            return
        if _CURRENT is not None:
            _CURRENT._collect()
            sys.meta_path.remove(_CURRENT._finder)
        for k in [k for k in sys.modules if k == "sglang" or k.startswith("sglang.")]:
            del sys.modules[k]             # a real sglang imported by someone else: not ours
        sys.modules.update(self._mods)
        sys.meta_path.insert(0, self._finder)
        _CURRENT = self

    def _collect(self):
        for k in [k for k in sys.modules if k == "sglang" or k.startswith("sglang.")]:
            self._mods[k] = sys.modules.pop(k)

    def load(self, name):
        self.activate()
        mod = importlib.import_module(name)
        self._mods.update({k: v for k, v in sys.modules.items() if k == "sglang" or k.startswith("sglang.")})
        return mod

    def files(self):
        """Absolute paths of the real source files loaded (sorted): what the content hash covers."""
        out = []
        for m in self._mods.values():
            f = getattr(m, "__file__", None)
            if f and not getattr(m, "__py_sglang_stub__", False):
                out.append(os.path.abspath(f))
        return sorted(set(out))

    def stubbed(self):
        """'module.name' for every stubbed name this tree's modules imported."""
        return sorted(f"{mod}.{n}" for mod, (_f, names) in STUBS.items() if mod in self._mods for n in names)

    def skipped_inits(self):
        return sorted(set(self._skipped))
