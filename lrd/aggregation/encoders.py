"""Encoders that turn a model's stack of pooled layer states into one representation.

Every module maps ``x`` of shape ``(batch, S, d)`` (``S = L + 1`` states, embeddings first, as
:func:`lrd.engine.extract` returns them transposed) to an embedding ``(batch, out_dim)``; a task head
sits on top (:func:`make_method`). The Cayley-Encoder and the FC-Encoder are one module,
:class:`GraphEncoder`, on two graphs; the others are the paper's baselines.

References
----------
Ulanovski, Blyachman and Bechler-Speicher, "Improving LLM Final Representations with
Inter-Layer Geometry", arXiv:2603.22665 (NeurIPS 2026), sections 3-4, and its code
(tomulanovski/ILSE ``gnn_models.py``; the ``ilge`` package). Peters et al. (2018) for the
softmax-weighted layer sum (ELMo); Zaheer et al. (2017) for DeepSets; ElNokrashy et al. (2024),
arXiv:2209.15168, for depth-wise attention (DWAtt).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from lrd.aggregation.cayley import cayley_graph, complete_graph, ilse_layout, layer_to_node

METHODS = ("last", "best", "mean", "elmo", "mlp", "deepset", "dwatt", "fc", "cayley")
METHOD_LABELS = {"last": "Last layer", "best": "Best layer", "mean": "Mean of layers",
                 "elmo": "Weighted (ELMo)", "mlp": "MLP (last layer)", "deepset": "DeepSet",
                 "dwatt": "DWAtt", "fc": "FC-Encoder", "cayley": "Cayley-Encoder"}


def _check_states(x: torch.Tensor, num_states: int, dim: int) -> None:
    if x.dim() != 3 or x.shape[1] != num_states or x.shape[2] != dim:
        raise ValueError(f"expected x of shape (batch, {num_states}, {dim}), got {tuple(x.shape)}")


def adjacency(edge_index, num_nodes: int) -> torch.Tensor:
    """Dense in-adjacency ``A[v, u]`` = number of edges ``u -> v`` (edge_index rows: source, target)."""
    edge_index = torch.as_tensor(np.asarray(edge_index), dtype=torch.long)
    a = torch.zeros(num_nodes, num_nodes)
    a.index_put_((edge_index[1], edge_index[0]), torch.ones(edge_index.shape[1]), accumulate=True)
    return a


def propagate(h: torch.Tensor, edge_index: torch.Tensor, *, weight: torch.Tensor | None = None,
              dense: torch.Tensor | None = None) -> torch.Tensor:
    r"""Sum of incoming messages, :math:`m_v = \sum_{u \to v} w_{uv} h_u`, for ``h`` (batch, n, hidden).

    With ``dense`` (an (n, n) matrix from :func:`adjacency`, possibly normalised) this is one
    matrix product; otherwise messages are gathered per edge, shape (batch, E, hidden), and
    scatter-added onto their targets (what torch_geometric does), so memory grows with E.
    """
    if dense is not None:
        return torch.einsum("vu,buh->bvh", dense, h)
    msg = h.index_select(1, edge_index[0])
    if weight is not None:
        msg = msg * weight[:, None]
    return torch.zeros_like(h).index_add_(1, edge_index[1], msg)


def gcn_norm(edge_index: torch.Tensor, num_nodes: int) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Edges with self-loops and weights :math:`(d_u d_v)^{-1/2}`, :math:`d` = in-degree + 1 (Kipf & Welling)."""
    loops = torch.arange(num_nodes).repeat(2, 1)
    edges = torch.cat([edge_index, loops], dim=1)
    deg = torch.zeros(num_nodes).index_add_(0, edges[1], torch.ones(edges.shape[1]))
    return edges, deg[edges[0]].rsqrt() * deg[edges[1]].rsqrt()


