"""K-sync SGD written in Python: examples/custom_protocol.cpp's protocol, as a syncpoint.Protocol.

The PS buffers pushes and commits as soon as any K workers have pushed in the round; those K are
released to pull the new version, the others' pushes count towards the next round. On the virtual
clock it makes the same decisions as the C++ one, to the byte (tests/python/test_protocols.py).

    PYTHONPATH=build/python python3 examples/python/k_sync.py
"""

import pickle

import syncpoint


class KSync(syncpoint.Protocol):
    def __init__(self, options):
        super().__init__(options)
        self.k = options["k"]
        self.rounds = 0  # state of its own, to show checkpoint() and restore()

    def on_start(self, c):
        c.set_mode("buffered")
        for w in c.live_workers():
            c.release(w)

    def on_push(self, c, w):
        self.commit_if_enough(c)

    def on_lost(self, c, w):
        self.commit_if_enough(c)

    def commit_if_enough(self, c):
        pushed = [w for w in c.live_workers() if c.waiting(w)]
        if not pushed or len(pushed) < min(self.k, len(c.live_workers())):
            return
        c.commit()
        self.rounds += 1
        for w in pushed:
            c.release(w)

    def checkpoint(self):
        return pickle.dumps(self.rounds)

    def restore(self, data):
        self.rounds = pickle.loads(data)


syncpoint.register_protocol("py-k-sync", "commit when any k workers have pushed (Python)", KSync,
                            options=[syncpoint.ProtocolOption("k", "integer", "2", "pushes that close a round",
                                                              min=1, max=4096)])

if __name__ == "__main__":
    r = syncpoint.train(protocol="py-k-sync", k=3, workers=4, model="mlp", epochs=1, straggler="3:x4",
                        iter_cost=10, progress=False)
    print("k-sync(K=3) in Python: accuracy %.3f in %.2f virtual s, mean compute ratio %.2f"
          % (r.final_accuracy, r.run_time_s, r.mean_compute_ratio))
