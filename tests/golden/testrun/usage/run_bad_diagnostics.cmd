run --diagnostics dnu=loud tests/golden/testrun/trees/run/warns.bt
