"""The `trace` op (op_graph.py): forward() as a normalised operator graph for the seed matcher."""
import pytest

from conftest import InProcessWorker, WorkerError, problem_path, write_problem

HEADER = '''
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
'''
FOOTER = '''
def get_inputs():
    return [torch.rand(4, 8)]


def get_init_inputs():
    return []
'''


def trace(tmp_path, model_source: str, footer: str = FOOTER) -> dict:
    path = write_problem(tmp_path, HEADER + model_source + footer)
    return InProcessWorker().call("trace", problem=path)


def ops(graph: dict) -> list:
    return [n for n in graph["nodes"] if n["op"] not in ("input", "param", "constant")]


def test_functional_module_and_method_forms_share_one_name(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(F.relu(torch.relu(x.relu())))
''')
    assert graph["traced"]
    assert [n["op"] for n in ops(graph)] == ["relu"] * 4
    assert graph["outputs"] == [{"ref": 4}]
    assert graph["nodes"][0] == {"id": 0, "name": "x", "op": "input", "index": 0, "dtype": "float32",
                                 "shape": [4, 8], "contiguous": True}


def test_module_attributes_and_defaults_become_named_parameters(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self, alpha: float = 0.7):
        super().__init__()
        self.alpha = alpha
        self.leaky = nn.LeakyReLU(0.3)
        self.gelu = nn.GELU(approximate="tanh")

    def forward(self, x):
        x = F.elu(x, alpha=self.alpha)
        x = F.leaky_relu(self.leaky(x))
        x = F.hardtanh(x, -2.0, 2.0)
        x = F.softplus(self.gelu(x), beta=2)
        return x.clamp(min=0.1) + torch.clamp(x, max=0.5)
''')
    found = {n["name"]: (n["op"], n["params"]) for n in ops(graph)}
    assert found["elu"] == ("elu", {"alpha": 0.7})
    assert found["leaky"] == ("leaky_relu", {"negative_slope": 0.3})
    assert found["leaky_relu"] == ("leaky_relu", {"negative_slope": 0.01})
    assert found["hardtanh"] == ("hardtanh", {"min_val": -2.0, "max_val": 2.0})
    assert found["gelu"] == ("gelu", {"approximate": "tanh"})
    assert found["softplus"] == ("softplus", {"beta": 2, "threshold": 20.0})
    assert found["clamp"] == ("clamp", {"min": 0.1, "max": None})
    assert found["clamp_1"] == ("clamp", {"min": None, "max": 0.5})


def test_numbers_keep_their_side_and_scalar_inputs_are_marked(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, a, s):
        return (1.0 - a) / s + 0.5 * a ** 3
''', '''
def get_inputs():
    return [torch.rand(4, 8), 3.5]


def get_init_inputs():
    return []
''')
    nodes = graph["nodes"]
    assert nodes[1] == {"id": 1, "name": "s", "op": "input", "index": 1, "scalar": True, "dtype": "float64"}
    sub, div, pow_, mul, add = ops(graph)
    assert (sub["op"], sub["args"]) == ("sub", [{"const": 1.0}, {"ref": 0}])
    assert (div["op"], div["args"]) == ("div", [{"ref": sub["id"]}, {"ref": 1}])
    assert (pow_["op"], pow_["args"]) == ("pow", [{"ref": 0}, {"const": 3}])
    assert (mul["op"], mul["args"]) == ("mul", [{"const": 0.5}, {"ref": pow_["id"]}])
    assert graph["num_inputs"] == 2


def test_parameters_are_contract_inputs_after_the_forward_arguments(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4, 8))
        self.register_buffer("shift", torch.zeros(4, 8))

    def forward(self, x):
        return x * self.scale + self.shift
''')
    params = [n for n in graph["nodes"] if n["op"] == "param"]
    assert [(p["param"], p["index"], p["shape"]) for p in params] == [("scale", 1, [4, 8]), ("shift", 2, [4, 8])]
    assert graph["params"] == ["scale", "shift"]


