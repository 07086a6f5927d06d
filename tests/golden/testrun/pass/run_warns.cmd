run tests/golden/testrun/trees/run/warns.bt
