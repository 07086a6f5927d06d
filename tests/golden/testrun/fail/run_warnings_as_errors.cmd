run --warnings-as-errors tests/golden/testrun/trees/run/warns.bt