def test_a_0d_tensor_made_in_forward_is_a_number(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        x = torch.min(x, torch.tensor(0.5))
        x = torch.max(x, torch.tensor(-2, device=x.device, dtype=torch.float32))
        x = x * torch.tensor(3)
        return x + torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
''')
    numbers = [n for n in graph["nodes"] if n["op"] == "constant"]
    assert [n["params"]["value"] for n in numbers] == [0.5, -2.0, 3]
    assert all("shape" not in n and "args" not in n for n in numbers)  # a number, not a tensor
    low, high, scale, add = (n for n in ops(graph) if n["op"] in ("minimum", "maximum", "mul", "add"))
    assert [graph["nodes"][a["ref"]]["op"] for a in (low["args"][1], high["args"][1], scale["args"][1])] == \
        ["constant"] * 3
    # A tensor of several values stays what it is.
    assert graph["nodes"][add["args"][1]["ref"]]["op"] == "tensor_constant"


def test_in_place_ops_are_seen_by_later_uses(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        x.sigmoid_()
        return x * 2
''')
    sig, mul = ops(graph)
    assert sig["op"] == "sigmoid" and sig["inplace"] is True
    assert mul["args"] == [{"ref": sig["id"]}, {"const": 2}]  # x now holds sigmoid(x)


def test_unknown_ops_keep_torchs_spelling_and_their_operands(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Bilinear(8, 8, 8)

    def forward(self, x):
        return torch.logcumsumexp(self.fc(x, x), dim=1).view(-1)
''')
    found = [(n["op"], n.get("known", True)) for n in ops(graph)]
    assert found == [("nn.Bilinear", False), ("torch.logcumsumexp", False), ("Tensor.view", False)]
    assert ops(graph)[1]["args"] == [{"ref": ops(graph)[0]["id"]}]


def test_a_tensor_valued_parameter_is_noted(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x, lo):
        return torch.clamp(x, min=lo)
''', '''
def get_inputs():
    return [torch.rand(4, 8), torch.rand(4, 8)]


def get_init_inputs():
    return []
''')
    (clamp,) = ops(graph)
    assert clamp["known"] is False
    assert clamp["note"] == "clamp's min is a tensor, not a number"


def test_data_dependent_control_flow_is_a_reason_not_an_error(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return -x
''')
    assert graph["traced"] is False
    assert graph["reason"].startswith("torch.fx cannot trace forward(): TraceError: ")


def test_large_problems_trace_on_meta_tensors(tmp_path):
    # 64 GiB of fp32 if it were real: tracing must not allocate it.
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        return torch.tanh(x)
''', '''
def get_inputs():
    return [torch.rand(65536, 262144)]


def get_init_inputs():
    return []
''')
    assert (graph["model_on"], graph["inputs_on"]) == ("meta", "meta")
    assert graph["nodes"][0]["shape"] == [65536, 262144]


def test_inputs_that_need_real_values_are_built_on_the_cpu(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        return torch.exp(x)
''', '''
def get_inputs():
    x = torch.rand(4, 8)
    assert x.sum().item() >= 0
    return [x]


def get_init_inputs():
    return []
''')
    assert graph["traced"] and (graph["model_on"], graph["inputs_on"]) == ("meta", "cpu")
    assert [n["op"] for n in ops(graph)] == ["exp"]


def test_the_projects_problems_trace(tmp_path):
    worker = InProcessWorker()
    relu = worker.call("trace", problem=problem_path("relu"))
    assert [n["op"] for n in ops(relu)] == ["relu"]
    gelu = worker.call("trace", problem=problem_path("gelu_tanh"))
    assert [(n["op"], n["params"]) for n in ops(gelu)] == [("gelu", {"approximate": "tanh"})]


def test_a_broken_problem_file_is_the_problems_error(tmp_path):
    path = write_problem(tmp_path, "import torch\nclass Model:\n    pass\n")
    with pytest.raises(WorkerError) as err:
        InProcessWorker().call("trace", problem=path)
    assert err.value.kind == "problem"
    assert "Model is not a subclass of torch.nn.Module" in err.value.message


def test_softmax_in_every_spelling_is_one_op_with_its_dim(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.sm = nn.LogSoftmax(dim=-1)

    def forward(self, x):
        return F.softmax(torch.softmax(x, dim=1), 1) + x.softmax(-1) + self.sm(x)
''')
    found = [(n["op"], n["params"]) for n in ops(graph) if n["op"] != "add"]
    assert found == [("softmax", {"dim": 1, "dtype": None}), ("softmax", {"dim": 1, "dtype": None}),
                     ("softmax", {"dim": -1, "dtype": None}), ("log_softmax", {"dim": -1})]


