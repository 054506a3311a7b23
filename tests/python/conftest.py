"""A cluster of Python programs on loopback for the tests: `python3 -m syncpoint --import
loops_for_tests head|node ...`, on a free port the head picks, each process killed by its pid at the
end. A start waits for the line that proves the process is ready, with a deadline for hangs only."""

import os
import queue
import signal
import subprocess
import sys
import threading

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
HANG_DEADLINE_S = 120


class Process:
    def __init__(self, args, log):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([HERE] + [p for p in sys.path if p])
        self.log = open(log, "w")
        self.popen = subprocess.Popen([sys.executable, "-m", "syncpoint", "--import", "loops_for_tests"] + args,
                                      stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True, env=env)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.popen.stdout:
            self.log.write(line)
            self.log.flush()
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, words):
        while True:
            try:
                line = self.lines.get(timeout=HANG_DEADLINE_S)
            except queue.Empty:
                raise AssertionError("no '%s' within %d s" % (words, HANG_DEADLINE_S))
            if line is None:
                raise AssertionError("the process ended (status %s) before '%s'" % (self.popen.wait(), words))
            if words in line:
                return line

    def kill(self):
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
        self.log.close()


class Cluster:
    def __init__(self, folder):
        self.folder = folder
        self.processes = []
        self.address = None

    def start_head(self):
        head = Process(["head", "--host", "127.0.0.1", "--port", "0", "--runs", str(self.folder / "head-runs")],
                       self.folder / "head.log")
        self.processes.append(head)
        line = head.wait_for("listening on")
        self.address = line.split("listening on", 1)[1].split()[0]
        return self.address

    def start_node(self, name, slots):
        node = Process(["node", "--join", self.address, "--name", name, "--slots", str(slots)],
                       self.folder / ("node-%s.log" % name))
        self.processes.append(node)
        node.wait_for("joined the head")
        return node

    def stop(self):
        for p in reversed(self.processes):
            p.kill()


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    try:
        yield c
    finally:
        c.stop()
