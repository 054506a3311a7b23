"""syncpoint's jobs from Python (python/syncpoint/__init__.py): the same runs as the command line's,
to the byte on the virtual clock; the command's option table's refusals as ValueError with nothing
written; Ctrl-C stopping a run cleanly; compare and sweep through child processes."""

import ast
import json
import os
import signal
import subprocess
import sys

import pytest
import torch

import syncpoint

CLI = os.environ.get("SYNCPOINT_CLI", "syncpoint")
JOB = dict(protocol="ssp", workers=4, model="softmax", straggler="3:x4", clock="virtual", epochs=1, seed=7)


def cli(*args, check=True):
    return subprocess.run([CLI] + list(args), capture_output=True, text=True, check=check, timeout=300)


def cli_args(options):
    return ["--%s=%s" % (k.replace("_", "-"), v) for k, v in options.items()]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_train_writes_the_same_bytes_as_the_command_line(tmp_path):
    cli("train", *cli_args(JOB), "--out=%s" % (tmp_path / "cli"), "--progress=false")
    r = syncpoint.train(**JOB, out=tmp_path / "py", progress=False)
    for name in ("summary.json", "trace.jsonl"):
        assert read(tmp_path / "py" / name) == read(tmp_path / "cli" / name), name
    summary = json.loads(read(tmp_path / "cli" / "summary.json"))
    assert r.summary == summary
    assert r.final_accuracy == summary["final_accuracy"] and r.samples == summary["samples"]
    assert len(r.trace) == len(read(tmp_path / "cli" / "trace.jsonl").splitlines())
    assert r.trace[-1].kind == "end" and r.trace_columns[0] == "kind"
    assert r.stopped is None and r.label == "ssp(s=3)"
    with open(tmp_path / "py" / "run.json") as f:
        assert json.load(f)["label"] == "ssp(s=3)"


def test_final_weights_are_the_model_as_a_tensor_the_same_run_after_run():
    a = syncpoint.train(**JOB, progress=False)
    b = syncpoint.train(**JOB, progress=False)
    assert isinstance(a.final_weights, torch.Tensor) and a.final_weights.dtype == torch.float32
    assert a.final_weights.shape == (785 * 10,)  # the softmax model: 784 pixels and a bias, 10 classes
    assert torch.equal(a.final_weights, b.final_weights)
    assert a.version > 0 and a.final_weights.abs().sum() > 0
    a.final_weights.mul_(2)  # the result's own: writable, no other owner
    assert not torch.equal(a.final_weights, b.final_weights)


@pytest.mark.parametrize("options, words", [
    (dict(protocl="ssp"), "unknown option '--protocl'"),
    (dict(workers="many"), "invalid value in '--workers=many' (expected an integer)"),
    (dict(clock="sundial"), "invalid value in '--clock=sundial' (expected real or virtual)"),
    (dict(protocol="nosuch"), "nosuch"),
    (dict(protocol="bsp", staleness=3), "--staleness"),
])
def test_bad_options_raise_value_error_with_the_commands_words_and_write_nothing(tmp_path, options, words):
    with pytest.raises(ValueError) as e:
        syncpoint.train(**dict(dict(JOB, **options), out=tmp_path / "out"))
    assert words in str(e.value)
    assert not (tmp_path / "out").exists()


def test_the_command_line_refuses_the_same_options_with_the_same_words():
    with pytest.raises(ValueError) as e:
        syncpoint.train(workers="many")
    refused = cli("train", "--workers=many", check=False)
    assert refused.returncode == 2 and str(e.value) in refused.stderr


def test_protocols_lists_what_the_command_lists():
    listed = [line.split()[0] for line in cli("protocols").stdout.splitlines() if line and not line.startswith(" ")]
    got = syncpoint.protocols()
    assert [p.name for p in got if not p.name.startswith("py-")] == listed  # (py-: other test files' own)
    ssp = next(p for p in got if p.name == "ssp")
    assert [o.name for o in ssp.options] == ["staleness"] and ssp.options[0].type == "integer"


