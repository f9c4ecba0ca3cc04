"""The vocabulary of cases.py: tensors (inputs and parameters) and cases. Plain Python; numpy and Paddle are
only imported by generate.py, so cases.py can be read (and listed) anywhere."""

from dataclasses import dataclass, field


@dataclass
class T:
    """A tensor: `dims` (None in an input: a dynamic dim, InputSpec shape None), dtype, and how its values are
    drawn: floats uniform in [low, high), integers uniform in [low, high) (high exclusive), bools fair coins.
    `run` gives the dims fed to Paddle and kforge where `dims` has None (default: None -> 2). `name`: a
    parameter's name in the program (ParamAttr), else CASE.w_<index>."""
    dims: tuple
    dtype: str = "float32"
    low: float = -1.0
    high: float = 1.0
    run: tuple = None
    name: str = None

    def run_dims(self):
        if self.run is not None:
            return tuple(self.run)
        return tuple(2 if d is None else d for d in self.dims)


def t(*dims, dtype="float32", low=None, high=None, run=None, name=None):
    """T with integer-friendly default ranges: floats in [-1, 1), integers in [-4, 5)."""
    floating = dtype.startswith("float")
    return T(tuple(dims), dtype, (-1.0 if floating else -4) if low is None else low,
             (1.0 if floating else 5) if high is None else high, run, name)


@dataclass
class Case:
    """One fixture: `forward(*inputs, *params)` traced by paddle.jit.save with the inputs as InputSpecs and the
    params as the layer's parameters (so they go to the .pdiparams file), then run by Paddle's predictor.
    `pending`: kforge cannot lower it yet; the reason (generate.py skips it unless asked for by name).
    `ops`: the Paddle ops the case is meant to exercise (checked against the saved program).
    `control_flow`: dy2static converts forward's Python `if` on tensors into pd_op.if (other cases are traced as
    written).
    `expect`: where Paddle's answer is not kforge's to match (uniform's draws: kforge's counter-based generator),
    expect(outputs, feeds) -> the outputs kforge's kernels must give instead (numpy arrays; the reason in the case's
    comment)."""
    name: str
    forward: object
    inputs: list
    params: list = field(default_factory=list)
    ops: tuple = ()
    pending: str = ""
    control_flow: bool = False
    expect: object = None