def by_name(graph: dict) -> dict:
    return {n["name"]: n for n in graph["nodes"]}


def test_reductions_bind_dim_and_keepdim_and_max_with_a_dim_is_read_by_getitem(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        a = torch.sum(x, dim=1, keepdim=True)
        b = x.mean(-1)
        c = torch.max(x, dim=0)[0]
        d = torch.argmin(x, 1)
        e = torch.amax(x, dim=(1,))
        f = torch.max(x, x)
        return a, b, c, d, e, f
''')
    nodes = by_name(graph)
    assert (nodes["sum_1"]["op"], nodes["sum_1"]["params"]) == ("sum", {"dim": 1, "keepdim": True, "dtype": None})
    assert (nodes["mean"]["op"], nodes["mean"]["params"]["dim"]) == ("mean", -1)
    assert nodes["max_1"]["op"] == "max" and "shape" not in nodes["max_1"]  # a (values, indices) pair
    assert (nodes["getitem"]["op"], nodes["getitem"]["params"]) == ("getitem", {"index": 0})
    assert nodes["getitem"]["args"] == [{"ref": nodes["max_1"]["id"]}]
    assert (nodes["argmin"]["op"], nodes["argmin"]["dtype"], nodes["argmin"]["shape"]) == ("argmin", "int64", [4])
    assert nodes["amax"]["params"]["dim"] == 1  # a one-element tuple of dims is one dim
    assert nodes["max_2"]["op"] == "maximum"  # max of two tensors is elementwise


def test_indexing_a_tensor_is_not_a_getitem_of_a_tuple(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        return x[0]
''')
    item = ops(graph)[0]
    assert (item["op"], item["known"], item["note"]) == ("getitem", False, "indexing a tensor")


def test_matrix_products_transposes_and_masks(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(8, 4), torch.rand(8, 6), torch.rand(2, 3, 8, 4)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, a, b, c):
        p = torch.matmul(a.T, b)
        q = a.t() @ b
        r = torch.triu(torch.mm(b.transpose(0, 1), a), diagonal=1)
        s = torch.einsum("bijl,lk->bijk", c, a.T)
        t = torch.einsum("ij,ij->i", a, a)
        return p, q, r, s, t
''', footer)
    nodes = by_name(graph)
    assert (nodes["getattr_1"]["op"], nodes["getattr_1"]["params"]) == ("transpose", {"dim0": -2, "dim1": -1})
    assert nodes["matmul"]["op"] == "matmul" and nodes["matmul"]["shape"] == [4, 6]
    assert nodes["t"]["op"] == "transpose" and nodes["matmul_1"]["op"] == "matmul"
    assert nodes["transpose"]["params"] == {"dim0": 0, "dim1": 1}
    assert (nodes["triu"]["op"], nodes["triu"]["params"]) == ("triu", {"diagonal": 1})
    assert nodes["einsum"]["op"] == "matmul" and nodes["einsum"]["shape"] == [2, 3, 8, 8]
    assert nodes["einsum_1"]["known"] is False
    assert nodes["einsum_1"]["note"] == "einsum 'ij,ij->i' is not a matrix product"


def test_norm_modules_take_their_weight_and_bias_as_parameter_nodes(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(2, 4, 8, 8)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(4)
        self.ln = nn.LayerNorm((8, 8), eps=1e-6)
        self.inorm = nn.InstanceNorm2d(4)

    def forward(self, x):
        return self.inorm(self.ln(self.bn(x))), torch.norm(x, p="fro")
''', footer)
    assert graph["params"] == ["bn.weight", "bn.bias", "ln.weight", "ln.bias", "bn.running_mean", "bn.running_var",
                               "bn.num_batches_tracked"]
    nodes = graph["nodes"]
    assert [n["id"] for n in nodes] == list(range(len(nodes)))
    bn = next(n for n in nodes if n["op"] == "batch_norm")
    weight, bias = (nodes[a["ref"]] for a in bn["args"][1:])
    assert (weight["op"], weight["index"], weight["shape"]) == ("param", 1, [4])
    assert (bias["param"], bias["index"]) == ("bn.bias", 2)
    assert bn["params"]["training"] is True and bn["params"]["eps"] == 1e-5
    ln = next(n for n in nodes if n["op"] == "layer_norm")
    assert ln["params"]["normalized_ndim"] == 2 and ln["params"]["eps"] == 1e-6
    assert nodes[ln["args"][1]["ref"]]["index"] == 3
    inorm = next(n for n in nodes if n["op"] == "instance_norm")
    assert len(inorm["args"]) == 1 and inorm["params"]["has_weight"] is False
    norm = next(n for n in nodes if n["op"] == "norm")
    assert (norm["params"]["p"], norm["params"]["dim"], norm["shape"]) == ("fro", None, [])


