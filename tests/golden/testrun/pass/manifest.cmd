test tests/golden/testrun/trees/manifest
