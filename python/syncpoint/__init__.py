"""syncpoint from Python: run, compare and sweep synchronization protocols.

The options are the command line's (``syncpoint train --help``), written as
keywords: ``ps_bandwidth="400MB/s"`` is ``--ps-bandwidth 400MB/s``, ``True`` a
flag, ``False`` ``--name=false``, a list its values joined by commas. They are
checked by the command's own option table, so a wrong name or value raises
ValueError with the command's words, before anything runs or is written.

>>> import syncpoint
>>> r = syncpoint.train(protocol="ssp", workers=4, model="mlp", straggler="3:x4", epochs=1)
>>> r.final_accuracy, r.samples_per_s          # the summary, as attributes
>>> r.final_weights                            # the PS's model: a torch tensor
>>> r.trace_frame()                            # the trace as a pandas DataFrame (pandas installed)

train() runs in this process (with worker_processes=True, each worker in a process
of its own); Ctrl-C stops the run as a limit would, writes its files (``out=DIR``),
then raises KeyboardInterrupt. compare(), sweep() and
submit() run the ``syncpoint`` command in a child process (``python3 -m
syncpoint``), as the command line does, and return what it wrote.
"""

import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading

import torch  # first: the extension then shares the LibTorch that Python's torch loaded

from . import _syncpoint as _core
from .flat import FlatModule

__all__ = ["Result", "Comparison", "Sweep", "TraceRow", "train", "compare", "sweep", "submit", "protocols",
           "ProtocolInfo", "ProtocolOption", "load", "version", "initial_weights", "model_gradient", "client_loop",
           "register_weights", "FlatModule", "Rows", "WorkerClient", "PushAnswer", "command_main", "Protocol", "CoordinatorAPI",
           "register_protocol", "RunFailed"]

TraceRow = collections.namedtuple("TraceRow", ["kind", "worker", "t0", "t1", "iter", "version", "value", "note"])
TraceRow.__doc__ = """One line of trace.jsonl: an event or a span (t0..t1, seconds on the run clock) of
`worker` (-1: the run's), at the worker's iteration `iter` (samples for run events),
the model's `version`, with the kind's number `value` and words `note`."""

ProtocolOption = collections.namedtuple("ProtocolOption",
                                        ["name", "type", "default", "help", "choices", "min", "max", "short_name"],
                                        defaults=("", (), -1e300, 1e300, ""))
ProtocolOption.__doc__ = """An option a protocol declares: ``--NAME`` on the command line, NAME=... here.
``type`` is "integer", "number" or "text"; ``default`` its value as text; ``min`` and ``max`` inclusive
bounds (numbers); ``choices`` the allowed texts (empty: any); ``short_name`` a name for tables, as ssp(s=3)."""

ProtocolInfo = collections.namedtuple("ProtocolInfo", ["name", "summary", "options"])
ProtocolInfo.__doc__ = "A registered protocol, as ``syncpoint protocols`` lists it."


_imports = []  # ("module", name) or ("file", path): what registered loops and protocols, for child processes


def _remember(fn):
    """Notes where `fn` (a loop or a protocol class) comes from, so that the command's child processes
    (compare's runs, a sweep's cells, a process a worker) import it too and know what it registered."""
    _remember_module(getattr(fn, "__module__", None))


def _remember_module(module):
    if module in ("__main__", "__syncpoint_main__"):  # a script, run as the main program or by a parent's _program
        path = getattr(sys.modules["__main__"], "__file__", None)
        entry = ("file", os.path.abspath(path)) if path else None
    elif module:
        entry = ("module", module)
    else:
        entry = None
    if entry and entry not in _imports:
        _imports.append(entry)
        _core._set_this_program(_program())


_importing_for_child = False  # True while a child process imports what registered loops and protocols


def _refuse_in_child(what):
    if _importing_for_child:
        raise RuntimeError("syncpoint.%s() was called while a child process of syncpoint imported this script to "
                           "know its loops, models and protocols: put the script's %s() under "
                           "`if __name__ == \"__main__\":` (as multiprocessing asks)" % (what, what))


