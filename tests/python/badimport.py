"""badimport.py (TEST ONLY): a module whose import fails."""
import linstate_no_such_module  # noqa: F401


def linstate_impl(source, runtime):
    return {}
