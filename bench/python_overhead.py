"""What Python costs a run (issue 60), side by side in one run: each pair is the same job with a
piece written in C++ and in Python, and the figure is the Python one's over the C++ one's.

  protocol   ASP as a syncpoint.Protocol (a GIL taken and a Python call per push) against the
             built-in asp: wall seconds of a virtual-clock run that computes nothing
             (model timing-only), so the protocol's calls are all there is.
  script     the mlp scripted in PyTorch (--model script:FILE.pt, run by C++) against the built-in
             mlp: samples per second on the real clock.
  loop       the mlp's classification step written as a Python loop around a WorkerClient
             (PyTorch's own MLP: pull, load, forward, backward, push) against the same loop in
             C++ around a worker_client (build/bench_loop_twin, bench/loop_twin.cpp), in two
             forms: copying each parameter in and concatenating the gradient out, and with the
             module's tensors in flat buffers (syncpoint.FlatModule, by hand in C++). Then the
             flat one against the built-in classify loop. Samples per second on the real clock:
             first 2 workers with a process each (train(worker_processes=True): a head and two
             nodes on loopback, each python3 -m syncpoint importing this file; the C++ twin's own
             head and nodes), the figure for a Python loop; then 2 workers in one process (their
             Python shares one GIL), then 1.

    PYTHONPATH=build/python python3 bench/python_overhead.py [--repeats N] [--twin build/bench_loop_twin]

Figures are medians over N alternated pairs (default 3).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

import syncpoint
from syncpoint.local import LocalCluster


class PyAsp(syncpoint.Protocol):
    def on_push(self, c, w):
        c.release(w)


syncpoint.register_protocol("bench-py-asp", "asp in Python", PyAsp)


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


@syncpoint.client_loop("bench-py-classify")
def classify(ps):
    torch.set_num_threads(1)
    net = Mlp()
    params = list(net.parameters())
    data = torch.load(DATA)
    x_all, y_all = data["x"], data["y"]
    g = torch.Generator().manual_seed(ps.seed * 1000 + ps.worker)
    while True:
        w = ps.pull()
        at = 0
        with torch.no_grad():
            for p in params:
                p.copy_(w[at:at + p.numel()].view_as(p))
                at += p.numel()
        i = torch.randint(0, x_all.shape[0], (ps.batch,), generator=g)
        net.zero_grad()
        loss = F.cross_entropy(net(x_all[i]), y_all[i])
        loss.backward()
        grad = torch.cat([p.grad.flatten() for p in params])
        if ps.push(grad, ps.batch, loss.item()).stop:
            return


@syncpoint.client_loop("bench-py-classify-flat")
def classify_flat(ps):
    torch.set_num_threads(1)
    net = Mlp()
    flat = syncpoint.FlatModule(net)
    data = torch.load(DATA)
    x_all, y_all = data["x"], data["y"]
    g = torch.Generator().manual_seed(ps.seed * 1000 + ps.worker)
    while True:
        flat.load(ps.pull())
        i = torch.randint(0, x_all.shape[0], (ps.batch,), generator=g)
        flat.zero_grad()
        loss = F.cross_entropy(net(x_all[i]), y_all[i])
        loss.backward()
        if ps.push(flat.gradient, ps.batch, loss.item()).stop:
            return


DATA = "/tmp/syncpoint-bench-python-data.pt"


def timed(**job):
    t = time.perf_counter()
    r = syncpoint.train(progress=False, **job)
    return time.perf_counter() - t, r


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--twin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                       "bench_loop_twin"),
                        help="the C++ loops (bench/loop_twin.cpp)")
    parser.add_argument("--loop", help=argparse.SUPPRESS)  # a child's run of one Python loop
    parser.add_argument("--workers", type=int, default=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.loop:
        return one_loop(args.loop, args.workers)
    torch.manual_seed(0)
    torch.save({"x": torch.rand(4096, 1, 28, 28), "y": torch.randint(0, 10, (4096,))}, DATA)

    protocol = dict(workers=16, model="timing-only", dataset="synthetic", epochs=400, iter_cost=1)
    cpp_s, py_s, pushes = [], [], 0
    for _ in range(args.repeats):
        s, r = timed(protocol="asp", **protocol)
        cpp_s.append(s)
        s, r = timed(protocol="bench-py-asp", **protocol)
        py_s.append(s)
        pushes = sum(1 for e in r.trace if e.kind == "push")
    c, p = statistics.median(cpp_s), statistics.median(py_s)
    print("protocol  asp (C++) %.2f s, asp (Python) %.2f s for %d pushes: %.2fx; %.1f us a Python call"
          % (c, p, pushes, p / c, (p - c) / max(pushes, 1) * 1e6))

    script = "/tmp/syncpoint-bench-python-mlp.pt"
    torch.jit.script(Mlp()).save(script)
    real = dict(protocol="asp", workers=2, clock="real", max_time=8, seed=1)
    cpp_rate, script_rate = [], []
    for _ in range(args.repeats):
        _, r = timed(model="mlp", **real)
        cpp_rate.append(r.samples_per_s)
        _, r = timed(model="script:" + script, **real)
        script_rate.append(r.samples_per_s)
    c, p = statistics.median(cpp_rate), statistics.median(script_rate)
    print("script    mlp (C++) %.0f samples/s, the mlp scripted %.0f samples/s: %.2fx" % (c, p, p / c))

    # Each loop's run in a fresh process, the Python ones as the C++ ones: a long-lived interpreter
    # that ran the 16-worker jobs above ran the Python loops 10-15% slower.
    def twin(kind, workers=2):
        out = subprocess.run([args.twin, "--loop", kind, "--workers", str(workers), "--max-time", "8"], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        return float(out.split()[-1])

    def python(loop, workers=2):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--loop", loop, "--workers", str(workers)],
                             check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        return float(out.split()[-1])

    # A process a worker: train(worker_processes=True) (a head and a one-slot node a worker on
    # loopback, each python3 -m syncpoint importing this file) against the C++ twin's own head and
    # nodes. No GIL shared: this is the figure for a Python loop.
    cpp, py = [], []
    for _ in range(args.repeats):
        cpp.append(cluster_rate([args.twin], "bench-cpp-classify-flat"))
        py.append(syncpoint.train(worker_processes=True, loop="bench-py-classify-flat", protocol="asp", workers=2,
                                  model="mlp", max_time=8, seed=1, progress=False).samples_per_s)
    c, p = statistics.median(cpp), statistics.median(py)
    print("loop      FlatModule, a process a worker (worker_processes=True, 2 workers): C++ %.0f samples/s, "
          "Python %.0f samples/s: %.2fx" % (c, p, p / c))

    rates = {k: [] for k in ("cpp", "py", "cpp-flat", "py-flat", "builtin", "cpp-flat-1", "py-flat-1")}
    for _ in range(args.repeats):
        rates["cpp"].append(twin("client"))
        rates["py"].append(python("bench-py-classify"))
        rates["cpp-flat"].append(twin("client-flat"))
        rates["py-flat"].append(python("bench-py-classify-flat"))
        rates["builtin"].append(twin("builtin"))
        rates["cpp-flat-1"].append(twin("client-flat", 1))
        rates["py-flat-1"].append(python("bench-py-classify-flat", 1))
    m = {k: statistics.median(v) for k, v in rates.items()}

    print("loop      copying: C++ %.0f samples/s, Python %.0f samples/s: %.2fx"
          % (m["cpp"], m["py"], m["py"] / m["cpp"]))
    print("loop      FlatModule: C++ %.0f samples/s, Python %.0f samples/s: %.2fx"
          % (m["cpp-flat"], m["py-flat"], m["py-flat"] / m["cpp-flat"]))
    print("loop      built-in classify (C++) %.0f samples/s, Python with FlatModule: %.2fx, copying: %.2fx"
          % (m["builtin"], m["py-flat"] / m["builtin"], m["py"] / m["builtin"]))
    print("loop      1 worker, FlatModule: C++ %.0f samples/s, Python %.0f samples/s: %.2fx"
          % (m["cpp-flat-1"], m["py-flat-1"], m["py-flat-1"] / m["cpp-flat-1"]))


def cluster_rate(program, loop, workers=2):
    """Samples/s of `loop` with a process a worker: a head and `workers` nodes of one slot each, all
    `program` (the C++ twin), on loopback, started as train(worker_processes=True) starts its own."""
    cluster = LocalCluster(program)
    try:
        address, _ = cluster.start(workers)
        out = os.path.join(cluster.folder, "out")
        subprocess.run(program + ["submit", "--head", address, "--token-file", os.path.join(cluster.folder, "token"),
                                  "--loop", loop, "--model", "mlp", "--protocol", "asp", "--workers", str(workers),
                                  "--max-time", "8", "--seed", "1", "--progress=false", "--out", out],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)["samples_per_s"]
    finally:
        cluster.close()


def one_loop(name, workers):
    """A child's run: the Python loop `name` on the loop section's job; prints its samples/s."""
    r = syncpoint.train(progress=False, loop=name, protocol="asp", workers=workers, model="mlp", clock="real",
                        max_time=8, seed=1)
    print("%.1f" % r.samples_per_s)

if __name__ == "__main__":
    main()
