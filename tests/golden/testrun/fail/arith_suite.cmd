test tests/golden/testrun/trees/arith
