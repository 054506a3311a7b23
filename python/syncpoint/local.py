"""A process a worker on this machine: ``train(worker_processes=True, ...)``.

A head and one node of one slot per worker, each this interpreter running ``python3 -m syncpoint``
and importing the modules that registered loops, models and protocols here (``_program()``), on
loopback, with a token made for the run. train() submits the job to the head and gets its result
back as a one-process run's. Python loops then share no GIL: in one interpreter, each torch operator
hands the GIL between the loops (docs/python.md, "A process a worker").
"""

import collections
import ctypes
import os
import queue
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    # In the child, before exec: a parent killed outright (SIGKILL) takes its head and nodes with it.
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class _Child:
    """A process whose output goes to a log, read line by line for the words that prove it ready."""

    def __init__(self, argv, log_path):
        self.log_path = log_path
        self.log = open(log_path, "w")
        # Its own session: a terminal's Ctrl-C reaches train() alone, which stops the job through the head.
        self.popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, start_new_session=True,
                                      preexec_fn=_die_with_parent)
        self.lines = queue.Queue()
        self.tail = collections.deque(maxlen=20)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.popen.stdout:
            self.log.write(line)
            self.log.flush()
            self.tail.append(line.rstrip())
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, words, deadline):
        """The line holding `words`; RuntimeError when the child ends first or by the deadline."""
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise RuntimeError("%s did not say '%s' in time; its last lines: %s"
                                   % (self.name(), words, " | ".join(self.tail))) from None
            if line is None:
                self.popen.wait()
                raise RuntimeError("%s ended (status %s) before saying '%s'; its last lines: %s"
                                   % (self.name(), self.popen.returncode, words, " | ".join(self.tail)))
            if words in line:
                return line

    def name(self):
        return "the worker processes' " + os.path.basename(self.log_path)[:-4]

    def stop(self):
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.reader.join(timeout=5)
        self.log.close()


class LocalCluster:
    """A head and `workers` one-slot nodes on loopback, started by start(workers) and ended by close()."""

    def __init__(self, program, data_dir=None, ready_s=120):
        self.program = program
        self.data_dir = data_dir
        self.ready_s = ready_s
        self.folder = tempfile.mkdtemp(prefix="syncpoint-processes-")  # 0700: the token file lives here
        self.children = []

    def start(self, workers):
        """Starts the head, then the nodes together; (HOST:PORT, token) once all have joined."""
        token = secrets.token_hex(32)
        token_file = os.path.join(self.folder, "token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
            f.write(token + "\n")
        access = ["--token-file", token_file] + (["--data", os.fspath(self.data_dir)] if self.data_dir else [])
        deadline = time.monotonic() + self.ready_s
        head = self._spawn(["head", "--host", "127.0.0.1", "--port", "0", "--runs",
                            os.path.join(self.folder, "runs")] + access, "head")
        address = head.wait_for("listening on", deadline).split("listening on", 1)[1].split()[0]
        nodes = [self._spawn(["node", "--join", address, "--name", "worker%d" % n, "--slots", "1"] + access,
                             "worker%d" % n) for n in range(workers)]
        for node in nodes:
            node.wait_for("joined the head", deadline)
        return address, token

    def _spawn(self, args, name):
        child = _Child(self.program + args, os.path.join(self.folder, name + ".log"))
        self.children.append(child)
        return child

    def close(self):
        """Ends the head and the nodes (by pid), then removes their folder."""
        for child in reversed(self.children):
            child.stop()
        self.children = []
        shutil.rmtree(self.folder, ignore_errors=True)
