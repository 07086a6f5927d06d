test tests/golden/testrun/trees/lifecycle