def _program():
    """What runs ``syncpoint COMMAND ...`` again in a child process: this interpreter, with this one's
    sys.path, importing what registered loops or protocols here (a script as multiprocessing's spawn
    does: under another name, so that its ``if __name__ == "__main__":`` part does not run)."""
    code = ("import sys, runpy, importlib; sys.path[:0] = %r\n"
            "import syncpoint; syncpoint._importing_for_child = True\n"
            "for kind, what in %r:\n"
            "    runpy.run_path(what, run_name='__syncpoint_main__') if kind == 'file' else importlib.import_module(what)\n"
            "syncpoint._importing_for_child = False\n"
            "import syncpoint.__main__ as m; sys.exit(m.main())" % (
                [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))] + [p for p in sys.path if p], _imports))
    return [sys.executable, "-c", code]


_core._set_this_program(_program())


def version():
    """syncpoint's version and build, as ``syncpoint --version`` prints it."""
    return _core._version()


__version__ = version().split(" ")[0]


class Result:
    """A run's outcome: its summary's fields as attributes (``r.final_accuracy``,
    ``r.samples_per_s``, ...; ``r.summary`` is the whole of summary.json as a dict),
    its trace as rows of TraceRow, and the final model.

    final_weights is the PS's final model as a 1-D float32 torch tensor (None for
    a run read back from its folder), version the number of updates it holds.
    stopped says why the run was ended early (a Ctrl-C), else None.
    """

    def __init__(self, summary, trace, label="", final_weights=None, version=None, failures=(), stopped=None,
                 out=""):
        self.summary = summary
        self.trace = trace
        self.label = label
        self.final_weights = final_weights
        self.version = version
        self.failures = list(failures)
        self.stopped = stopped
        self.out = out

    @property
    def trace_columns(self):
        """The trace's column names, in the rows' order."""
        return list(TraceRow._fields)

    def trace_frame(self):
        """The trace as a pandas DataFrame, one row per event (needs pandas, which syncpoint does not)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Result.trace_frame() needs pandas (apt install python3-pandas)") from e
        return pandas.DataFrame.from_records(self.trace, columns=TraceRow._fields)

    def __getattr__(self, name):
        summary = self.__dict__.get("summary", {})
        if name in summary:
            return summary[name]
        raise AttributeError("a run's result has no field '%s' (the summary's fields: %s)"
                             % (name, ", ".join(sorted(summary))))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.__dict__.get("summary", {})))

    def __repr__(self):
        s = self.summary
        acc = s.get("final_accuracy")
        return "<syncpoint.Result %s: %s workers, %s samples, accuracy %s, %.3g s on the %s clock%s>" % (
            self.label or s.get("protocol"), s.get("workers"), s.get("samples"),
            "none" if acc is None else "%.4f" % acc, s.get("run_time_s", 0), s.get("clock"),
            ", stopped: " + self.stopped if self.stopped else "")


def _text(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v) for v in value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _args(options):
    """Keywords as the command line's arguments: name_x=V is --name-x=V."""
    args = []
    for name, value in options.items():
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        else:
            args.append(flag + "=" + _text(value))
    return args


def train(worker_processes=False, **options):
    """Runs one training job, as ``syncpoint train`` does, and returns its Result.

    >>> r = syncpoint.train(protocol="elastic-bsp", workers=4, straggler="3:x4", epochs=2, out="runs/ebsp")
    >>> r.final_accuracy

    The job runs in this process, unless worker_processes=True: then each worker runs in a process of
    its own (a head and a one-slot node a worker on loopback, each this interpreter importing the
    modules that registered loops, models and protocols here), on the real clock (the default then),
    and the result comes back the same. Python loops then share no GIL::

        syncpoint.train(loop="my-loop", model="mlp", workers=4, max_time=60, worker_processes=True)

    As for compare(), a script's own train() call must then sit under ``if __name__ == "__main__":``.

    Raises ValueError for a wrong option name or value (the command's words),
    RuntimeError for a run that failed, KeyboardInterrupt after a Ctrl-C (once
    the stopped run's files are written).
    """
    _refuse_in_child("train")
    cluster = None
    start = None
    if worker_processes:
        from .local import LocalCluster
        options.setdefault("clock", "real")
        cluster = LocalCluster(_program(), data_dir=options.pop("data", None))
        start = cluster.start
    try:
        d = _core._train(_args(options), start)
    finally:
        if cluster is not None:
            cluster.close()
    if d is None:  # help=True: the options were printed
        return None
    weights = torch.from_numpy(d["final_weights"])
    r = Result(json.loads(d["summary_json"]), [TraceRow(*row) for row in d["trace"]], d["label"], weights,
               d["version"], d["failures"], d["stopped"], d["out"])
    faults = [f for f in r.failures if "user_loop_failed" in f]
    if faults:  # a fault of the program's loop ended the run: never swallowed, and nothing written
        raise RunFailed(faults[0], r)
    return r


