"""The bad-input corpus: broken inputs for every command, each run through the real CLI (see
tests/project/test_bad_input_corpus.py)."""
