"""The preamble the AOT tests share: where the fetched sources are, and exit 77 (CTest skip)
when triton 3.6 or one of the package's files is absent."""
import os
import sys


def sources(root, pkg, rels):
    """The .peers/src folder (LS_PEERS_SRC overrides) after checking triton 3.6.x and that
    pkg/rel exists for every rel; exits 77 with a SKIP line otherwise."""
    src = os.environ.get("LS_PEERS_SRC") or os.path.join(root, ".peers", "src")
    try:
        import triton
    except ImportError:
        print("SKIP: python3 has no triton (pip install triton==3.6.0)")
        sys.exit(77)
    if not triton.__version__.startswith("3.6."):
        print(f"SKIP: triton {triton.__version__}, the pinned kernels need 3.6.x")
        sys.exit(77)
    for rel in rels:
        f = os.path.join(src, pkg, rel)
        if not os.path.exists(f):
            print(f"SKIP: {f} missing (run scripts/peers.sh fetch)")
            sys.exit(77)
    return src
