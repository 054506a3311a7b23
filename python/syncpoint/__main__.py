"""``python3 -m syncpoint COMMAND [options]``: the ``syncpoint`` command, run by this Python.

A node program in Python is this module: the loops and protocols that the
imported modules register are known to its workers and coordinators, as a C++
program's own main() calling command_main makes them known (docs/python.md).
"""

import importlib
import runpy
import signal
import sys

import syncpoint  # registers what the package adds (WorkerClient's pull and push, the child-process program)
from syncpoint import _syncpoint as _core


def main(argv=None):
    """Runs the command with argv (default: this process's arguments); returns its exit status.
    Leading ``--import MODULE`` (or ``--import FILE.py``) imports what registers loops, models or
    protocols first: ``python3 -m syncpoint --import my_loops node --join HOST:PORT``."""
    args = list(sys.argv[1:] if argv is None else argv)
    syncpoint._importing_for_child = True
    try:
        while len(args) >= 2 and args[0] == "--import":
            what = args[1]
            del args[:2]
            if what.endswith(".py"):
                runpy.run_path(what, run_name="__syncpoint_main__")
            else:
                importlib.import_module(what)
    finally:
        syncpoint._importing_for_child = False
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as the command's: those that catch it install their own
    sys.stdout.flush()
    sys.stderr.flush()
    return _core._command_main(["syncpoint"] + args)


if __name__ == "__main__":
    sys.exit(main())