def test_loss_functions_and_modules_bind_their_reduction(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(4, 8), torch.rand(4, 8)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.huber = nn.HuberLoss(delta=0.5)

    def forward(self, p, t):
        a = F.smooth_l1_loss(p, t)
        b = F.kl_div(torch.log(p), t, reduction="batchmean")
        return a, b, self.huber(p, t), torch.mean((p - t) ** 2)
''', footer)
    nodes = by_name(graph)
    a = nodes["smooth_l1_loss"]
    assert (a["op"], a["args"]) == ("smooth_l1_loss", [{"ref": 0}, {"ref": 1}])
    assert a["params"] == {"size_average": None, "reduce": None, "reduction": "mean", "beta": 1.0}
    b = nodes["kl_div"]
    assert b["params"]["reduction"] == "batchmean" and b["args"][0] == {"ref": nodes["log"]["id"]}
    assert (nodes["huber"]["op"], nodes["huber"]["params"]["delta"]) == ("huber_loss", 0.5)
    assert (nodes["mean"]["op"], nodes["mean"]["params"]["dim"], nodes["mean"]["shape"]) == ("mean", None, [])


def test_scans_and_flips_bind_their_dimension(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        return torch.cumsum(x.flip(1), dim=1).flip([1]), torch.cumprod(x, -1)
''')
    nodes = by_name(graph)
    assert (nodes["flip"]["op"], nodes["flip"]["params"]) == ("flip", {"dims": 1})
    assert nodes["flip_1"]["params"] == {"dims": 1}
    assert (nodes["cumsum"]["op"], nodes["cumsum"]["params"]) == ("cumsum", {"dim": 1, "dtype": None})
    assert nodes["cumprod"]["params"]["dim"] == -1


def test_the_triplet_margin_loss_binds_its_parameters_in_both_forms(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(4, 8), torch.rand(4, 8), torch.rand(4, 8)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.loss_fn = nn.TripletMarginLoss(margin=0.5, p=3, eps=1e-5, swap=True, reduction="sum")

    def forward(self, a, p, n):
        return (self.loss_fn(a, p, n), F.triplet_margin_loss(a, p, negative=n, margin=2.0),
                torch.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, False, 1))
''', footer)
    nodes = by_name(graph)
    module = nodes["loss_fn"]
    assert (module["op"], module["args"]) == ("triplet_margin_loss", [{"ref": 0}, {"ref": 1}, {"ref": 2}])
    assert module["params"] == {"margin": 0.5, "p": 3.0, "eps": 1e-5, "swap": True, "reduction": "sum"}
    assert (module["shape"], module["dtype"]) == ([], "float32")
    functional = nodes["triplet_margin_loss"]
    assert functional["args"] == [{"ref": 0}, {"ref": 1}, {"ref": 2}]
    assert functional["params"] == {"margin": 2.0, "p": 2.0, "eps": 1e-6, "swap": False, "size_average": None,
                                    "reduce": None, "reduction": "mean"}
    # torch's own op takes the reduction as an enum number: it keeps its spelling rather than be misread.
    assert (nodes["triplet_margin_loss_1"]["op"], nodes["triplet_margin_loss_1"]["known"]) == \
        ("torch.triplet_margin_loss", False)


def test_an_exclusive_cumsum_traces_cat_narrow_and_zeros_like(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        cumsum = torch.cumsum(x.narrow(dim=1, start=0, length=x.size(1) - 1), dim=1)
        a = torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), cumsum), dim=1)
        b = torch.narrow(torch.concat([torch.zeros_like(x[:, :1]), x], -1), 1, -9, 8)
        return a, b
''')
    nodes = by_name(graph)
    # The length x.size(1) - 1 is an fx node: the narrowed extent is read from the node's own shape.
    assert (nodes["narrow"]["op"], nodes["narrow"]["args"], nodes["narrow"]["params"]) == \
        ("narrow", [{"ref": 0}], {"dim": 1, "start": 0, "length": 7})
    zeros = nodes["zeros_like"]
    assert (zeros["op"], zeros["params"], zeros["shape"]) == ("zeros_like", {}, [4, 1])
    cat = nodes["cat"]
    assert (cat["op"], cat["params"], cat["shape"]) == ("cat", {"dim": 1}, [4, 8])
    assert cat["args"] == [{"ref": zeros["id"]}, {"ref": nodes["cumsum"]["id"]}]
    assert (nodes["concat"]["op"], nodes["concat"]["params"]) == ("cat", {"dim": -1})
    assert nodes["narrow_1"]["params"] == {"dim": 1, "start": -9, "length": 8}


