test --warnings-as-errors tests/golden/testrun/trees/checked
