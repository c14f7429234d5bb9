"""The bad-input corpus: broken inputs for every command, each run through the real CLI (see test_corpus.py)."""
