#!/usr/bin/env python3
"""scripts/peers.sh fetch, offline, on a fake pinned wheel in a scratch copy of the layout it
expects (scripts/peers.sh, peers/pins.txt, .peers/wheels/): the first fetch extracts the package's
subtrees; a second leaves the folder as it is ("up to date", no file rewritten: setup.sh runs it
on every build); a folder extracted from another wheel, or without the stamp (an older fetch),
is extracted again.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS_SH = os.path.join(HERE, "..", "..", "scripts", "peers.sh")


class PeersFetch(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        root = self.root = self._tmp.name
        os.makedirs(os.path.join(root, "scripts"))
        shutil.copy(PEERS_SH, os.path.join(root, "scripts", "peers.sh"))
        os.makedirs(os.path.join(root, "peers"))
        with open(os.path.join(root, "peers", "pins.txt"), "w") as f:
            f.write("fla-core==9.9  # a fake pin\n")
        self.wheels = os.path.join(root, ".peers", "wheels")
        os.makedirs(self.wheels)
        self.wheel("fla_core-9.9-py3-none-any.whl", "v1")
        self.dest = os.path.join(root, ".peers", "src", "fla-core-9.9")

    def tearDown(self):
        self._tmp.cleanup()

    def wheel(self, name, text):
        with zipfile.ZipFile(os.path.join(self.wheels, name), "w") as z:
            z.writestr("fla/utils.py", text)
            z.writestr("fla/ops/kda/k.py", text)
            z.writestr("fla/other.py", "not a subtree\n")

    def fetch(self):
        p = subprocess.run(["bash", os.path.join(self.root, "scripts", "peers.sh"), "fetch"],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stderr

    def test_second_fetch_leaves_the_tree(self):
        err = self.fetch()
        self.assertIn("2 files -> .peers/src/fla-core-9.9", err)
        utils = os.path.join(self.dest, "fla", "utils.py")
        self.assertFalse(os.path.exists(os.path.join(self.dest, "fla", "other.py")))
        os.utime(utils, (1, 1))  # a rewrite would bring the time back to now
        err = self.fetch()
        self.assertIn(".peers/src/fla-core-9.9 is up to date", err)
        self.assertEqual(os.stat(utils).st_mtime, 1)

    def test_another_wheel_or_no_stamp_extracts_again(self):
        self.fetch()
        os.remove(os.path.join(self.wheels, "fla_core-9.9-py3-none-any.whl"))
        self.wheel("fla_core-9.9-py3-none-manylinux.whl", "v2")  # another build of the pin
        self.assertIn("2 files ->", self.fetch())
        with open(os.path.join(self.dest, "fla", "utils.py")) as f:
            self.assertEqual(f.read(), "v2")
        os.remove(os.path.join(self.dest, ".extracted-from"))
        self.assertIn("2 files ->", self.fetch())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
