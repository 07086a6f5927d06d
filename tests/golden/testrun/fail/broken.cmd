test tests/golden/testrun/trees/broken