class GraphEncoder(nn.Module):
    r"""GIN (or GCN) message passing over a graph whose nodes hold the layers' states.

    .. math::
        h_v^{(0)} = \mathrm{drop}(\mathrm{ReLU}(W x_v + b)), \quad
        h_v^{(k+1)} = \mathrm{drop}\big(\mathrm{LN}\big(\mathrm{MLP}\big((1 + \epsilon) h_v^{(k)}
            + \textstyle\sum_{u \to v} h_u^{(k)}\big)\big)\big), \quad
        z = \frac{1}{S} \sum_{l} h_{\pi(l)}^{(K)}

    (GCN: :math:`h^{(k+1)} = \mathrm{drop}(\mathrm{ReLU}(\mathrm{LN}(\hat A h^{(k)} \Theta + c)))`,
    :math:`\hat A = D^{-1/2}(A + I)D^{-1/2}`.) Layer ``l`` sits on node ``pi(l)``
    (``layer_nodes``); the other nodes are virtual: their input is zero, they pass messages, and
    they never enter the mean pool.

    Parameters
    ----------
    dim : int
        Width ``d`` of each state.
    edge_index : array of shape (2, E)
        Directed edges (source, target) of one graph.
    num_nodes : int
        Nodes of the graph (``>= len(layer_nodes)``).
    layer_nodes : array of shape (S,)
        Node of each layer.
    hidden : int
        Width after the input projection (256 in the paper).
    num_layers : int
        Message-passing layers K (the paper searches 1 and 2; 1 is its recommended default).
    conv : {"gin", "gcn"}
    gin_mlp_layers : int
        Linear+ReLU blocks inside each GIN layer.
    dropout : float
    train_eps : bool
        Learn GIN's self weight :math:`\epsilon` (off in the ``ilge`` package, on in the ILSE
        trainer for Cayley graphs).
    positional : bool
        Add a learned vector per layer after the projection (our ablation; not in the paper's code).
    aggregation : {"dense", "scatter"}
        How neighbour sums are computed (:func:`propagate`): one product with the (n, n)
        adjacency (fast for layer graphs), or per-edge gather and scatter-add (as
        torch_geometric's ``GINConv``/``GCNConv``; memory grows with the number of edges).
        Both give the same numbers (tested, also against torch_geometric).
    """

    def __init__(self, dim: int, edge_index, num_nodes: int, layer_nodes, *, hidden: int = 256,
                 num_layers: int = 1, conv: str = "gin", gin_mlp_layers: int = 1, dropout: float = 0.1,
                 train_eps: bool = False, positional: bool = False, aggregation: str = "dense"):
        super().__init__()
        edge_index = torch.as_tensor(np.asarray(edge_index), dtype=torch.long)
        layer_nodes = torch.as_tensor(np.asarray(layer_nodes), dtype=torch.long)
        if edge_index.dim() != 2 or edge_index.shape[0] != 2:
            raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
        if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= num_nodes):
            raise ValueError(f"edge_index refers to nodes outside 0..{num_nodes - 1}")
        if len(torch.unique(layer_nodes)) != len(layer_nodes) or layer_nodes.max() >= num_nodes:
            raise ValueError(f"layer_nodes must be distinct nodes below {num_nodes}")
        if conv not in ("gin", "gcn"):
            raise ValueError(f"conv must be 'gin' or 'gcn', got {conv!r}")
        if aggregation not in ("dense", "scatter"):
            raise ValueError(f"aggregation must be 'dense' or 'scatter', got {aggregation!r}")
        self.dim, self.num_nodes, self.out_dim, self.conv_type = dim, num_nodes, hidden, conv
        self.aggregation = aggregation
        weight = None
        if conv == "gcn":
            edge_index, weight = gcn_norm(edge_index, num_nodes)
        dense = adjacency(edge_index, num_nodes)
        if weight is not None:
            dense = torch.zeros(num_nodes, num_nodes).index_put_((edge_index[1], edge_index[0]), weight,
                                                                  accumulate=True)
        self.register_buffer("edge_index", edge_index, persistent=False)
        self.register_buffer("edge_weight", weight, persistent=False)
        self.register_buffer("dense", dense, persistent=False)
        self.register_buffer("layer_nodes", layer_nodes, persistent=False)
        self.proj = nn.Linear(dim, hidden)
        self.pos = nn.Parameter(torch.zeros(len(layer_nodes), hidden)) if positional else None
        self.drop = nn.Dropout(dropout)
        self.mlps = nn.ModuleList()
        for _ in range(num_layers):
            if conv == "gcn":
                self.mlps.append(nn.Linear(hidden, hidden))
            else:
                self.mlps.append(nn.Sequential(*[m for _ in range(gin_mlp_layers)
                                                 for m in (nn.Linear(hidden, hidden), nn.ReLU())]))
        self.eps = nn.Parameter(torch.zeros(num_layers), requires_grad=train_eps)
        self.norms = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(num_layers)])

    def node_features(self, x: torch.Tensor) -> torch.Tensor:
        """Input layer: (batch, S, d) -> (batch, num_nodes, hidden); virtual nodes get ReLU(b)."""
        _check_states(x, len(self.layer_nodes), self.dim)
        real = self.proj(x)
        if self.pos is not None:
            real = real + self.pos
        h = self.proj.bias.expand(x.shape[0], self.num_nodes, -1)  # W 0 + b for virtual nodes
        h = h.index_copy(1, self.layer_nodes, real)
        return self.drop(F.relu(h))

    def message_passing(self, h: torch.Tensor) -> torch.Tensor:
        """K layers of GIN/GCN on node features (batch, num_nodes, hidden)."""
        dense = self.dense if self.aggregation == "dense" else None
        for k, (mlp, norm) in enumerate(zip(self.mlps, self.norms)):
            if self.conv_type == "gcn":
                h = F.relu(norm(propagate(mlp(h) - mlp.bias, self.edge_index, weight=self.edge_weight,
                                          dense=dense) + mlp.bias))
            else:
                h = norm(mlp((1 + self.eps[k]) * h + propagate(h, self.edge_index, dense=dense)))
            h = self.drop(h)
        return h

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.message_passing(self.node_features(x))
        return h.index_select(1, self.layer_nodes).mean(1)


