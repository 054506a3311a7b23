"""train(worker_processes=True): each worker's Python loop in a process of its own (a head and a
one-slot node a worker on loopback), the result as in one process, nothing left running after it,
and what it refuses before it starts anything."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

import syncpoint

sys.path.insert(0, os.path.dirname(__file__))
import loops_for_tests  # noqa: E402,F401  registers py-line, py-fit-line-says-pid, py-asp-marks-pid, py-raises

JOB = dict(model="py-line", loop="py-fit-line-says-pid", protocol="py-asp-marks-pid", workers=2, epochs=0.5,
           seed=3, progress=False)


def children_of_this_process():
    """The pids whose parent is this process (zombies included: an unreaped child is a leak too)."""
    mine = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == mine:
                found.append(int(entry))
    return found


def test_each_worker_runs_in_a_process_of_its_own_and_the_result_comes_back(tmp_path):
    before = children_of_this_process()
    r = syncpoint.train(worker_processes=True, out=tmp_path / "run", **JOB)
    assert r.summary["workers"] == 2 and r.summary["clock"] == "real" and r.samples >= 30000
    w = r.final_weights
    assert w.dtype == torch.float32 and w.shape == (2,)
    assert abs(w[0] - 1) < 0.05 and abs(w[1] - 3) < 0.05, w  # y = 3x + 1, fitted by the Python loops
    # Each worker's loop ran in a process of its own, and the Python protocol in a third: the head's.
    pids = {e.worker: int(e.value) for e in r.trace if e.kind == "metric" and e.note.startswith("pid")}
    coordinator = [int(e.note) for e in r.trace if e.kind == "where"]
    assert sorted(pids) == [0, 1] and len(coordinator) == 1, (pids, coordinator)
    assert len({pids[0], pids[1], coordinator[0], os.getpid()}) == 4
    # The files, as train() in one process writes them, and run.json saying where it ran.
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["samples"] == r.samples
    ran_on = json.loads((tmp_path / "run" / "run.json").read_text())["machine"]["ran on"]
    assert "a process a worker" in ran_on and "2 nodes of one slot" in ran_on
    assert children_of_this_process() == before  # the head and the nodes ended, and were reaped


def test_an_exception_in_a_worker_process_ends_the_run_with_its_line(tmp_path):
    with pytest.raises(syncpoint.RunFailed) as e:
        syncpoint.train(worker_processes=True, out=tmp_path / "out",
                        **dict(JOB, loop="py-raises", protocol="asp"))
    assert "worker 1's loop failed: ZeroDivisionError: worker 1 divided by zero" in str(e.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("options, words", [
    (dict(clock="virtual"), 'worker_processes=True runs the workers in processes of their own, on the real clock'),
    (dict(protocl="asp"), "unknown option '--protocl'"),
    (dict(loop="no-such-loop"), "no-such-loop"),
])
def test_what_cannot_run_is_refused_before_any_process_starts(options, words):
    before = children_of_this_process()
    with pytest.raises(ValueError, match=words):
        syncpoint.train(worker_processes=True, **dict(JOB, **options))
    assert children_of_this_process() == before


def test_a_script_calling_train_outside_its_main_guard_is_told_so(tmp_path):
    # Each process imports the script to know its loops: a train() at its top level would run again
    # there, so the child refuses it, and the parent's error carries the child's words.
    script = tmp_path / "unguarded.py"
    script.write_text(textwrap.dedent("""
        import syncpoint, torch
        syncpoint.register_weights("unguarded-line", 2)

        @syncpoint.client_loop("unguarded-loop")
        def loop(ps):
            while not ps.push(torch.zeros(2), 1).stop:
                ps.pull()

        syncpoint.train(worker_processes=True, model="unguarded-line", loop="unguarded-loop", workers=1,
                        epochs=0.01, progress=False)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, str(script)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env, timeout=300)
    assert done.returncode != 0
    assert "put the script's train() under `if __name__ == \"__main__\":`" in done.stderr, done.stderr[-2000:]


def test_ctrl_c_stops_the_job_writes_its_files_and_ends_the_processes(tmp_path):
    # A script that interrupts itself once worker 0's process has pushed (a byte down a pipe).
    script = textwrap.dedent("""
        import os, signal, sys, threading
        sys.path.insert(0, %r)
        import syncpoint, loops_for_tests
        pipe = os.path.join(sys.argv[2], "running")
        os.mkfifo(pipe)
        os.environ["SYNCPOINT_TEST_RUNNING"] = pipe
        def interrupt_once_running():
            with open(pipe, "rb") as running:
                running.read(1)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt_once_running, daemon=True).start()
        try:
            syncpoint.train(worker_processes=True, model="py-line", loop="py-fit-line-tells", protocol="asp",
                            workers=2, max_time=600, progress=False, out=sys.argv[1])
            print("not interrupted")
        except KeyboardInterrupt:
            print("interrupted; files:", sorted(os.listdir(sys.argv[1])))
    """ % os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "run"), str(tmp_path)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.strip() == "interrupted; files: ['run.json', 'summary.json', 'trace.jsonl']", done.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["samples"] > 0 and summary["run_time_s"] < 600
