"""README.md's "From Python" block runs as written: a scripted network with a skip connection trained
under sync-switch, then a comparison."""

import importlib.util
import os
import re
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


def test_the_readmes_python_block_trains_a_scripted_network_under_sync_switch(tmp_path, monkeypatch):
    with open(os.path.join(HERE, "..", "..", "README.md")) as f:
        readme = f.read()
    section = readme.split("## From Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "r.trace_frame()" in block
    if importlib.util.find_spec("pandas") is None:  # its line says "with pandas installed"; syncpoint needs none
        block = "\n".join(line for line in block.splitlines() if "trace_frame()" not in line)
    monkeypatch.chdir(tmp_path)  # it saves net.pt where it runs
    script = tmp_path / "from_python.py"  # a file: torch.jit.script reads the class's source
    script.write_text(block)
    names = runpy.run_path(str(script), run_name="__main__")  # as `python3 from_python.py` runs it
    r, c = names["r"], names["c"]
    assert r.summary["protocol"] == "sync-switch" and r.summary["model"].startswith("script:")
    assert r.final_accuracy >= 0.8, r
    assert r.final_weights.numel() == 784 * 128 + 128 + 128 * 128 + 128 + 128 * 10 + 10
    assert list(c.runs) == ["bsp", "asp", "elastic-bsp"] and all(run.final_accuracy > 0.7 for run in c.runs.values())