def test_narrow_with_a_computed_start_is_noted(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        return x.narrow(1, x.size(1) - 2, 2)
''')
    narrow = by_name(graph)["narrow"]
    assert (narrow["op"], narrow["known"]) == ("narrow", False)
    assert "start" in narrow["note"]


def test_pooling_modules_give_their_window_per_dimension(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(2, 3, 16, 16)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.mp = nn.MaxPool2d(kernel_size=3, stride=2, padding=1, dilation=(2, 1), ceil_mode=True)
        self.ap = nn.AvgPool2d(4)

    def forward(self, x):
        return self.mp(x), self.ap(x)
''', footer)
    mp, ap = ops(graph)
    assert (mp["op"], mp["shape"]) == ("max_pool", [2, 3, 8, 9])  # ceil_mode: the traced shape says
    assert mp["params"] == {"dims": 2, "ceil_mode": True, "k0": 3, "k1": 3, "s0": 2, "s1": 2, "p0": 1, "p1": 1,
                            "d0": 2, "d1": 1, "return_indices": False}
    assert (ap["op"], ap["params"]["s0"], ap["params"]["d1"], ap["params"]["count_include_pad"]) == ("avg_pool", 4, 1, True)


def test_convolution_modules_give_their_window_groups_and_parameters(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(2, 4, 16, 20)]

def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 4, kernel_size=(3, 5), stride=(1, 2), padding=(1, 0), dilation=(2, 1), groups=4)

    def forward(self, x):
        return self.dw(x)
''', footer)
    (conv,) = ops(graph)
    assert (conv["op"], conv["shape"]) == ("conv", [2, 4, 14, 8])
    assert conv["params"] == {"dims": 2, "groups": 4, "in_channels": 4, "out_channels": 4, "has_bias": True,
                              "k0": 3, "k1": 5, "s0": 1, "s1": 2, "p0": 1, "p1": 0, "d0": 2, "d1": 1}
    weight, bias = (graph["nodes"][a["ref"]] for a in conv["args"][1:])
    assert (weight["op"], weight["shape"], bias["op"], bias["shape"]) == ("param", [4, 1, 3, 5], "param", [4])


def test_transposed_convolutions_are_their_own_op_with_output_padding(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(2, 4, 5, 6)]

def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 6, kernel_size=(3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                     dilation=(1, 2), groups=2, bias=False)

    def forward(self, x):
        return self.up(x)
''', footer)
    (conv,) = ops(graph)
    # (5 - 1) * 2 - 2 + 1 * 2 + 1 + 1 = 10 and (6 - 1) * 3 - 0 + 2 * 1 + 2 + 1 = 20
    assert (conv["op"], conv["shape"]) == ("conv_transpose", [2, 6, 10, 20])
    assert conv["params"] == {"dims": 2, "groups": 2, "in_channels": 4, "out_channels": 6, "has_bias": False,
                              "k0": 3, "k1": 2, "s0": 2, "s1": 3, "p0": 1, "p1": 0, "d0": 1, "d1": 2,
                              "o0": 1, "o1": 2}
    (weight,) = (graph["nodes"][a["ref"]] for a in conv["args"][1:])
    assert (weight["op"], weight["shape"]) == ("param", [4, 3, 3, 2])


