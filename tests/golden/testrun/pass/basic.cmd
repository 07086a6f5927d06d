test tests/golden/testrun/trees/basic
