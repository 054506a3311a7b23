"""syncpoint.FlatModule: a module's tensors in the PS's flat layout. Its gradient is the one a loop
gets by copying each parameter in and concatenating the gradients out (buffers included), and a job
trained by a loop with it ends on the same weights, to the byte, as the same job with the copying loop."""

import pytest
import torch
import torch.nn.functional as F

import syncpoint


class WithNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 8)
        self.norm = torch.nn.BatchNorm1d(8)  # float buffers (running mean and variance) and an int64 one
        self.fc2 = torch.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.norm(self.fc1(x))))


def copy_in_and_out(net, pulled, x, y):
    """The loop without FlatModule: each parameter and buffer copied in, the gradients and buffers
    concatenated out."""
    params = list(net.parameters())
    buffers = [b for b in net.buffers() if b.dtype == torch.float32]
    at = 0
    with torch.no_grad():
        for t in params + buffers:
            t.copy_(pulled[at:at + t.numel()].view_as(t))
            at += t.numel()
    net.zero_grad()
    F.cross_entropy(net(x), y).backward()
    return torch.cat([p.grad.flatten() for p in params] + [b.flatten() for b in buffers])


def test_the_gradient_and_buffers_are_those_of_the_copying_loop():
    torch.manual_seed(5)
    plain, flat_net = WithNorm(), WithNorm()
    flat = syncpoint.FlatModule(flat_net)
    size = sum(p.numel() for p in plain.parameters()) + 16
    assert (flat.parameter_count, flat.size) == (size - 16, size)
    for step in range(3):
        pulled = torch.randn(size)
        pulled[-8:] = pulled[-8:].abs()  # a variance
        x, y = torch.randn(32, 12), torch.randint(0, 3, (32,))
        expected = copy_in_and_out(plain, pulled, x, y)
        flat.load(pulled)
        flat.zero_grad()
        F.cross_entropy(flat_net(x), y).backward()
        assert torch.equal(flat.gradient, expected), step  # running statistics moved on as in the plain loop
        assert int(flat_net.norm.num_batches_tracked) == step + 1


def test_a_replaced_gradient_or_a_pull_of_another_size_is_refused():
    net = WithNorm()
    flat = syncpoint.FlatModule(net)
    with pytest.raises(ValueError, match="5 floats pulled for a module of %d" % flat.size):
        flat.load(torch.zeros(5))
    net.zero_grad(set_to_none=True)
    with pytest.raises(ValueError, match="a parameter's gradient was replaced"):
        flat.load(torch.zeros(flat.size))
    with pytest.raises(ValueError, match="parameters must be float32"):
        syncpoint.FlatModule(torch.nn.Linear(2, 2).double())


class Mlp(torch.nn.Module):  # the built-in mlp's layout: 784 -> 256 -> 10
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def steps(ps):
    """The loop's data: its own 256 random images, batches drawn by a generator of this worker."""
    g = torch.Generator().manual_seed(ps.seed * 1000 + ps.worker)
    x, y = torch.rand(256, 784, generator=g), torch.randint(0, 10, (256,), generator=g)
    while True:
        i = torch.randint(0, 256, (ps.batch,), generator=g)
        yield x[i], y[i]


@syncpoint.client_loop("py-flat-copying")
def copying(ps):
    net = Mlp()
    params = list(net.parameters())
    for x, y in steps(ps):
        w = ps.pull()
        at = 0
        with torch.no_grad():
            for p in params:
                p.copy_(w[at:at + p.numel()].view_as(p))
                at += p.numel()
        net.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        if ps.push(torch.cat([p.grad.flatten() for p in params]), len(y), loss.item()).stop:
            return


@syncpoint.client_loop("py-flat-flat")
def flat_loop(ps):
    net = Mlp()
    flat = syncpoint.FlatModule(net)
    for x, y in steps(ps):
        flat.load(ps.pull())
        flat.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        if ps.push(flat.gradient, len(y), loss.item()).stop:
            return


def test_a_job_trained_with_it_ends_on_the_weights_of_the_copying_loop():
    job = dict(model="mlp", protocol="ssp", workers=2, epochs=0.05, seed=4, progress=False)
    a = syncpoint.train(loop="py-flat-copying", **job)
    b = syncpoint.train(loop="py-flat-flat", **job)
    assert a.samples == b.samples and a.samples >= 3000
    assert not torch.equal(a.final_weights, syncpoint.initial_weights("mlp", seed=4))
    assert torch.equal(a.final_weights, b.final_weights), (a.final_weights - b.final_weights).abs().max()