def test_ctrl_c_stops_the_run_writes_its_files_then_raises_keyboard_interrupt(tmp_path):
    # A real-clock run with no limit it could reach: only the Ctrl-C ends it. The child signals
    # itself once train() is under way (its first progress line is out), never on a timer.
    script = """
import os, signal, sys, threading, syncpoint
out = sys.argv[1]
def interrupt_once_running():
    os.read(rfd, 1)
    os.kill(os.getpid(), signal.SIGINT)
rfd, wfd = os.pipe()
threading.Thread(target=interrupt_once_running, daemon=True).start()
sys.stderr.flush()
os.dup2(wfd, 2)  # the first byte the run writes to stderr (its progress) wakes the thread
try:
    syncpoint.train(protocol="asp", workers=2, model="softmax", clock="real", epochs=0, max_time=600, out=out)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted; files:", sorted(os.listdir(out)))
"""
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("interrupted; files:"), done.stdout
    assert ast.literal_eval(done.stdout.split(":", 1)[1].strip()) == ["run.json", "summary.json", "trace.jsonl"]
    summary = json.loads(read(out / "summary.json"))
    assert summary["samples"] > 0 and summary["run_time_s"] < 600


def test_compare_runs_each_protocol_as_the_command_line_does(tmp_path):
    job = dict(JOB, protocols="bsp,asp")
    del job["protocol"]
    # Here the runs after the first are child processes of this Python (jobs=2); there, all in one process.
    c = syncpoint.compare(**job, jobs=2, out=tmp_path / "py", progress=False)
    cli("compare", *cli_args(job), "--jobs=1", "--out=%s" % (tmp_path / "cli"), "--progress=false")
    assert list(c.runs) == ["bsp", "asp"] and os.path.exists(c.report)
    for name, run in c.runs.items():
        written = read(tmp_path / "cli" / name / "summary.json")
        assert read(tmp_path / "py" / name / "summary.json") == written, name
        assert run.summary == json.loads(written) and len(run.trace) > 0


def test_compare_refuses_bad_input_with_its_words_and_writes_nothing(tmp_path):
    with pytest.raises(ValueError) as e:
        syncpoint.compare(protocols=["bsp", "bsp"], workers=2, model="softmax", epochs=1, out=tmp_path / "c")
    assert "syncpoint compare: --protocols names 'bsp' twice" in str(e.value)
    assert not (tmp_path / "c").exists()


def test_sweep_runs_every_cell_of_its_grid(tmp_path):
    s = syncpoint.sweep(grid={"protocol": ["bsp", "asp"], "straggler": ["3:x2", "3:x4"]}, seeds=[1],
                        workers=4, model="softmax", epochs=1, out=tmp_path / "s", progress=False)
    assert len(s.cells) == 4 and os.path.exists(s.report)
    cell = s.cells["0003_protocol=asp_straggler=3_x4_seed=1"]
    alone = syncpoint.train(**dict(JOB, protocol="asp", seed=1), progress=False)
    assert cell.summary == alone.summary


def test_trace_frame_is_a_data_frame_where_pandas_is(tmp_path):
    r = syncpoint.train(**JOB, progress=False)
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="needs pandas"):
            r.trace_frame()
        return
    frame = r.trace_frame()
    assert list(frame.columns) == r.trace_columns and len(frame) == len(r.trace)


def test_the_type_stubs_name_what_the_package_has():
    stub = ast.parse(read(os.path.join(os.path.dirname(syncpoint.__file__), "__init__.pyi")).decode())
    stubbed = {n.name for n in stub.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {t.id for n in stub.body if isinstance(n, ast.AnnAssign) for t in [n.target]}
    public = set(syncpoint.__all__) | {"__version__"}
    assert stubbed - {"_Value"} == public
    assert all(getattr(syncpoint, name).__doc__ for name in syncpoint.__all__)