class RunFailed(RuntimeError):
    """A run that a fault of the program's own ended (a loop that raised, or returned before its
    stop): the message is the fault's line (``user_loop_failed`` and the exception's last line), and
    ``result`` the run as it ended (in memory only: its files are not written)."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


def load(folder):
    """A run read back from the folder ``train(out=...)`` (or a compare or sweep) wrote."""
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    rows = []
    with open(os.path.join(folder, "trace.jsonl")) as f:
        for line in f:
            if line.strip():
                e = json.loads(line)
                t0 = e.get("t0", 0.0)
                rows.append(TraceRow(e.get("kind", ""), e.get("worker", -1), t0, e.get("t1", t0), e.get("iter", 0),
                                     e.get("version", 0), e.get("value", 0.0), e.get("note", "")))
    label = summary.get("protocol", "")
    run_json = os.path.join(folder, "run.json")
    if os.path.exists(run_json):
        with open(run_json) as f:
            label = json.load(f).get("label", label) or label
    return Result(summary, rows, label, out=folder)


class Comparison:
    """What compare() ran: ``runs`` maps each run's folder name to its Result, in
    the order they ran; ``out`` is the folder, with ``report`` its page
    (index.html) and comparison.md its table."""

    def __init__(self, out):
        self.out = out
        self.report = os.path.join(out, "index.html")
        with open(os.path.join(out, "runs.json")) as f:
            names = json.load(f)["runs"]
        self.runs = {name: load(os.path.join(out, name)) for name in names}

    def __repr__(self):
        return "<syncpoint.Comparison of %s in %s>" % (", ".join(self.runs), self.out)


class Sweep:
    """What sweep() ran: ``cells`` maps each finished cell's folder name to its
    Result; ``out`` is the sweep's folder, with ``report`` its page."""

    def __init__(self, out):
        self.out = out
        self.report = os.path.join(out, "index.html")
        cells = os.path.join(out, "cells")
        self.cells = {name: load(os.path.join(cells, name)) for name in sorted(os.listdir(cells))
                      if not name.endswith(".partial") and os.path.exists(os.path.join(cells, name, "summary.json"))}

    def __repr__(self):
        return "<syncpoint.Sweep of %d cells in %s>" % (len(self.cells), self.out)


def _pump(source, sink, keep):
    for line in iter(source.readline, ""):
        keep.append(line)
        del keep[:-20]
        sink.write(line)
        sink.flush()
    source.close()


