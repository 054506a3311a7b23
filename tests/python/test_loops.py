"""Worker loops written in Python (@syncpoint.client_loop): least squares trained to its answer, the
same bytes run after run on the virtual clock and in compare's child processes, errors ending the run
with the exception's line, and a cluster whose head and nodes are Python programs."""

import json
import os
import subprocess
import sys

import pytest
import torch

import syncpoint

sys.path.insert(0, os.path.dirname(__file__))
import loops_for_tests  # noqa: E402,F401  registers py-line, py-fit-line, py-raises, py-returns-early

JOB = dict(model="py-line", loop="py-fit-line", protocol="ssp", workers=4, epochs=0.5, seed=3, progress=False)


def test_a_python_loop_fits_the_line():
    r = syncpoint.train(**JOB)
    w = r.final_weights
    assert abs(w[0] - 1) < 0.05 and abs(w[1] - 3) < 0.05, w
    assert r.samples >= 30000


def test_a_python_loop_runs_the_same_bytes_every_time_and_in_a_child_process(tmp_path):
    a = syncpoint.train(**JOB)
    b = syncpoint.train(**JOB)
    assert a.summary == b.summary and a.trace == b.trace and torch.equal(a.final_weights, b.final_weights)
    # compare's runs after the first are child processes, which import this test's loops module:
    # the same bytes as all in this process.
    job = dict(JOB, protocols="ssp,asp")
    del job["protocol"]
    children = syncpoint.compare(**job, jobs=2, out=tmp_path / "children")
    here = syncpoint.compare(**job, jobs=1, out=tmp_path / "here")
    for name in ("ssp", "asp"):
        assert (tmp_path / "children" / name / "summary.json").read_bytes() == \
            (tmp_path / "here" / name / "summary.json").read_bytes()
    assert children.runs["asp"].samples > 0


def test_an_exception_in_a_loop_ends_the_run_with_its_line(tmp_path):
    with pytest.raises(syncpoint.RunFailed) as e:
        syncpoint.train(**dict(JOB, loop="py-raises", out=tmp_path / "out"))
    assert "user_loop_failed" in str(e.value)
    assert "worker 1's loop failed: ZeroDivisionError: worker 1 divided by zero" in str(e.value)
    assert e.value.result.samples < syncpoint.train(**JOB).samples  # ended early, as the result says
    assert not (tmp_path / "out").exists()  # and wrote nothing


def test_a_loop_returning_before_the_stop_ends_the_run():
    with pytest.raises(syncpoint.RunFailed, match="the loop returned before the job ended"):
        syncpoint.train(**dict(JOB, loop="py-returns-early"))


def test_a_name_registered_twice_is_refused():
    with pytest.raises(ValueError, match="a loop named 'py-fit-line' is registered already"):
        syncpoint.client_loop("py-fit-line")(lambda ps: None)


def test_a_cluster_of_python_programs_trains_with_a_python_loop(tmp_path, cluster):
    head = cluster.start_head()
    for name in ("a", "b"):
        cluster.start_node(name, slots=2)
    r = syncpoint.submit(head=head, **dict(JOB, epochs=0.25, out=tmp_path / "run"))
    assert r.summary["workers"] == 4 and r.samples > 0
    with open(tmp_path / "run" / "summary.json") as f:
        assert json.load(f)["protocol"] == "ssp"
    w = r_weights = syncpoint.load(tmp_path / "run")
    assert w.samples == r.samples


ROWS_SEEN = {}


@syncpoint.client_loop("py-rows-to-ones")
def rows_to_ones(ps):
    """Rows of three keys of a sparse model's table trained toward ones, by the loop alone."""
    while True:
        w, rows = ps.pull(keys=[[7, 42, 99, 42]])  # repeats are asked once
        keys, values = rows[0]
        ROWS_SEEN[ps.worker] = (sorted(keys.tolist()), values.clone())
        grad = torch.zeros_like(w)  # the dense part's gradient
        if ps.push(grad, 32, rows=[(keys, values - 1)]).stop:  # each row's: of (v - 1)^2 / 2
            return


@syncpoint.client_loop("py-rows-wrong-width")
def rows_wrong_width(ps):
    w, rows = ps.pull(keys=[[7]])
    ps.push(torch.zeros_like(w), 32, rows=[(rows[0].keys, torch.zeros(3))])


def test_a_python_loop_pulls_a_sparse_models_rows_by_key_and_pushes_their_gradients():
    job = dict(model="ctr:fields=2,width=4,hidden=4", dataset="clicks:keys=100,fields=2", train_limit=640,
               test_limit=64, epochs=5, lr=0.5, momentum=0, protocol="asp", workers=2, progress=False)
    syncpoint.train(loop="py-rows-to-ones", **job)
    for worker in (0, 1):
        keys, values = ROWS_SEEN[worker]
        assert keys == [7, 42, 99] and values.shape == (3, 4)
        assert torch.allclose(values, torch.ones(3, 4), atol=0.01), values
    # A row gradient of the wrong width: the worker leaves the run, saying why (as a C++ loop's does).
    r = syncpoint.train(loop="py-rows-wrong-width", **job)
    assert r.samples == 0 and len(r.failures) == 2
    assert all("the loop's row gradients of table 0 hold 3 values for 1 keys of width 4" in f for f in r.failures)
    with pytest.raises(syncpoint.RunFailed, match="key -1 is negative"):
        syncpoint.train(loop="py-rows-negative", **job)


@syncpoint.client_loop("py-rows-negative")
def rows_negative(ps):
    ps.pull(keys=[[-1]])
