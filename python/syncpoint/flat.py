"""FlatModule: a torch.nn.Module whose tensors live in the two flat buffers a Python loop exchanges."""

import torch


class FlatModule:
    """Puts a module's parameters and float32 buffers into the flat layout the PS holds (the
    parameters in ``named_parameters`` order, then the float32 buffers in ``named_buffers`` order, as
    for a built-in or scripted model), so that a loop moves each step's weights in with one copy and
    pushes its gradient with none::

        @syncpoint.client_loop("classify")
        def classify(ps):
            net = MyNet()
            flat = syncpoint.FlatModule(net)     # net's tensors now live in flat's buffers
            while True:
                flat.load(ps.pull())             # the pulled weights into net: one copy
                flat.zero_grad()
                loss = F.cross_entropy(net(x), y)
                loss.backward()                  # accumulates into flat.gradient
                if ps.push(flat.gradient, len(y), loss.item()).stop:
                    return

    ``gradient`` is what a push sends: the parameters' gradients, then the buffers' values (the
    buffers live in its tail, so a forward pass that updates running statistics writes them there).
    Without it a loop copies each parameter in and concatenates the gradients out, and its step
    has twice the operators, each one holding the GIL that the job's other Python loops wait for.
    Other buffers (an int64 ``num_batches_tracked``) stay where they are, as the PS has no place
    for them. A module that needs its gradients set to None between steps is refused by
    load(): zero_grad() here keeps them in place.
    """

    def __init__(self, module):
        params = list(module.parameters())
        buffers = [b for b in module.buffers() if b.dtype == torch.float32]
        if any(p.dtype != torch.float32 for p in params):
            raise ValueError("FlatModule: the module's parameters must be float32 (the PS's floats): %s"
                             % sorted({str(p.dtype) for p in params if p.dtype != torch.float32}))
        if any(p.device.type != "cpu" for p in params + buffers):
            raise ValueError("FlatModule: the module must be on the CPU (move it after: its tensors then leave "
                             "the flat buffers)")
        self.parameter_count = sum(p.numel() for p in params)
        self.size = self.parameter_count + sum(b.numel() for b in buffers)
        self.weights = torch.empty(self.parameter_count)
        self.gradient = torch.zeros(self.size)
        self._params = params
        self._grads = []
        with torch.no_grad():
            at = 0
            for p in params:
                view = self.weights[at:at + p.numel()].view_as(p)
                view.copy_(p)
                p.data = view
                grad = self.gradient[at:at + p.numel()].view_as(p)
                p.grad = grad
                self._grads.append(grad)
                at += p.numel()
            for b in buffers:
                view = self.gradient[at:at + b.numel()].view_as(b)
                view.copy_(b)
                b.data = view
                at += b.numel()

    def load(self, pulled):
        """Copies pulled weights (``size`` floats: the parameters, then the buffers) into the module."""
        if pulled.numel() != self.size:
            raise ValueError("FlatModule.load: %d floats pulled for a module of %d (parameters and float32 "
                             "buffers): is the job's model this module?" % (pulled.numel(), self.size))
        if any(p.grad is not g for p, g in zip(self._params, self._grads)):
            raise ValueError("FlatModule.load: a parameter's gradient was replaced (module.zero_grad(set_to_none="
                             "True), or an optimizer's): call FlatModule.zero_grad() instead")
        with torch.no_grad():
            self.weights.copy_(pulled[:self.parameter_count])
            self.gradient[self.parameter_count:].copy_(pulled[self.parameter_count:])

    def zero_grad(self):
        """Sets the parameters' gradients to zero, in place (the buffers keep their values)."""
        self.gradient[:self.parameter_count].zero_()

    def __repr__(self):
        return "<syncpoint.FlatModule: %d parameters, %d buffer floats>" % (
            self.parameter_count, self.size - self.parameter_count)