def _run_command(command, args):
    """Runs ``syncpoint COMMAND ARGS...`` in a child process (this interpreter, ``-m syncpoint``),
    passing its output on; raises ValueError (status 2) or RuntimeError (other failures) with its last line."""
    child = subprocess.Popen(_program() + [command] + args, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out_lines, err_lines = [], []
    pumps = [threading.Thread(target=_pump, args=(child.stdout, sys.stdout, out_lines), daemon=True),
             threading.Thread(target=_pump, args=(child.stderr, sys.stderr, err_lines), daemon=True)]
    for p in pumps:
        p.start()
    try:
        status = child.wait()
    except KeyboardInterrupt:  # a terminal's Ctrl-C reached the child too; a signal to us alone is passed on
        child.send_signal(signal.SIGINT)
        child.wait()
        raise
    finally:
        for p in pumps:
            p.join()
    if status != 0:
        last = next((l.strip() for l in reversed(err_lines) if l.strip()), "syncpoint %s exited with status %d"
                    % (command, status))
        if status == 2:
            raise ValueError(last)
        if status < 0 or status >= 128:
            raise RuntimeError("syncpoint %s was ended by signal %d: %s" % (command, abs(status) % 128, last))
        raise RuntimeError(last)


def _out_of(options, prefix):
    out = options.get("out")
    if out is None:
        out = tempfile.mkdtemp(prefix=prefix)
        options["out"] = out
    return os.fspath(out)


def compare(**options):
    """Runs several protocols on the same job, as ``syncpoint compare`` does, and returns a Comparison.

    >>> c = syncpoint.compare(protocols=["bsp", "asp", "ssp"], workers=4, straggler="3:x4", epochs=1)
    >>> c.runs["asp"].final_accuracy, c.report

    Without out=, the runs go to a new temporary folder (Comparison.out).
    """
    _refuse_in_child("compare")
    out = _out_of(options, "syncpoint-compare-")
    _run_command("compare", _args(options))
    return Comparison(out)


def sweep(grid=None, **options):
    """A grid of runs over train options, on every core, as ``syncpoint sweep`` does; returns a Sweep.

    >>> s = syncpoint.sweep(grid={"protocol": ["bsp", "elastic-bsp"], "straggler": ["3:x2", "3:x4"]},
    ...                     seeds=[1, 2], workers=4, epochs=1)
    >>> {name: cell.final_accuracy for name, cell in s.cells.items()}

    Each grid entry is an axis (``--grid NAME=V1,V2``); values holding a comma are quoted for you.
    """
    _refuse_in_child("sweep")
    out = _out_of(options, "syncpoint-sweep-")
    args = []
    for name, values in (grid or {}).items():
        values = values if isinstance(values, (list, tuple)) else [values]
        texts = ['"%s"' % _text(v) if "," in _text(v) else _text(v) for v in values]
        args.append("--grid=%s=%s" % (name.replace("_", "-"), ",".join(texts)))
    _run_command("sweep", args + _args(options))
    return Sweep(out)


def submit(head, **options):
    """Runs a job on a cluster (``syncpoint submit --head HOST:PORT``) and returns its Result read back.

    >>> r = syncpoint.submit(head="127.0.0.1:7000", token_file="cluster.token", protocol="bsp", workers=8, epochs=2)

    Without out=, the run's files go to a new temporary folder (Result.out).
    """
    _refuse_in_child("submit")
    out = _out_of(options, "syncpoint-submit-")
    _run_command("submit", ["--head=" + str(head)] + _args(options))
    return load(out)


def protocols():
    """Every registered protocol, with its summary and the options it declares."""
    return [ProtocolInfo(p["name"], p["summary"], [ProtocolOption(**o) for o in p["options"]])
            for p in _core._protocols()]


def _numpy(tensor, dtype):
    if isinstance(tensor, torch.Tensor):
        return tensor.detach().to("cpu", dtype).contiguous().numpy()
    return tensor


def initial_weights(model="mlp", seed=1, shape=(1, 28, 28), classes=10):
    """A registered model's initial weights (the PS's first model) for examples of ``shape`` and
    ``classes`` classes, as a 1-D float32 tensor: parameters in named_parameters order, then buffers.

    >>> w = syncpoint.initial_weights("mlp", seed=1)     # what a run of --model mlp --seed 1 starts from
    """
    return torch.from_numpy(_core._initial_weights(model, seed, list(shape), classes))


def model_gradient(model, weights, examples, labels, classes=10, loss=None):
    """(loss, gradient) of a registered model at ``weights`` on one batch, as a worker computes it:
    the gradient is a 1-D float32 tensor of the weights' length (a buffer's place holds the buffer).

    >>> net = torch.jit.script(MyNet()); net.save("net.pt")
    >>> w = torch.cat([p.detach().flatten() for p in net.parameters()])
    >>> value, g = syncpoint.model_gradient("script:net.pt", w, x, y)   # x: [B, 1, 28, 28], y: [B]

    ``loss`` is ``--loss``'s value (``"script:loss.pt"``); None: cross-entropy.
    """
    value, grad = _core._model_gradient(model, _numpy(weights, torch.float32), _numpy(examples, torch.float32),
                                        _numpy(labels, torch.int64), classes, loss or "")
    return value, torch.from_numpy(grad)


WorkerClient = _core.WorkerClient
PushAnswer = _core.PushAnswer


Rows = collections.namedtuple("Rows", ["keys", "values"])
Rows.__doc__ = """One table's rows: ``keys`` (int64, each key once) and ``values`` ([keys, width] float32)."""


def _floats(t):
    if isinstance(t, torch.Tensor):
        # Each torch call releases and takes the GIL again, which the job's other Python loops
        # contend for: none where the tensor is already what the client reads.
        if t.dtype != torch.float32 or t.device.type != "cpu" or not t.is_contiguous():
            t = t.to("cpu", torch.float32).contiguous()
        return t.detach().numpy()
    return t


def _number(loss):
    # A loss tensor as it is (item(): float() of one that requires grad warns in newer torch).
    return loss.item() if isinstance(loss, torch.Tensor) else float(loss)


def _ids(k):
    return k.detach().to("cpu", torch.int64).contiguous().numpy() if isinstance(k, torch.Tensor) else k


def _client_pull(self, keys=None):
    """The weights of one version, as the protocol released them to this worker: a 1-D float32 tensor
    (its own buffer, no copy). ``ps.version`` is then their version.

    A sparse model (docs/sparse.md) names the keys its next step reads, a list of keys a table
    (repeats allowed): ``w, rows = ps.pull(keys=[ids])`` returns the weights and, a table each, the
    keys' rows of the same version as ``Rows(keys, values)`` (each key once, in any order)."""
    if keys is None:
        self.version, values = self._pull()
        return torch.from_numpy(values)
    self.version, values, rows = self._pull_keys([_ids(k) for k in keys])
    out = []
    for k, v in rows:
        k = torch.from_numpy(k)
        out.append(Rows(k, torch.from_numpy(v).view(len(k), -1) if len(k) else torch.from_numpy(v).view(0, 0)))
    return torch.from_numpy(values), out


def _client_push(self, grad, samples, loss=0.0, rows=None):
    """Hands the gradient of a loss averaged over ``samples`` examples (the model's length: the
    parameters' gradient, then the buffers' values) to the PS; returns a PushAnswer once the protocol
    lets this worker go on, or the job ends (``.stop``: return from the loop).

    A sparse model pushes its rows' gradients with it: ``rows``, a table each, ``(keys, gradients)``
    for keys of the last pull (each once; ``[keys, width]`` floats)."""
    if rows is None:
        return self._push(_floats(grad), int(samples), _number(loss))
    return self._push_rows(_floats(grad), [(_ids(k), _floats(g)) for k, g in rows], int(samples), _number(loss))


WorkerClient.pull = _client_pull
WorkerClient.push = _client_push


def client_loop(name):
    """Registers the decorated function as the worker loop ``name`` (``loop=name``, ``--loop name``).

    It receives the worker's WorkerClient and runs until a push says stop::

        syncpoint.register_weights("line", 2)

        @syncpoint.client_loop("fit-line")
        def fit_line(ps):
            rng = torch.Generator().manual_seed(ps.seed * 1000 + ps.worker)
            while True:
                w = ps.pull()
                x = torch.randn(32, generator=rng); y = 3 * x + 1
                e = w[0] + w[1] * x - y
                if ps.push(torch.stack([e.mean(), (e * x).mean()]), 32).stop:
                    return

        syncpoint.train(model="line", loop="fit-line", protocol="ssp", workers=4, epochs=1)

    Each worker's loop runs on a thread of its own, holding the GIL while Python runs and releasing
    it in pull() and push(). An exception out of it ends the run (``user_loop_failed`` and the
    exception's last line); so does returning before a push said stop. Child processes (compare's
    runs, a sweep's cells) and ``python3 -m syncpoint --import MODULE node ...`` import the module
    that registered it: a script's registrations must not sit under ``if __name__ == "__main__":``.
    """
    def register(fn):
        if not _core._register_client_loop(name, fn):
            raise ValueError("a loop named '%s' is registered already" % name)
        _remember(fn)
        return fn
    return register


def register_weights(name, size):
    """Registers a model that is only ``size`` weights (zeros at the start), for a loop of your own to train."""
    if not _core._register_weights(name, int(size)):
        raise ValueError("a model named '%s' is registered already" % name)
    _remember_module(sys._getframe(1).f_globals.get("__name__"))


def command_main(argv):
    """The ``syncpoint`` command with argv (``["node", "--join", "HOST:PORT"]``), knowing what this
    process registered; returns its exit status (``python3 -m syncpoint`` is this)."""
    from . import __main__
    return __main__.main(list(argv))


CoordinatorAPI = _core.CoordinatorAPI


class Protocol:
    """A synchronization protocol written in Python: subclass it and register it with
    register_protocol. The coordinator calls its methods with ``c``, a CoordinatorAPI valid during
    the call only, as it calls a C++ protocol's (docs/writing-a-protocol.md)::

        class KSync(syncpoint.Protocol):
            \"\"\"Commit as soon as any k workers have pushed in the round.\"\"\"
            def __init__(self, options):
                self.k = options["k"]
            def on_start(self, c):
                c.set_mode("buffered")
                for w in c.live_workers():
                    c.release(w)
            def on_push(self, c, w):
                pushed = [v for v in c.live_workers() if c.waiting(v)]
                if pushed and len(pushed) >= min(self.k, c.live_count()):
                    c.commit()
                    for v in pushed:
                        c.release(v)

        syncpoint.register_protocol("py-k-sync", "commit when any k workers have pushed", KSync,
                                    options=[syncpoint.ProtocolOption("k", "integer", "2", "pushes that close a round",
                                                                      min=1, max=4096)])
        syncpoint.train(protocol="py-k-sync", k=3, workers=4)

    An exception out of a method ends the run with ``protocol_failed`` and its last line.
    checkpoint() returns the protocol's state as bytes and restore(data) takes them back: a protocol
    that defines them runs with --checkpoint-every and resumes to the same bytes on the virtual clock.
    """

    def __init__(self, options):
        """``options``: the values of the options it declared, typed (int, float, str), by name."""
        self.options = options

    def on_start(self, c):
        """All workers are ready (all waiting). Default: immediate mode, everyone released."""
        c.set_mode("immediate")
        for w in c.live_workers():
            c.release(w)

    def on_push(self, c, w):
        """Worker ``w`` pushed a gradient; ``c.clock(w)`` already counts it."""
        raise NotImplementedError("a protocol decides on each push: define on_push(self, c, w)")

    def on_lost(self, c, w):
        """Worker ``w`` is gone; it is no longer live."""

    def on_joined(self, c, w):
        """Worker ``w`` joined the running job, waiting for its first release. Default: release it now."""
        c.release(w)

    def on_timer(self, c, tag):
        """A timer set with ``c.set_timer(t, tag)`` is due."""

    def checkpoint(self):
        """The protocol's state as bytes, for a checkpoint (not defined: the protocol cannot be checkpointed)."""
        raise NotImplementedError

    def restore(self, data):
        """Takes back the state checkpoint() returned, when a run resumes."""


def register_protocol(name, summary, cls, options=(), job_defaults=None):
    """Registers the Protocol subclass ``cls`` as the protocol ``name`` (``protocol=name``,
    ``--protocol name``), with the options it declares (ProtocolOption), which a job then sets as
    keywords (``k=3``) and ``syncpoint protocols`` lists. One object of ``cls`` is made per run,
    from the options' values. ``job_defaults``: the job options it runs with unless a job gives them,
    by their command-line names (Local SGD's averaging outer step: ``{"optimizer": "sgd", "lr": "1",
    "momentum": "0"}``)."""
    if not (isinstance(cls, type) and issubclass(cls, Protocol)):
        raise TypeError("register_protocol(%r, ...): cls must be a subclass of syncpoint.Protocol" % name)
    declared = [tuple(o if isinstance(o, ProtocolOption) else ProtocolOption(*o)) for o in options]
    declared = [(n, t, None if d is None else str(d), h, list(ch), float(lo), float(hi), sh)
                for n, t, d, h, ch, lo, hi, sh in declared]
    defaults = {str(k).replace("_", "-"): _text(v) for k, v in (job_defaults or {}).items()}
    if not _core._register_protocol(name, summary, cls, declared, defaults):
        raise ValueError("the protocol '%s' cannot be registered: the name is taken, or an option clashes with "
                         "another protocol's (stderr says which)" % name)
    _remember(cls)
