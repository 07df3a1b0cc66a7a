"""raise_impl.py (TEST ONLY): ops that fail in each way a Python op can. conv_update raises,
state_copy returns 7 (a failure), state_accept and state_zero answer 2 (unsupported: skipped, not
a failure)."""


def conv_update(p, tuning):
    raise ValueError(f"planted failure in conv_update (B={p.batch})")


def linstate_impl(source, runtime):
    return {"name": "pyraise", "version": "test",
            "ops": {"conv_update": conv_update, "state_copy": lambda p, t: 7, "state_accept": lambda p, t: 2,
                    "state_zero": lambda p, t: 2}}
