run tests/golden/testrun/trees/run/refused.bt
