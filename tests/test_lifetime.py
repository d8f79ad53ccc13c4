"""loader/lifetime.py: processes that end with their parent, and a parent that reaps its
orphaned descendants itself (the `serve` supervisor: loader/serve/supervisor.py)."""

import subprocess
import sys

import pytest

# in a process of its own (a subreaper stays one for life): a child that starts a grandchild
# and exits at once; the grandchild must be re-parented to this process, not to PID 1, so
# that this process can reap it
ADOPTION = """
import os, signal, subprocess, sys
from pathlib import Path
from loader.lifetime import adopt_orphans
adopt_orphans()
child = subprocess.run(
    ["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], capture_output=True, text=True, check=True
)
grandchild = int(child.stdout)
stat = Path(f"/proc/{grandchild}/stat").read_text()
parent = int(stat.rpartition(")")[2].split()[1])
os.kill(grandchild, signal.SIGKILL)
reaped, _ = os.waitpid(grandchild, 0)
print(parent == os.getpid(), reaped == grandchild)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux prctl")
def test_orphans_are_adopted_by_the_process_that_asks_for_them():
    result = subprocess.run(
        [sys.executable, "-c", ADOPTION], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True"]
