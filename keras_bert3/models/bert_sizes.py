"""The standard BERT sizes: tiny to medium from Turc et al. 2019 ("Well-Read
Students Learn Better"), base and large from Devlin et al. 2019."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class BertSize:
    """The shape of one standard BERT; heads are 64 wide, the FFN 4x hidden."""

    num_layers: int
    hidden_dim: int

    @property
    def num_heads(self) -> int:
        return self.hidden_dim // 64

    @property
    def intermediate_dim(self) -> int:
        return 4 * self.hidden_dim

    def backbone_kwargs(self) -> dict:
        return dict(
            num_layers=self.num_layers,
            num_heads=self.num_heads,
            hidden_dim=self.hidden_dim,
            intermediate_dim=self.intermediate_dim,
        )


BERT_SIZES = {
    "tiny": BertSize(num_layers=2, hidden_dim=128),
    "mini": BertSize(num_layers=4, hidden_dim=256),
    "small": BertSize(num_layers=4, hidden_dim=512),
    "medium": BertSize(num_layers=8, hidden_dim=512),
    "base": BertSize(num_layers=12, hidden_dim=768),
    "large": BertSize(num_layers=24, hidden_dim=1024),
}

# Vocabulary size of Google's English uncased BERT vocabulary.
BERT_UNCASED_VOCABULARY_SIZE = 30522


def get_bert_size(name: str) -> BertSize:
    """Returns the `BertSize` called `name` ("tiny", ..., "large")."""
    if name not in BERT_SIZES:
        raise ValueError(f"Unknown BERT size {name!r}; choose one of {list(BERT_SIZES)}.")
    return BERT_SIZES[name]