class _WithoutEmbeddings(GraphEncoder):
    """A :class:`GraphEncoder` over states 1..L: the embedding state (index 0) is dropped."""

    def node_features(self, x: torch.Tensor) -> torch.Tensor:
        return super().node_features(x[:, 1:])


def cayley_encoder(dim: int, num_states: int, *, mapping_seed: int | None = None,
                   reference_duplicates: bool = False, keep_embedding_layer: bool = True, **kwargs) -> GraphEncoder:
    """:class:`GraphEncoder` on the smallest SL(2, Z_n) Cayley graph with ``num_states`` nodes.

    ``keep_embedding_layer=False`` is tomulanovski/ILSE's default dataset configuration: when
    ``num_states`` is one more than some |SL(2, Z_n)|, the embedding state is dropped and the
    other states fill that graph exactly (:func:`lrd.aggregation.cayley.ilse_layout`).
    """
    n, _, first = ilse_layout(num_states, keep_embedding_layer=keep_embedding_layer)
    graph = cayley_graph(n, reference_duplicates=reference_duplicates)
    kind = _WithoutEmbeddings if first else GraphEncoder
    return kind(dim, graph.edge_index, graph.num_nodes, layer_to_node(num_states - first, seed=mapping_seed), **kwargs)


def fc_encoder(dim: int, num_states: int, **kwargs) -> GraphEncoder:
    """:class:`GraphEncoder` on the complete graph of the ``num_states`` layers (the FC-Encoder)."""
    return GraphEncoder(dim, complete_graph(num_states), num_states, np.arange(num_states), **kwargs)


class LayerSelect(nn.Module):
    """One layer's state (``layer=-1``: the last), optionally through a linear map."""

    def __init__(self, dim: int, num_states: int, layer: int = -1):
        super().__init__()
        if not -num_states <= layer < num_states:
            raise ValueError(f"layer {layer} out of range for {num_states} states")
        self.num_states, self.dim, self.layer, self.out_dim = num_states, dim, layer, dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        return x[:, self.layer]


class LayerMean(nn.Module):
    """Mean of all states (no parameters)."""

    def __init__(self, dim: int, num_states: int):
        super().__init__()
        self.num_states, self.dim, self.out_dim = num_states, dim, dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        return x.mean(1)


