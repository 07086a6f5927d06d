test tests/golden/testrun/trees/lifecycle/fixture_test.bt
