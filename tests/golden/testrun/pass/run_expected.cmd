run tests/golden/testrun/trees/run/expected.bt
