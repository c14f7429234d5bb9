"""judgewise's tests: a folder per package of src/judgewise, project/ for whole-project checks, support/ for helpers."""
