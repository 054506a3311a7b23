"""PyTorch DDP (gloo) on the same job as bench_throughput: Fashion-MNIST, MLP
784-256-10, batch 64 per process, SGD lr 0.05 momentum 0.9, one torch thread
per process, N processes on loopback, each on its own 1/N of the data.
Prints one line: total samples/s over all processes.

    /usr/bin/python3 bench/ddp.py [--epochs 1] [--procs 2]

Across machines (bench/ddp.sh's veth rows), each side starts its own ranks of
one group whose rank 0 listens at ADDR:PORT; the side with rank 0 prints:

    /usr/bin/python3 bench/ddp.py --procs 4 --ranks 0,1 --master 10.77.0.1:29500
    /usr/bin/python3 bench/ddp.py --procs 4 --ranks 2,3 --master 10.77.0.1:29500
"""
import argparse
import gzip
import os
import socket
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

DATA = "/usr/share/datasets/fashion-mnist"


def load():
    with gzip.open(os.path.join(DATA, "train-images-idx3-ubyte.gz")) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784).astype(np.float32) / 255.0
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    return torch.from_numpy((x - 0.2860) / 0.3530), torch.from_numpy(y)


def run(rank, procs, master, epochs, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=procs)
    torch.manual_seed(1)
    x, y = load()
    x, y = x[rank::procs], y[rank::procs]
    net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    model = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    batch, n = 64, x.shape[0]
    steps = int(epochs * n) // batch
    gen = torch.Generator().manual_seed(rank)
    dist.barrier()
    t0 = time.perf_counter()
    order = torch.randperm(n, generator=gen)
    for s in range(steps):
        i = (s * batch) % (n - batch)
        idx = order[i:i + batch]
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()
    dist.barrier()
    secs = time.perf_counter() - t0
    if rank == 0:
        out.put(procs * steps * batch / secs)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--procs", type=int, default=2, help="processes in the whole group")
    ap.add_argument("--ranks", help="the ranks to start here, e.g. 0,1 (default: all)")
    ap.add_argument("--master", help="ADDR:PORT of rank 0 (default: a free loopback port)")
    a = ap.parse_args()
    ranks = [int(r) for r in a.ranks.split(",")] if a.ranks else list(range(a.procs))
    master = a.master
    if not master:
        with socket.socket() as s:  # a free loopback port
            s.bind(("127.0.0.1", 0))
            master = f"127.0.0.1:{s.getsockname()[1]}"
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    ps = [ctx.Process(target=run, args=(r, a.procs, master, a.epochs, out)) for r in ranks]
    for p in ps:
        p.start()
    rate = out.get(timeout=600) if 0 in ranks else None
    for p in ps:
        p.join(timeout=600)
    if rate is not None:
        print(f"{rate:.0f}")


if __name__ == "__main__":
    main()
