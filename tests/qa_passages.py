"""Questions on real passages of Python's reference documentation (several
longer than a 128-token window, so the document stride matters), and the
window lengths the question-answering tests use."""

from pydoc_data import topics

LENGTHS = {"sequence_length": 128, "doc_stride": 32, "max_query_length": 32}

QUESTIONS = [
    ("for", "What does the for statement iterate over?"),
    ("while", "When is the else clause executed?"),
    ("if", "How is the suite selected?"),
    ("with", "What does the with statement wrap?"),
    ("try", "What does the try statement specify?"),
    ("import", "How many steps does the basic import statement take?"),
    ("lambda", "What do lambda expressions create?"),
    ("assert", "What are assert statements a convenient way to do?"),
    ("return", "What does return leave?"),
    ("pass", "What is pass?"),
    ("global", "What is the global statement?"),
    ("del", "How is deletion of a target list defined?"),
]


def passages() -> list[tuple[str, str]]:
    """(question, passage) pairs, each passage the first 1,500 characters of its topic."""
    return [(question, topics.topics[key][:1500]) for key, question in QUESTIONS]
