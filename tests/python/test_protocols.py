"""Protocols written in Python (syncpoint.Protocol): K-sync in Python decides as the C++ one does, to
the byte, on the virtual clock; a run resumed from its checkpoints ends as the run never stopped; its
options and sweeps work as a C++ protocol's; a protocol that raises ends the run with its line."""

import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

import syncpoint

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")
sys.path.insert(0, EXAMPLES)
import k_sync  # noqa: E402,F401  registers py-k-sync

CPP_K_SYNC = os.environ.get("SYNCPOINT_EXAMPLE_CUSTOM_PROTOCOL")
# examples/custom_protocol.cpp's job (its main), with the model given.
JOB = dict(protocol="py-k-sync", k=3, workers=4, model="softmax", epochs=1, straggler="3:x4", iter_cost=10,
           progress=False)


@pytest.mark.skipif(not CPP_K_SYNC, reason="SYNCPOINT_EXAMPLE_CUSTOM_PROTOCOL names no example_custom_protocol")
def test_k_sync_in_python_decides_as_the_cpp_one_to_the_byte(tmp_path):
    subprocess.run([CPP_K_SYNC, "softmax", str(tmp_path / "cpp")], check=True, capture_output=True, timeout=300)
    syncpoint.train(**JOB, out=tmp_path / "py")
    assert (tmp_path / "py" / "trace.jsonl").read_bytes() == (tmp_path / "cpp" / "trace.jsonl").read_bytes()
    py, cpp = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("py", "cpp"))
    assert cpp.pop("protocol") == "k-sync" and py.pop("protocol") == "py-k-sync"
    assert py == cpp


def test_a_python_protocol_resumes_from_its_checkpoints_to_the_same_bytes(tmp_path):
    job = dict(JOB, model="mlp", train_limit=3000, test_limit=300, epochs=2, eval_every=0.5)
    plain = syncpoint.train(**job)
    every = plain.run_time_s / 5
    whole = syncpoint.train(**job, checkpoint_every=every, checkpoint_dir=tmp_path / "all", checkpoint_keep=0)
    assert whole.trace == plain.trace and torch.equal(whole.final_weights, plain.final_weights)
    files = sorted(os.listdir(tmp_path / "all"))
    assert len(files) >= 3
    middle = tmp_path / "from" / files[len(files) // 2]
    os.makedirs(middle.parent)
    shutil.copy(tmp_path / "all" / middle.name, middle)
    resumed = syncpoint.train(**job, resume=middle)
    assert resumed.trace == whole.trace
    assert torch.equal(resumed.final_weights, whole.final_weights)
    assert resumed.resumed_from == str(middle)


def test_a_python_protocol_is_listed_with_its_options_and_refuses_bad_values():
    mine = next(p for p in syncpoint.protocols() if p.name == "py-k-sync")
    assert mine.summary == "commit when any k workers have pushed (Python)"
    assert [(o.name, o.type, o.default, o.min) for o in mine.options] == [("k", "integer", "2", 1.0)]
    with pytest.raises(ValueError, match="k"):
        syncpoint.train(**dict(JOB, k=0))


def test_a_sweep_over_a_python_protocols_option_runs_in_child_processes(tmp_path):
    s = syncpoint.sweep(grid={"k": [2, 4]}, **{n: v for n, v in JOB.items() if n != "k"}, out=tmp_path / "s")
    assert len(s.cells) == 2
    for name, cell in s.cells.items():
        k = int(name.split("k=")[1].split("_")[0])
        alone = syncpoint.train(**dict(JOB, k=k))
        assert cell.summary == alone.summary, name


class Raises(syncpoint.Protocol):
    def on_push(self, c, w):
        if c.clock(w) == 3:
            raise KeyError("no round %d" % c.clock(w))
        c.release(w)


class KeepsTheApi(syncpoint.Protocol):
    def on_start(self, c):
        self.kept = c
        super().on_start(c)

    def on_push(self, c, w):
        self.kept.release(w)


syncpoint.register_protocol("py-raises", "raises on a worker's third push", Raises)
syncpoint.register_protocol("py-keeps-the-api", "uses a callback's api after it returned", KeepsTheApi)


@pytest.mark.parametrize("protocol, words", [
    ("py-raises", "protocol_failed: the protocol failed: on_push(): KeyError: 'no round 3'"),
    ("py-keeps-the-api", "on_push(): RuntimeError: this coordinator_api was a callback's: it is valid only until "
                         "the callback returns"),
])
def test_a_protocol_that_raises_ends_the_run_with_its_line_and_writes_nothing(tmp_path, protocol, words):
    with pytest.raises(RuntimeError) as e:
        syncpoint.train(**dict({n: v for n, v in JOB.items() if n != "k"}, protocol=protocol, out=tmp_path / "out"))
    assert words in str(e.value)
    assert not (tmp_path / "out").exists()


def test_register_protocol_refuses_what_is_not_a_protocol_and_a_taken_name():
    with pytest.raises(TypeError, match="must be a subclass of syncpoint.Protocol"):
        syncpoint.register_protocol("py-not", "", object)
    with pytest.raises(ValueError, match="cannot be registered"):
        syncpoint.register_protocol("bsp", "", Raises)


class LocalSgd(syncpoint.Protocol):
    """protocols/local_sgd.cpp in Python, through set_local_work."""

    def __init__(self, options):
        super().__init__(options)
        self.work = dict(steps=options["h"], inner="sgd", inner_lr=0.05, push="outer")

    def on_start(self, c):
        c.set_mode("buffered")
        for w in c.live_workers():
            c.set_local_work(w, **self.work)
            c.release(w)

    def on_push(self, c, w):
        self.close_round_if_complete(c)

    def on_lost(self, c, w):
        self.close_round_if_complete(c)

    def on_joined(self, c, w):
        c.set_local_work(w, **self.work)
        self.close_round_if_complete(c)

    def close_round_if_complete(self, c):
        live = c.live_workers()
        if not live or not all(c.waiting(w) for w in live):
            return
        c.commit()
        for w in live:
            c.release(w)


syncpoint.register_protocol("py-local-sgd", "Local SGD in Python", LocalSgd,
                            options=[syncpoint.ProtocolOption("h", "integer", "8", "local steps", min=1)],
                            job_defaults={"optimizer": "sgd", "lr": 1, "momentum": 0})


def test_local_sgd_in_python_through_set_local_work_decides_as_the_built_in_one(tmp_path):
    job = dict(workers=4, model="mlp", epochs=0.5, straggler="3:x4", seed=2, progress=False)
    python = syncpoint.train(protocol="py-local-sgd", h=8, **job, out=tmp_path / "py")
    built_in = syncpoint.train(protocol="local-sgd", local_steps=8, **job, out=tmp_path / "cpp")
    assert (tmp_path / "py" / "trace.jsonl").read_bytes() == (tmp_path / "cpp" / "trace.jsonl").read_bytes()
    assert torch.equal(python.final_weights, built_in.final_weights)
    assert python.final_accuracy == built_in.final_accuracy > 0.6


class BadLocalWork(syncpoint.Protocol):
    def on_start(self, c):
        c.set_local_work(0, stepz=3)


syncpoint.register_protocol("py-bad-local-work", "names a field local_work lacks", BadLocalWork)


def test_set_local_work_refuses_a_field_it_lacks():
    job = dict(workers=2, model="softmax", epochs=0.1, progress=False)
    with pytest.raises(RuntimeError, match="on_start\\(\\): TypeError: set_local_work: no field 'stepz'"):
        syncpoint.train(protocol="py-bad-local-work", **job)
