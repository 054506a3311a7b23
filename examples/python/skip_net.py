"""A network of your own, written in PyTorch, trained by syncpoint under ElasticBSP with a straggler.

The network (a skip connection around a hidden layer) is scripted and saved; syncpoint's workers
run the saved TorchScript module in C++, with no Python at run time, so the same file trains on a
cluster's nodes (`syncpoint submit --model script:skip_net.pt`, the file at the same path there).

    PYTHONPATH=build/python python3 examples/python/skip_net.py [OUT_DIR]
"""

import os
import sys

import torch
import torch.nn.functional as F

import syncpoint


class SkipNet(torch.nn.Module):
    def __init__(self, features=784, hidden=128, classes=10):
        super().__init__()
        self.inp = torch.nn.Linear(features, hidden)
        self.mid = torch.nn.Linear(hidden, hidden)
        self.out = torch.nn.Linear(hidden, classes)

    def forward(self, x):
        h = F.relu(self.inp(x.flatten(1)))
        h = h + F.relu(self.mid(h))  # the skip connection
        return self.out(h)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1)  # a script model starts from the weights its file holds
    path = os.path.join(out, "skip_net.pt")
    torch.jit.script(SkipNet()).save(path)
    r = syncpoint.train(protocol="elastic-bsp", workers=4, model="script:" + path, straggler="3:x4",
                        epochs=2, lr=0.1, progress=False, out=os.path.join(out, "run"))
    print("skip_net under elastic-bsp: final accuracy %.4f after %d samples, %.3f s on the virtual clock"
          % (r.final_accuracy, r.samples, r.run_time_s))
    return r


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "skip_net_run")