def test_unsqueeze_is_a_known_view(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        return x[:, 0].unsqueeze(1) * torch.unsqueeze(x, 0)
''')
    nodes = by_name(graph)
    assert (nodes["unsqueeze"]["op"], nodes["unsqueeze"]["params"], nodes["unsqueeze"]["shape"]) == \
        ("unsqueeze", {"dim": 1}, [4, 1])
    assert nodes["unsqueeze_1"]["params"] == {"dim": 0}


def test_cross_entropy_binds_its_defaults(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(4, 8), torch.randint(0, 8, (4,))]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, p, t):
        return F.cross_entropy(p, t)
''', footer)
    ce = ops(graph)[0]
    assert (ce["op"], ce["args"], ce["shape"]) == ("cross_entropy", [{"ref": 0}, {"ref": 1}], [])
    assert ce["params"] == {"weight": None, "size_average": None, "ignore_index": -100, "reduce": None,
                            "reduction": "mean", "label_smoothing": 0.0}
    assert graph["nodes"][1]["dtype"] == "int64"


LINEAR_FOOTER = '''
def get_inputs():
    return [torch.rand(4, 8)]


def get_init_inputs():
    return []
'''


def test_linear_module_takes_its_weight_and_bias_as_parameter_nodes(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)
        self.bias = nn.Parameter(torch.randn(6))

    def forward(self, x):
        x = self.fc(x)
        original = x.clone().detach()
        return torch.sigmoid(x + self.bias) * 2.0 + original
''', LINEAR_FOOTER)
    assert graph["traced"]
    assert graph["params"] == ["bias", "fc.weight", "fc.bias"]
    nodes = graph["nodes"]
    assert [n["id"] for n in nodes] == list(range(len(nodes)))
    linear = next(n for n in nodes if n["op"] == "linear")
    assert linear["params"] == {"has_bias": True}
    assert linear["shape"] == [4, 6] and linear["dtype"] == "float32"
    x, weight, bias = (nodes[a["ref"]] for a in linear["args"])
    assert x["op"] == "input"
    assert (weight["op"], weight["index"], weight["shape"]) == ("param", 2, [6, 8])
    assert (bias["op"], bias["index"], bias["shape"]) == ("param", 3, [6])
    # The residual really is the product itself: clone and detach are identities of the linear node.
    idents = [n for n in nodes if n["op"] == "identity"]
    assert len(idents) == 2 and idents[0]["args"] == [{"ref": linear["id"]}]
    assert [n["op"] for n in ops(graph)] == ["linear", "identity", "identity", "add", "sigmoid", "mul", "add"]


def test_linear_without_bias_and_the_functional_form(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6, bias=False)
        self.w = nn.Parameter(torch.randn(5, 6))

    def forward(self, x):
        return F.linear(self.fc(x), self.w, bias=None) + F.linear(self.fc(x), weight=self.w)
''', LINEAR_FOOTER)
    linears = [n for n in graph["nodes"] if n["op"] == "linear"]
    assert len(linears) == 4
    assert linears[0]["params"] == {"has_bias": False} and len(linears[0]["args"]) == 2
    functional = [n for n in linears if graph["nodes"][n["args"][1]["ref"]].get("param") == "w"]
    assert len(functional) == 2 and all(len(n["args"]) == 2 for n in functional)
    assert functional[0]["shape"] == [4, 5]


def test_logsumexp_and_the_values_of_a_max_pair(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        m = torch.max(x, dim=1, keepdim=True).values - x.min(1).indices.unsqueeze(1)
        return torch.logsumexp(m, dim=1, keepdim=True) + x.logsumexp((1,))[:, None]
''')
    nodes = ops(graph)
    pair = next(n for n in nodes if n["op"] == "max")
    values = next(n for n in nodes if n["op"] == "getitem" and n["args"] == [{"ref": pair["id"]}])
    assert values["params"] == {"index": 0} and values["shape"] == [4, 1]
    low = next(n for n in nodes if n["op"] == "min")
    indices = next(n for n in nodes if n["op"] == "getitem" and n["args"] == [{"ref": low["id"]}])
    assert indices["params"] == {"index": 1} and indices["dtype"] == "int64"
    lse = [n for n in nodes if n["op"] == "logsumexp"]
    assert [n["params"] for n in lse] == [{"dim": 1, "keepdim": True}, {"dim": 1, "keepdim": False}]


def test_reductions_over_several_dimensions_keep_the_list(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(2, 3, 4, 5)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, x):
        a = torch.mean(x, dim=(2, 3), keepdim=True)
        b = x.sum([1, -1])
        c = torch.logsumexp(x, dim=(0, 1))
        d = torch.amax(x, (1, 2, 3))
        e = torch.flip(x, (1, 2))
        return a, b, c, d, e
''', footer)
    nodes = by_name(graph)
    assert (nodes["mean"]["op"], nodes["mean"]["params"]) == ("mean", {"dim": [2, 3], "keepdim": True, "dtype": None})
    assert nodes["mean"]["shape"] == [2, 3, 1, 1]
    assert (nodes["sum_1"]["params"]["dim"], nodes["sum_1"]["shape"]) == ([1, -1], [2, 4])
    assert nodes["logsumexp"]["params"]["dim"] == [0, 1]
    assert nodes["amax"]["params"]["dim"] == [1, 2, 3]
    # Other ops with several dimensions stay refused, with the reason.
    assert (nodes["flip"]["known"], nodes["flip"]["note"]) == (False, "flip over 2 dimensions at once")


