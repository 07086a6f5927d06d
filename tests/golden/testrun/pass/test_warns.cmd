test tests/golden/testrun/trees/checked
