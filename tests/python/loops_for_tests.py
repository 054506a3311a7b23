"""Loops the Python tests register (test_loops.py; a node program imports this module with
``python3 -m syncpoint --import loops_for_tests node ...``)."""

import os

import torch

import syncpoint

syncpoint.register_weights("py-line", 2)


@syncpoint.client_loop("py-fit-line")
def fit_line(ps):
    """Least squares of y = 3x + 1 from noisy samples, each worker on data of its own."""
    rng = torch.Generator().manual_seed(ps.seed * 1000 + ps.worker)
    while True:
        w = ps.pull()
        x = torch.randn(32, generator=rng)
        y = 3 * x + 1 + 0.1 * torch.randn(32, generator=rng)
        e = w[0] + w[1] * x - y
        answer = ps.push(torch.stack([e.mean(), (e * x).mean()]), 32, float((e * e).mean()))
        if answer.stop:
            return


@syncpoint.client_loop("py-raises")
def raises(ps):
    ps.pull()
    if ps.worker == 1:
        raise ZeroDivisionError("worker 1 divided by zero")
    while not ps.push(torch.zeros(2), 32).stop:
        ps.pull()


@syncpoint.client_loop("py-returns-early")
def returns_early(ps):
    ps.pull()
    ps.push(torch.zeros(2), 32)


@syncpoint.client_loop("py-fit-line-says-pid")
def fit_line_says_pid(ps):
    """py-fit-line, each worker first putting its process's id in the trace ("metric" "pid")."""
    ps.report("pid", os.getpid())
    fit_line(ps)


class MarksPid(syncpoint.Protocol):
    """asp, its coordinator's process id marked in the trace at the start ("where", note the pid)."""

    def on_start(self, c):
        c.mark("where", str(os.getpid()), 0.0)
        super().on_start(c)

    def on_push(self, c, w):
        c.release(w)


syncpoint.register_protocol("py-asp-marks-pid", "asp, marking where its coordinator runs", MarksPid)


@syncpoint.client_loop("py-fit-line-tells")
def fit_line_tells(ps):
    """py-fit-line, worker 0 writing a byte to the pipe SYNCPOINT_TEST_RUNNING names after its first push:
    proof that the job runs, for a test that stops it then."""
    w = ps.pull()
    answer = ps.push(torch.zeros(2), 32)
    if ps.worker == 0:
        with open(os.environ["SYNCPOINT_TEST_RUNNING"], "wb") as running:
            running.write(b"r")
    if not answer.stop:
        fit_line(ps)
