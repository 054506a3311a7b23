"""Models and losses scripted in PyTorch (--model script:FILE.pt, --loss script:FILE.pt): the same
gradient as the built-in network and as PyTorch's autograd, the same run through the command line and
train(), a skip-connection network trained under elastic-bsp, and bad files refused, naming them."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import syncpoint

CLI = os.environ.get("SYNCPOINT_CLI", "syncpoint")
EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python")


class Mlp(torch.nn.Module):
    """The built-in mlp (models/torch_nets.cpp), in PyTorch: its layers in the same order."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 256)
        self.fc2 = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


class Wrong(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(784, 5)

    def forward(self, x):
        return self.fc(x.flatten(1))


class CrossEntropy(torch.nn.Module):
    def forward(self, output, target):
        return F.cross_entropy(output, target)


class Squared(torch.nn.Module):
    def forward(self, output, target):
        return ((output.softmax(1) - F.one_hot(target, 10).float()) ** 2).sum(1).mean()


def load_weights(net, flat):
    at = 0
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(flat[at:at + p.numel()].view_as(p))
            at += p.numel()
    assert at == flat.numel()


def scripted(net, path):
    torch.jit.script(net).save(str(path))
    return "script:%s" % path


def batch(n=32, seed=3):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 1, 28, 28, generator=g), torch.randint(0, 10, (n,), generator=g)


def test_the_scripted_mlp_gives_the_built_in_mlps_gradient_and_autograds(tmp_path):
    w = syncpoint.initial_weights("mlp", seed=5)
    net = Mlp()
    load_weights(net, w)
    model = scripted(net, tmp_path / "mlp.pt")
    x, y = batch()
    built_in_loss, built_in = syncpoint.model_gradient("mlp", w, x, y)
    script_loss, script = syncpoint.model_gradient(model, w, x, y)
    assert script.shape == built_in.shape == w.shape
    assert abs(script_loss - built_in_loss) < 1e-6
    assert torch.allclose(script, built_in, rtol=1e-5, atol=1e-7)
    # The oracle: PyTorch's own autograd on the same network and batch.
    net.zero_grad()
    F.cross_entropy(net(x), y).backward()
    expected = torch.cat([p.grad.flatten() for p in net.parameters()])
    assert torch.allclose(script, expected, rtol=1e-5, atol=1e-7)
    # A script model starts from the weights its file holds.
    assert torch.equal(syncpoint.initial_weights(model, seed=99), w)


def test_a_scripted_loss_replaces_cross_entropy(tmp_path):
    w = syncpoint.initial_weights("mlp", seed=5)
    x, y = batch()
    squared = scripted(Squared(), tmp_path / "squared.pt")
    value, g = syncpoint.model_gradient("mlp", w, x, y, loss=squared)
    net = Mlp()
    load_weights(net, w)
    expected_loss = Squared()(net(x), y)
    expected_loss.backward()
    assert abs(value - expected_loss.item()) < 1e-6
    assert torch.allclose(g, torch.cat([p.grad.flatten() for p in net.parameters()]), rtol=1e-5, atol=1e-8)


def test_a_scripted_cross_entropy_trains_to_the_same_bytes_as_the_built_in_one(tmp_path):
    job = dict(protocol="ssp", workers=4, model="mlp", epochs=0.25, seed=3, progress=False)
    plain = syncpoint.train(**job)
    own = syncpoint.train(**job, loss=scripted(CrossEntropy(), tmp_path / "ce.pt"))
    assert own.summary == plain.summary
    assert torch.equal(own.final_weights, plain.final_weights)


def test_a_script_model_trains_the_same_through_the_command_line_and_python(tmp_path):
    torch.manual_seed(2)
    model = scripted(Mlp(), tmp_path / "mlp.pt")
    job = dict(protocol="bsp", workers=2, model=model, epochs=0.25, seed=3)
    r = syncpoint.train(**job, out=tmp_path / "py", progress=False)
    args = ["--%s=%s" % (k, v) for k, v in job.items()]
    subprocess.run([CLI, "train"] + args + ["--out=%s" % (tmp_path / "cli"), "--progress=false"], check=True,
                   capture_output=True, timeout=300)
    for name in ("summary.json", "trace.jsonl"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert r.summary["model"] == model


def test_the_skip_net_example_trains_under_elastic_bsp(tmp_path):
    sys.path.insert(0, EXAMPLES)
    try:
        import skip_net
    finally:
        sys.path.remove(EXAMPLES)
    r = skip_net.main(str(tmp_path))
    assert r.summary["protocol"] == "elastic-bsp" and r.summary["workers"] == 4
    assert r.final_accuracy >= 0.82, r


@pytest.mark.parametrize("make, words", [
    (lambda d: "script:%s" % (d / "missing.pt"), "cannot read the model script:"),
    (lambda d: (d / "junk.pt").write_bytes(b"not a model") and "script:%s" % (d / "junk.pt"),
     "is not a TorchScript module (torch.jit.script(net).save(FILE) in Python makes one)"),
    (lambda d: scripted(Wrong(), d / "wrong.pt"),
     "gives [2, 5] for a batch [2, 1, 28, 28] of the data's examples; the data has 10 classes, so it must give [2, 10]"),
])
def test_bad_script_models_are_refused_naming_what_is_wrong_and_nothing_is_written(tmp_path, make, words):
    model = make(tmp_path)
    with pytest.raises(ValueError) as e:
        syncpoint.train(protocol="bsp", workers=2, model=model, epochs=0.1, out=tmp_path / "out", progress=False)
    assert words in str(e.value)
    assert not (tmp_path / "out").exists()
    refused = subprocess.run([CLI, "train", "--model", model, "--epochs", "0.1", "--out", str(tmp_path / "cli")],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and words in refused.stderr
    assert not (tmp_path / "cli").exists()


def test_a_bad_loss_is_refused_naming_it(tmp_path):
    with pytest.raises(ValueError, match="--loss ce.pt: expected script:FILE.pt"):
        syncpoint.train(protocol="bsp", workers=2, loss="ce.pt", epochs=0.1, progress=False)
    with pytest.raises(ValueError, match="needs a LibTorch model"):
        syncpoint.train(protocol="bsp", workers=2, model="softmax", loss=scripted(CrossEntropy(), tmp_path / "ce.pt"),
                        epochs=0.1, progress=False)


def test_a_script_model_trains_on_a_cluster_reading_its_file_at_the_same_path(tmp_path, cluster):
    torch.manual_seed(4)
    model = scripted(Mlp(), tmp_path / "mlp.pt")
    head = cluster.start_head()
    cluster.start_node("a", slots=2)
    cluster.start_node("b", slots=2)
    r = syncpoint.submit(head=head, protocol="ssp", workers=4, model=model, epochs=0.25, out=tmp_path / "run",
                         progress=False)
    assert r.summary["model"] == model and r.summary["workers"] == 4
    assert r.final_accuracy > 0.5
