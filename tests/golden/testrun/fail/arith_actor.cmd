run tests/golden/testrun/trees/run/arith_actor.bt
