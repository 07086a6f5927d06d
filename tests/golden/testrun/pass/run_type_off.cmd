run --diagnostics type=off tests/golden/testrun/trees/run/warns.bt