class ScalarMix(nn.Module):
    r"""ELMo-style softmax-weighted sum of the states, :math:`z = \sum_l \mathrm{softmax}(w)_l x_l`."""

    def __init__(self, dim: int, num_states: int):
        super().__init__()
        self.num_states, self.dim, self.out_dim = num_states, dim, dim
        self.weights = nn.Parameter(torch.zeros(num_states))  # uniform mix at start

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        return torch.einsum("bsd,s->bd", x, torch.softmax(self.weights, 0))


def _mlp(dim: int, hidden: int, layers: int, dropout: float) -> nn.Sequential:
    mods: list[nn.Module] = []
    for i in range(layers):
        mods += [nn.Linear(dim if i == 0 else hidden, hidden), nn.ReLU(), nn.Dropout(dropout)]
    return nn.Sequential(*mods)


class LastLayerMLP(nn.Module):
    """MLP (``layers`` x Linear+ReLU+dropout, width ``hidden``) on the last layer's state."""

    def __init__(self, dim: int, num_states: int, *, hidden: int = 256, layers: int = 2, dropout: float = 0.1):
        super().__init__()
        self.num_states, self.dim, self.out_dim = num_states, dim, hidden
        self.net = _mlp(dim, hidden, layers, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        return self.net(x[:, -1])


class DeepSet(nn.Module):
    r"""DeepSet over the states as an unordered set: :math:`z = \rho(\sum_l \phi(x_l))`."""

    def __init__(self, dim: int, num_states: int, *, hidden: int = 256, dropout: float = 0.2, pooling: str = "sum"):
        super().__init__()
        if pooling not in ("sum", "mean"):
            raise ValueError(f"pooling must be 'sum' or 'mean', got {pooling!r}")
        self.num_states, self.dim, self.out_dim, self.pooling = num_states, dim, hidden, pooling
        self.phi, self.rho = _mlp(dim, hidden, 1, dropout), _mlp(hidden, hidden, 1, dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        h = self.phi(x)
        return self.rho(h.sum(1) if self.pooling == "sum" else h.mean(1))


class DWAtt(nn.Module):
    r"""Depth-wise attention (ElNokrashy et al., 2024) after a projection to ``hidden``.

    .. math::
        z_l = P x_l,\quad k_l = W_K p_l,\quad v_l = \mathrm{LN}_l(f_l(z_l)),\quad
        q = 1 + \mathrm{elu}(z_L + f_Q(z_L)),\quad
        h = z_L + \sum_l \mathrm{softmax}_l(q \cdot k_l)\, v_l

    with :math:`f(z) = U_2\,\mathrm{LN}(\mathrm{gelu}(U_1 z))` (bottleneck ``hidden / 2``) and
    learned layer positions :math:`p_l \in [0, 1]^{24}` (static keys).
    """

    def __init__(self, dim: int, num_states: int, *, hidden: int = 256, pos_dim: int = 24,
                 bottleneck: float = 0.5, dropout: float = 0.1):
        super().__init__()
        self.num_states, self.dim, self.out_dim = num_states, dim, hidden
        b = int(hidden * bottleneck)
        self.proj = nn.Linear(dim, hidden)
        self.pos = nn.Parameter(torch.rand(num_states, pos_dim))
        self.key = nn.Linear(pos_dim, hidden, bias=False)
        scale = 1 / np.sqrt(hidden)
        self.v_in_w = nn.Parameter(torch.empty(num_states, hidden, b).uniform_(-scale, scale))
        self.v_in_b = nn.Parameter(torch.zeros(num_states, b))
        self.v_out_w = nn.Parameter(torch.empty(num_states, b, hidden).uniform_(-1 / np.sqrt(b), 1 / np.sqrt(b)))
        self.v_out_b = nn.Parameter(torch.zeros(num_states, hidden))
        self.v_mid_w = nn.Parameter(torch.ones(num_states, b))  # per-layer norm inside f_l
        self.v_mid_b = nn.Parameter(torch.zeros(num_states, b))
        self.v_ln_w = nn.Parameter(torch.ones(num_states, hidden))
        self.v_ln_b = nn.Parameter(torch.zeros(num_states, hidden))
        self.query = nn.Sequential(nn.Linear(hidden, b), nn.GELU(), nn.LayerNorm(b), nn.Linear(b, hidden))
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        z = self.proj(x)  # (B, S, h)
        u = F.gelu(torch.einsum("bsh,shk->bsk", z, self.v_in_w) + self.v_in_b)
        u = F.layer_norm(u, u.shape[-1:]) * self.v_mid_w + self.v_mid_b
        v = torch.einsum("bsk,skh->bsh", u, self.v_out_w) + self.v_out_b
        v = F.layer_norm(v, v.shape[-1:]) * self.v_ln_w + self.v_ln_b
        last = z[:, -1]
        q = 1 + F.elu(last + self.query(last))
        att = self.drop(torch.softmax(q @ self.key(self.pos).T, dim=-1))  # (B, S)
        return last + torch.einsum("bs,bsh->bh", att, v)


class PerLayerProbe(nn.Module):
    """An independent linear map for every layer: ``(batch, S, d) -> (batch, S, out)``.

    The 'best single layer' baseline trains all S probes at once (each sees only its layer; the
    summed loss keeps their gradients separate) and keeps the one best on validation.
    """

    def __init__(self, dim: int, num_states: int, out: int):
        super().__init__()
        self.num_states, self.dim, self.groups = num_states, dim, num_states
        scale = 1 / np.sqrt(dim)
        self.weight = nn.Parameter(torch.empty(num_states, dim, out).uniform_(-scale, scale))
        self.bias = nn.Parameter(torch.empty(num_states, out).uniform_(-scale, scale))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_states(x, self.num_states, self.dim)
        return torch.einsum("bsd,sdo->bso", x, self.weight) + self.bias


class Classifier(nn.Module):
    """An encoder followed by a linear head (``(batch, S, d) -> (batch, classes)``)."""

    groups = 1

    def __init__(self, encoder: nn.Module, num_classes: int):
        super().__init__()
        self.encoder, self.head = encoder, nn.Linear(encoder.out_dim, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


class Embedder(nn.Module):
    """An encoder used as is (for similarity: the cosine of two embeddings is the prediction)."""

    groups = 1

    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)


def make_encoder(method: str, dim: int, num_states: int, *, hidden: int = 256, gnn_layers: int = 1,
                 conv: str = "gin", dropout: float = 0.1, positional: bool = False,
                 mapping_seed: int | None = None, reference_duplicates: bool = False,
                 keep_embedding_layer: bool = True, aggregation: str = "dense") -> nn.Module:
    """The encoder of one method (see :data:`METHODS`; ``best`` is built by :func:`make_method`)."""
    graph = dict(hidden=hidden, num_layers=gnn_layers, conv=conv, dropout=dropout, positional=positional,
                 aggregation=aggregation)
    builders = {
        "last": lambda: LayerSelect(dim, num_states, -1),
        "mean": lambda: LayerMean(dim, num_states),
        "elmo": lambda: ScalarMix(dim, num_states),
        "mlp": lambda: LastLayerMLP(dim, num_states, hidden=hidden, dropout=dropout),
        "deepset": lambda: DeepSet(dim, num_states, hidden=hidden),
        "dwatt": lambda: DWAtt(dim, num_states, hidden=hidden, dropout=dropout),
        "fc": lambda: fc_encoder(dim, num_states, **graph),
        "cayley": lambda: cayley_encoder(dim, num_states, mapping_seed=mapping_seed,
                                         reference_duplicates=reference_duplicates,
                                         keep_embedding_layer=keep_embedding_layer, **graph),
    }
    if method not in builders:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    return builders[method]()


def make_method(method: str, dim: int, num_states: int, num_classes: int | None, **kwargs) -> nn.Module:
    """A trainable model: classifier (``num_classes`` given) or embedder (``None``, similarity).

    ``best`` is a :class:`PerLayerProbe` (``groups = S``) with ``num_classes`` outputs.
    """
    if method == "best":
        if num_classes is None:
            raise ValueError("'best' for similarity is the raw cosine of one layer; it has nothing to train")
        return PerLayerProbe(dim, num_states, num_classes)
    encoder = make_encoder(method, dim, num_states, **kwargs)
    return Embedder(encoder) if num_classes is None else Classifier(encoder, num_classes)


def count_parameters(module: nn.Module) -> int:
    """Trainable parameters of a module."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
