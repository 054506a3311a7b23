"""Loops the Python tests register (test_loops.py; a node program imports this module with
``python3 -m syncpoint --import loops_for_tests node ...``)."""

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
