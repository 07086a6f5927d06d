test tests/golden/testrun/trees/nowhere
