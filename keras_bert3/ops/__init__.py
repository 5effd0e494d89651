"""Backend-specific fast versions of `keras.ops` computations, one idea a file, each beside its
plain `keras.ops` reference (`split_heads`, `split_heads_reference`; tests/ops checks each pair
agrees). Layers, models and optimizers call them by name and keep one path for every backend."""

from keras_bert3.ops.adam_update import adam_update
from keras_bert3.ops.adam_update import adam_update_reference
from keras_bert3.ops.dense_product import dense_product
from keras_bert3.ops.dense_product import dense_product_reference
from keras_bert3.ops.dropout import dropout
from keras_bert3.ops.dropout import dropout_reference
from keras_bert3.ops.feed_forward_activation import feed_forward_activation
from keras_bert3.ops.feed_forward_activation import feed_forward_activation_reference
from keras_bert3.ops.layer_norm import layer_norm
from keras_bert3.ops.layer_norm import layer_norm_reference
from keras_bert3.ops.masked_softmax import masked_softmax
from keras_bert3.ops.masked_softmax import masked_softmax_reference
from keras_bert3.ops.sparse_cross_entropy import gathered_cross_entropy_with_hits
from keras_bert3.ops.sparse_cross_entropy import sparse_cross_entropy_with_hits
from keras_bert3.ops.sparse_cross_entropy import sparse_cross_entropy_with_hits_reference
from keras_bert3.ops.split_heads import split_heads
from keras_bert3.ops.split_heads import split_heads_reference
from keras_bert3.ops.token_rows import from_token_rows
from keras_bert3.ops.token_rows import token_rows
from keras_bert3.ops.token_rows import token_rows_reference
