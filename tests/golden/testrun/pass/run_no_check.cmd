run --no-check tests/golden/testrun/trees/run/refused.bt
