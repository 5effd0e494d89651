"""Real texts with several labels, for the multi-label classifier's tests: standard-library docstring sentences and
their topics (`keras_bert3_demo.docstring_topics`), every other text two sentences of different topics joined, with
both topics as its labels."""

from keras_bert3_demo.docstring_topics import docstring_topics


def multi_topic_texts(split: str, count: int) -> tuple[list[str], list[list[str]]]:
    """`count` texts of `split` ("train" or "test") and each one's topics (sorted): one sentence and its topic, then
    two sentences of different topics and both, in turn."""
    topics = docstring_topics()
    names = topics["class_names"]
    sentences, labels = topics[f"{split}_texts"], [names[i] for i in topics[f"{split}_labels"]]
    texts, topic_lists, i = [], [], 0
    while len(texts) < count and i + 1 < len(sentences):
        if len(texts) % 2 == 0 or labels[i] == labels[i + 1]:
            texts.append(sentences[i])
            topic_lists.append([labels[i]])
            i += 1
        else:
            texts.append(f"{sentences[i]} {sentences[i + 1]}")
            topic_lists.append(sorted({labels[i], labels[i + 1]}))
            i += 2
    return texts, topic_lists
