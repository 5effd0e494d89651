"""Configs that hold other Keras objects (a task's backbone, a preprocessor's tokenizer): `get_config`
returns `{**serialized(self, ("backbone",)), ...}`, `from_config` calls `cls(**deserialized(config, ("backbone",)))`."""

import keras


def serialized(obj, names) -> dict:
    """The attributes `names` of `obj`, each as its Keras serialization."""
    return {name: keras.saving.serialize_keras_object(getattr(obj, name)) for name in names}


def deserialized(config: dict, names) -> dict:
    """A copy of `config` whose entries `names` are rebuilt Keras objects."""
    return {**config, **{name: keras.saving.deserialize_keras_object(config[name]) for name in names}}
