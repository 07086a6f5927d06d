test tests/golden/testrun/trees/ignored