def test_global_average_pooling_is_a_mean_over_the_pooled_dimensions(tmp_path):
    footer = '''
def get_inputs():
    return [torch.rand(2, 3, 4, 5, 6)]


def get_init_inputs():
    return []
'''
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.gap3 = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.gap1 = nn.AdaptiveAvgPool1d(1)
        self.pool2 = nn.AdaptiveAvgPool3d(2)

    def forward(self, x):
        a = self.gap3(x)
        x4 = x.flatten(1, 2)
        b = F.adaptive_avg_pool2d(x4, 1)
        c = F.adaptive_avg_pool2d(x4, output_size=(1, 1))
        d = self.gap1(x.flatten(2))
        e = self.pool2(x)
        f = F.adaptive_avg_pool2d(x4, (1, 2))
        return a, b, c, d, e, f
''', footer)
    nodes = by_name(graph)
    a = nodes["gap3"]
    assert (a["op"], a["params"], a["shape"]) == ("mean", {"dim": [2, 3, 4], "keepdim": True, "dtype": None},
                                                  [2, 3, 1, 1, 1])
    b = nodes["adaptive_avg_pool2d"]
    assert (b["op"], b["params"]["dim"], b["shape"]) == ("mean", [2, 3], [2, 12, 1, 1])
    assert b["args"] == [{"ref": nodes["flatten"]["id"]}]
    assert nodes["adaptive_avg_pool2d_1"]["params"]["dim"] == [2, 3]
    d = nodes["gap1"]
    assert (d["op"], d["params"], d["shape"]) == ("mean", {"dim": 2, "keepdim": True, "dtype": None}, [2, 3, 1])
    # Any other output size is not a mean: refused with the reason.
    e = nodes["pool2"]
    assert (e["op"], e["known"]) == ("adaptive_avg_pool", False)
    assert e["note"] == "adaptive_avg_pool3d to output size 2 (only 1, a global average, is traced: as a mean)"
    f = nodes["adaptive_avg_pool2d_2"]
    assert (f["known"], f["note"]) == (False, "adaptive_avg_pool2d to output size (1, 2) (only 1, a global average, "
                                              "is traced: as a mean)")


ATTENTION_FOOTER = '''
def get_inputs():
    return [torch.rand(2, 3, 16, 8), torch.rand(2, 3, 16, 8), torch.rand(2, 3, 16, 8), torch.rand(16, 16)]


def get_init_inputs():
    return []
'''


def test_scaled_dot_product_attention_is_one_op_with_its_arguments_bound(tmp_path):
    graph = trace(tmp_path, '''
class Model(nn.Module):
    def forward(self, q, k, v, m):
        a = F.scaled_dot_product_attention(q, k, v)
        b = F.scaled_dot_product_attention(q, k, v, m, 0.1, scale=0.5)
        return a, b
''', ATTENTION_FOOTER)
    assert graph["traced"]
    a, b = ops(graph)
    assert a["op"] == b["op"] == "scaled_dot_product_attention"
    assert a["args"] == [{"ref": 0}, {"ref": 1}, {"ref": 2}]
    assert a["params"] == {"has_attn_mask": False, "dropout_p": 0.0, "is_causal": False, "scale": None,
                           "enable_gqa": False}
    assert a["shape"] == [2, 3, 16, 8]
    # a tensor mask is an operand (the C++ lowering refuses it by name); the numbers keep their values
    assert b["args"] == [{"ref": 0}, {"ref": 1}, {"ref": 2}, {"ref": 3}]
    assert b["params"] == {"has_attn_mask": True, "dropout_p": 0.1, "is_causal": False, "scale": 0.5,
                           "enable_gqa": False}
